/**
 * kafka-exporter's topic and broker families (danielqsj/kafka_exporter), so that its dashboards
 * find them beside the consumer-lag ones:
 *   kafka_topic_partition_current_offset{topic,partition}        high watermark
 *   kafka_topic_partition_oldest_offset{topic,partition}         log start offset
 *   kafka_topic_partition_replicas{topic,partition}              replica count
 *   kafka_topic_partition_in_sync_replica{topic,partition}       in-sync replica count
 *   kafka_topic_partition_leader{topic,partition}                leader broker id
 *   kafka_topic_partition_under_replicated_partition{topic,partition}  1 when ISR < replicas
 *   kafka_topic_partition_leader_is_preferred{topic,partition}   1 when the leader is the first replica
 *   kafka_topic_partitions{topic}                                partition count
 *   kafka_brokers                                                live brokers
 * Each partition is exported by its leader only (every broker is scraped: one series per
 * partition), read from the replica manager at scrape time (no request, no refresh); the topic
 * count and the broker count by the active controller only (the single broker in embedded mode).
 * `metrics.partition.level.enable=false` drops the per-partition families.
 */
import { Gauge } from 'prom-client';
import type { MetadataStore } from '../../metadata/metadata-store.js';
import type { ReplicaManager } from '../../replication/replica-manager.js';
import type { Partition } from '../../replication/partition/partition.js';
import type { MetricsRegistry } from './registry.js';

export interface TopicPartitionMetricsSources {
  brokerId: number;
  metadata: MetadataStore;
  replicaManager: ReplicaManager;
  /** Whether this broker speaks for the whole cluster (the active controller; embedded: always). */
  isActiveController(): boolean;
  /** metrics.partition.level.enable */
  partitionLevel: boolean;
}

export function registerTopicPartitionMetrics(registry: MetricsRegistry, src: TopicPartitionMetricsSources): void {
  const registers = [registry];
  const brokers = new Gauge({
    name: 'kafka_brokers',
    help: 'Number of brokers in the cluster (from the active controller)',
    registers,
    collect() {
      this.set(src.metadata.brokers().length);
    },
  });
  // A gauge without labels always has a sample: only the controller's may reach the exposition.
  const allBrokers = brokers.get.bind(brokers);
  brokers.get = async () => {
    const m = await allBrokers();
    return src.isActiveController() ? m : { ...m, values: [] };
  };
  new Gauge({
    name: 'kafka_topic_partitions',
    help: 'Number of partitions of the topic (from the active controller)',
    labelNames: ['topic'],
    registers,
    collect() {
      this.reset();
      if (src.isActiveController()) for (const t of src.metadata.topics()) this.set({ topic: t.name }, t.partitions.length);
    },
  });
  if (!src.partitionLevel) return;

  /** The leader's view of each partition it leads, with the controller's replicas and ISR. */
  const led = (fn: (p: Partition, labels: { topic: string; partition: string }, replicas: readonly number[], isr: readonly number[]) => void): void => {
    for (const p of src.replicaManager.allPartitions()) {
      if (!p.isLeader) continue;
      // Embedded mode's partitions carry no replica set of their own: the metadata's is [self].
      const known = p.replicas.length > 0 ? undefined : src.metadata.topic(p.topic)?.partitions[p.partition];
      const replicas = known?.replicas ?? p.replicas;
      const isr = p.isr.length > 0 ? p.isr : (known?.isr ?? [src.brokerId]);
      fn(p, { topic: p.topic, partition: String(p.partition) }, replicas, isr);
    }
  };
  const family = (name: string, help: string, value: (p: Partition, replicas: readonly number[], isr: readonly number[]) => number): void => {
    new Gauge({
      name,
      help,
      labelNames: ['topic', 'partition'],
      registers,
      collect() {
        this.reset();
        led((p, labels, replicas, isr) => this.set(labels, value(p, replicas, isr)));
      },
    });
  };
  family('kafka_topic_partition_current_offset', 'High watermark of the partition (from its leader)', (p) => p.highWatermark);
  family('kafka_topic_partition_oldest_offset', 'Log start offset of the partition (from its leader)', (p) => p.logStartOffset);
  family('kafka_topic_partition_replicas', 'Number of replicas of the partition', (_p, r) => r.length);
  family('kafka_topic_partition_in_sync_replica', 'Number of in-sync replicas of the partition', (_p, _r, isr) => isr.length);
  family('kafka_topic_partition_leader', 'Leader broker id of the partition', () => src.brokerId);
  family('kafka_topic_partition_under_replicated_partition', '1 if the partition has fewer in-sync replicas than replicas', (_p, r, isr) =>
    isr.length < r.length ? 1 : 0,
  );
  family('kafka_topic_partition_leader_is_preferred', '1 if the partition leader is its preferred (first) replica', (_p, r) =>
    r.length === 0 || r[0] === src.brokerId ? 1 : 0,
  );
}
