/**
 * Replication as the follower side sees it, named as the JMX exporter names Kafka's MBeans:
 * - kafka_server_brokertopicmetrics_replicationbytesin_total: the record bytes this broker's
 *   replica fetchers appended as a follower (Kafka's ReplicationBytesInPerSec, for all topics, no
 *   topic label, as Kafka keeps it). Its leader-side twin, replicationbytesout_total (bytes
 *   answered to followers' fetches), is counted by the Fetch handler with the other broker topic
 *   metrics (topic-metrics.ts).
 * - kafka_server_replicafetchermanager_maxlag{clientId="Replica"} and _failedpartitionscount:
 *   Kafka's ReplicaFetcherManager gauges (the largest lag in records of a partition followed here,
 *   as of its last fetch; partitions given up until their next LeaderAndIsr).
 * All 0 on a single broker, which never follows.
 */
import type { ReplicaManager } from '../../replication/replica-manager.js';
import type { MetricsRegistry } from './registry.js';
import { one, statsCounter, statsGauge } from './stats-families.js';

/** Kafka's clientId of the replica fetchers' manager (Replica; ReplicaAlterLogDirs is not in Fjord). */
const REPLICA = Object.freeze({ clientId: 'Replica' });

export function registerReplicationTrafficMetrics(registry: MetricsRegistry, replicaManager: ReplicaManager): void {
  statsCounter(
    registry,
    'kafka_server_brokertopicmetrics_replicationbytesin_total',
    'Record bytes appended here as a follower, fetched from leaders (ReplicationBytesInPerSec)',
    () => one(replicaManager.replicationBytesIn),
  );
  statsGauge(
    registry,
    'kafka_server_replicafetchermanager_maxlag',
    'Largest lag in records of a partition followed here, as of its last fetch (MaxLag).',
    () => [{ value: replicaManager.replicaFetchers?.maxLag ?? 0, labels: REPLICA }],
  );
  statsGauge(
    registry,
    'kafka_server_replicafetchermanager_failedpartitionscount',
    'Partitions followed here whose fetching failed until their next LeaderAndIsr (FailedPartitionsCount).',
    () => [{ value: replicaManager.replicaFetchers?.failedPartitionsCount ?? 0, labels: REPLICA }],
  );
}
