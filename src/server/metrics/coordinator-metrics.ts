/**
 * The coordinators' metrics, counted at scrape time over the partitions this broker coordinates:
 * the group coordinator's (Kafka's kafka.coordinator.group:type=GroupMetadataManager gauges, as
 * the JMX exporter names them) and the transaction coordinator's (transactional ids by state;
 * Kafka has no MBean for these, so the names follow the same scheme under
 * kafka.coordinator.transaction:type=TransactionStateManager), and each one's partitions loading.
 */
import type { GroupCoordinator } from '../../coordinator/group/group-coordinator.js';
import { emptyGroupCounts, type GroupCounts } from '../../coordinator/group/group-counts.js';
import type { TxnCoordinator } from '../../coordinator/txn/txn-coordinator.js';
import { emptyTxnCounts } from '../../coordinator/txn/txn-counts.js';
import type { MetricsRegistry } from './registry.js';
import { statsGauge, one, type Sample } from './stats-families.js';

export function registerCoordinatorMetrics(registry: MetricsRegistry, groups: GroupCoordinator, txns: TxnCoordinator): void {
  const counts = emptyGroupCounts();
  let fresh = false;
  const current = (): GroupCounts => {
    if (!fresh) {
      groups.groupCounts(counts);
      fresh = true;
      setImmediate(() => {
        fresh = false;
      });
    }
    return counts;
  };
  const prefix = 'kafka_coordinator_group_groupmetadatamanager_';
  const gauge = (name: string, help: string, pick: (c: GroupCounts) => number): void => statsGauge(registry, prefix + name, help, () => one(pick(current())));
  gauge('numgroups', 'Consumer groups coordinated here.', (c) => c.groups);
  gauge('numgroupsstable', 'Groups coordinated here in state Stable.', (c) => c.stable);
  gauge('numgroupspreparingrebalance', 'Groups coordinated here in state PreparingRebalance.', (c) => c.preparingRebalance);
  gauge('numgroupscompletingrebalance', 'Groups coordinated here in state CompletingRebalance.', (c) => c.completingRebalance);
  gauge('numgroupsempty', 'Groups coordinated here in state Empty.', (c) => c.empty);
  gauge('numgroupsdead', 'Groups coordinated here in state Dead.', (c) => c.dead);
  gauge('numoffsets', 'Committed offsets held here (group, topic, partition).', (c) => c.offsets);
  gauge('partitionsloading', '__consumer_offsets partitions being loaded here.', (c) => c.loadingPartitions);

  const txnCounts = emptyTxnCounts();
  statsGauge(
    registry,
    'kafka_coordinator_transaction_transactionstatemanager_numtransactions',
    'Transactional ids coordinated here, by state (Ongoing: transactions open).',
    () => {
      txns.txnCounts(txnCounts);
      const samples: Sample[] = [];
      for (const [state, n] of txnCounts.byState) samples.push({ value: n, labels: { state } });
      return samples;
    },
  );
  statsGauge(registry, 'kafka_coordinator_transaction_transactionstatemanager_partitionsloading', '__transaction_state partitions being loaded here.', () => {
    txns.txnCounts(txnCounts);
    return one(txnCounts.loadingPartitions);
  });
}
