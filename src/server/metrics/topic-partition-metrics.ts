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
 * With shard workers (num.io.threads > 1) the partitions are read from every shard through the
 * seam (PartitionShards.partitionStates: one message per shard per scrape); at 1, from this
 * thread's replica manager as before.
 */
import { Gauge } from 'prom-client';
import type { MetadataStore } from '../../metadata/metadata-store.js';
import type { ReplicaManager } from '../../replication/replica-manager.js';
import type { PartitionShards } from '../../replication/shards/partition-shards.js';
import type { MetricsRegistry, PreformattedFamily } from './registry.js';
import { valueText } from './stats-families.js';
import { onShardWorkers, statesThisScrape } from './scrape-states.js';
import { oncePerTurn } from './once-per-turn.js';

export interface TopicPartitionMetricsSources {
  brokerId: number;
  metadata: MetadataStore;
  replicaManager: ReplicaManager;
  /** The partitions' owners: read through when there are shard workers (count > 1). */
  shards?: PartitionShards | undefined;
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

  // One pass per scrape over the partitions led here writes all seven families' lines (the
  // registry asks them in the same turn; the next turn's scrape starts another pass). Written
  // directly: prom-client's labelled gauges (reset, then set per partition) made about 2 MB of
  // garbage per scrape at 60 partitions, which kept a scraped broker's young generation large.
  const lines = oncePerTurn(() => linesOf(src));
  for (let i = 0; i < PARTITION_FAMILIES.length; i++) new PartitionFamily(registry, i, src, lines);
}

async function linesOf(src: TopicPartitionMetricsSources): Promise<string[][]> {
  const out: string[][] = PARTITION_FAMILIES.map(() => []);
  for (const { partition, replicas, isr } of await ledPartitions(src)) {
    // Topic names need no escaping: Kafka allows only [a-zA-Z0-9._-].
    const labels = `{topic="${partition.topic}",partition="${partition.partition}"} `;
    for (let f = 0; f < PARTITION_FAMILIES.length; f++) {
      const [name, , value] = PARTITION_FAMILIES[f]!;
      out[f]!.push(name + labels + valueText(value(partition, replicas, isr, src.brokerId)));
    }
  }
  return out;
}

/** What the families read of a partition: a `Partition` here, or its state from a shard worker. */
interface PartitionOffsets {
  topic: string;
  partition: number;
  highWatermark: number;
  logStartOffset: number;
}

type PartitionValue = (p: PartitionOffsets, replicas: readonly number[], isr: readonly number[], brokerId: number) => number;

/** The seven per-partition families, in this order: name, help, the value of a partition. */
const PARTITION_FAMILIES: readonly [string, string, PartitionValue][] = [
  ['kafka_topic_partition_current_offset', 'High watermark of the partition (from its leader)', (p) => p.highWatermark],
  ['kafka_topic_partition_oldest_offset', 'Log start offset of the partition (from its leader)', (p) => p.logStartOffset],
  ['kafka_topic_partition_replicas', 'Number of replicas of the partition', (_p, r) => r.length],
  ['kafka_topic_partition_in_sync_replica', 'Number of in-sync replicas of the partition', (_p, _r, isr) => isr.length],
  ['kafka_topic_partition_leader', 'Leader broker id of the partition', (_p, _r, _i, brokerId) => brokerId],
  [
    'kafka_topic_partition_under_replicated_partition',
    '1 if the partition has fewer in-sync replicas than replicas',
    (_p, r, isr) => (isr.length < r.length ? 1 : 0),
  ],
  [
    'kafka_topic_partition_leader_is_preferred',
    '1 if the partition leader is its preferred (first) replica',
    (_p, r, _i, brokerId) => (r.length === 0 || r[0] === brokerId ? 1 : 0),
  ],
];

interface LedPartition {
  partition: PartitionOffsets;
  replicas: readonly number[];
  isr: readonly number[];
}

/** The partitions led here: from this thread's replica manager, or from every shard (num.io.threads > 1). */
async function ledPartitions(src: TopicPartitionMetricsSources): Promise<Iterable<LedPartition>> {
  if (!onShardWorkers(src.shards)) return led(src, src.replicaManager.allPartitions(), (p) => p.isLeader);
  return led(src, await statesThisScrape(src.shards), (s) => s.leader);
}

/** The leader's view of each partition it leads, with the controller's replicas and ISR. */
function* led<P extends PartitionOffsets & { replicas: readonly number[]; isr: readonly number[] }>(
  src: TopicPartitionMetricsSources,
  partitions: Iterable<P>,
  isLeader: (p: P) => boolean,
): Generator<LedPartition> {
  for (const p of partitions) {
    if (!isLeader(p)) continue;
    // Embedded mode's partitions carry no replica set of their own: the metadata's is [self].
    const known = p.replicas.length > 0 ? undefined : src.metadata.topic(p.topic)?.partitions[p.partition];
    const replicas = known?.replicas ?? p.replicas;
    const isr = p.isr.length > 0 ? p.isr : (known?.isr ?? [src.brokerId]);
    yield { partition: p, replicas, isr };
  }
}

/** A per-partition family: its text written directly (registry.ts, PreformattedFamily); get() for JSON readers. */
class PartitionFamily extends Gauge<string> implements PreformattedFamily {
  constructor(
    registry: MetricsRegistry,
    private readonly index: number,
    private readonly src: TopicPartitionMetricsSources,
    private readonly lines: () => Promise<string[][]>,
  ) {
    super({ name: PARTITION_FAMILIES[index]![0], help: PARTITION_FAMILIES[index]![1], labelNames: ['topic', 'partition'], registers: [registry] });
  }

  async preformattedText(): Promise<string> {
    const [name, help] = PARTITION_FAMILIES[this.index]!;
    const body = (await this.lines())[this.index]!;
    const header = `# HELP ${name} ${help}\n# TYPE ${name} gauge`;
    return body.length === 0 ? header : `${header}\n${body.join('\n')}`;
  }

  override async get(): ReturnType<Gauge<string>['get']> {
    const value = PARTITION_FAMILIES[this.index]![2];
    const values = [...(await ledPartitions(this.src))].map(({ partition: p, replicas, isr }) => ({
      value: value(p, replicas, isr, this.src.brokerId),
      labels: { topic: p.topic, partition: String(p.partition) },
    }));
    return { ...(await super.get()), values };
  }
}
