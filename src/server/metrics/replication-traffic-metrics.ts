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
 * All 0 on a single broker, which never follows. With shard workers (num.io.threads > 1, cluster
 * mode) every shard runs its own fetchers: the scrape sums their bytes and counts, and takes the
 * largest lag, from each shard's logManagerStats answer (one message per shard, shared with the
 * log families of the scrape).
 */
import type { ReplicaManager } from '../../replication/replica-manager.js';
import type { PartitionShards, ReplicationStats } from '../../replication/shards/partition-shards.js';
import { logStatsThisScrape, onShardWorkers } from './scrape-states.js';
import type { MetricsRegistry } from './registry.js';
import { one, statsCounter, statsGauge } from './stats-families.js';

/** Kafka's clientId of the replica fetchers' manager (Replica; ReplicaAlterLogDirs is not in Fjord). */
const REPLICA = Object.freeze({ clientId: 'Replica' });

export function registerReplicationTrafficMetrics(registry: MetricsRegistry, replicaManager: ReplicaManager, shards?: PartitionShards): void {
  const local = (): ReplicationStats => ({
    bytesIn: replicaManager.replicationBytesIn,
    maxLag: replicaManager.replicaFetchers?.maxLag ?? 0,
    failedPartitions: replicaManager.replicaFetchers?.failedPartitionsCount ?? 0,
  });
  const stats = (): ReplicationStats | Promise<ReplicationStats> => (onShardWorkers(shards) ? logStatsThisScrape(shards).then(summed) : local());
  const read =
    <T>(pick: (s: ReplicationStats) => T): (() => T | Promise<T>) =>
    () => {
      const s = stats();
      return s instanceof Promise ? s.then(pick) : pick(s);
    };
  statsCounter(
    registry,
    'kafka_server_brokertopicmetrics_replicationbytesin_total',
    'Record bytes appended here as a follower, fetched from leaders (ReplicationBytesInPerSec)',
    read((s) => one(s.bytesIn)),
  );
  statsGauge(
    registry,
    'kafka_server_replicafetchermanager_maxlag',
    'Largest lag in records of a partition followed here, as of its last fetch (MaxLag).',
    read((s) => [{ value: s.maxLag, labels: REPLICA }]),
  );
  statsGauge(
    registry,
    'kafka_server_replicafetchermanager_failedpartitionscount',
    'Partitions followed here whose fetching failed until their next LeaderAndIsr (FailedPartitionsCount).',
    read((s) => [{ value: s.failedPartitions, labels: REPLICA }]),
  );
}

/** Every shard's fetchers as one: bytes and given-up partitions summed, the largest lag. */
function summed(all: readonly { replication?: ReplicationStats }[]): ReplicationStats {
  const out: ReplicationStats = { bytesIn: 0, maxLag: 0, failedPartitions: 0 };
  for (const { replication: r } of all) {
    if (!r) continue;
    out.bytesIn += r.bytesIn;
    out.maxLag = Math.max(out.maxLag, r.maxLag);
    out.failedPartitions += r.failedPartitions;
  }
  return out;
}
