/**
 * Replication traffic as the JMX exporter names Kafka's BrokerTopicMetrics meters for it:
 * kafka_server_brokertopicmetrics_replicationbytesin_total, the record bytes this broker's replica
 * fetchers appended as a follower (Kafka's ReplicationBytesInPerSec, for all topics, no topic
 * label, as Kafka keeps it). Its leader-side twin, replicationbytesout_total (bytes answered to
 * followers' fetches), is counted by the Fetch handler with the other broker topic metrics
 * (topic-metrics.ts). Both 0 on a single broker.
 */
import type { ReplicaManager } from '../../replication/replica-manager.js';
import type { MetricsRegistry } from './registry.js';
import { one, statsCounter } from './stats-families.js';

export function registerReplicationTrafficMetrics(registry: MetricsRegistry, replicaManager: ReplicaManager): void {
  statsCounter(
    registry,
    'kafka_server_brokertopicmetrics_replicationbytesin_total',
    'Record bytes appended here as a follower, fetched from leaders (ReplicationBytesInPerSec)',
    () => one(replicaManager.replicationBytesIn),
  );
}
