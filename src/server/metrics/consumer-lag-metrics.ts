/**
 * Consumer lag per group and partition under kafka-exporter's names (danielqsj/kafka_exporter),
 * so that its dashboards and alert rules work on Fjord's own endpoint:
 *   kafka_consumergroup_current_offset{consumergroup,topic,partition}   committed offset
 *   kafka_consumergroup_current_offset_sum{consumergroup,topic}
 *   kafka_consumergroup_lag{consumergroup,topic,partition}              end offset - committed
 *   kafka_consumergroup_lag_sum{consumergroup,topic}
 *   kafka_consumergroup_members{consumergroup}
 * and, which kafka-exporter lacks, lag in seconds in the same family and with the same labels:
 *   kafka_consumergroup_lag_seconds{consumergroup,topic,partition}      age of the record at the
 *     committed offset (now - its timestamp) while lag > 0; 0 when caught up
 *   kafka_consumergroup_lag_seconds_max{consumergroup,topic}            the oldest of the topic's
 * (kafka-lag-exporter's kafka_consumergroup_group_lag_seconds estimates the age by interpolating
 * sampled end offsets and names the group `group`; a broker reads the record's timestamp itself,
 * and keeps kafka-exporter's label names so one dashboard query joins both families).
 *
 * Each group is exported by its coordinator only (the broker whose loaded `__consumer_offsets`
 * partition holds it): Prometheus scrapes every broker, and a group that moves stops being
 * exported by the broker it left when its partition unloads. The end offset is the high
 * watermark (what read_uncommitted consumers reach; kafka-exporter's "newest" offset): read live
 * for partitions led here (on a shard worker: asked of it once per scrape, one message per
 * shard), from the background refresh (lag/lag-refresh.ts) for the others.
 * Committed offsets and members are read from memory at scrape time.
 * Kafka 0.8's ZooKeeper-stored groups (`/consumers/<group>/offsets/...`, cluster mode) have no
 * coordinator: the active controller exports them, as its background refresh last read them
 * from ZooKeeper (lag/zk-groups.ts), members being the consumers registered under `ids`.
 * `metrics.partition.level.enable=false` drops the per-partition families, keeping the per-topic ones.
 */
import { Gauge } from 'prom-client';
import type { MetricsRegistry } from './registry.js';
import { LagRefresh, type LagSources } from './lag/lag-refresh.js';
import { oncePerTurn } from './once-per-turn.js';

export interface ConsumerLagOptions extends LagSources {
  /** metrics.partition.level.enable */
  partitionLevel: boolean;
  /** metrics.consumer.lag.refresh.ms */
  refreshMs: number;
}

interface Row {
  group: string;
  topic: string;
  partition: number;
  committed: number;
  lag: number | undefined;
  lagSeconds: number | undefined;
}

interface Snapshot {
  members: { group: string; count: number }[];
  rows: Row[];
}

export interface ConsumerLagMetrics {
  /** Runs a refresh now and resolves when it is done (tests, and a first scrape's warm-up). */
  refresh(): Promise<void>;
  close(): void;
}

export function registerConsumerLagMetrics(registry: MetricsRegistry, opts: ConsumerLagOptions): ConsumerLagMetrics {
  const refresher = new LagRefresh(opts, opts.refreshMs);
  // One pass over the groups per scrape, shared by the families (each gauge's collect asks).
  const snapshot = oncePerTurn((): Promise<Snapshot> => build());
  const build = async (): Promise<Snapshot> => {
    const workerEnds = await refresher.workerEnds();
    const now = Date.now();
    const snap: Snapshot = { members: [], rows: [] };
    refresher.forEachGroup((group, count, offsets) => {
      snap.members.push({ group, count });
      for (const [topic, parts] of offsets) {
        for (const [partition, c] of parts) {
          const committed = Number(c.offset);
          const end = refresher.endOffset(topic, partition, workerEnds);
          const lag = end === undefined ? undefined : Math.max(0, end - committed);
          let lagSeconds: number | undefined;
          if (lag === 0) lagSeconds = 0;
          else if (lag !== undefined) {
            const ts = refresher.timestampAt(topic, partition, committed);
            if (ts !== undefined) lagSeconds = Math.max(0, (now - ts) / 1000);
          }
          snap.rows.push({ group, topic, partition, committed, lag, lagSeconds });
        }
      }
    });
    return snap;
  };

  const perPartition = ['consumergroup', 'topic', 'partition'] as const;
  const perTopic = ['consumergroup', 'topic'] as const;
  const registers = [registry];

  new Gauge({
    name: 'kafka_consumergroup_members',
    help: 'Members of the consumer group (coordinated by this broker)',
    labelNames: ['consumergroup'],
    registers,
    async collect() {
      const snap = await snapshot();
      this.reset();
      for (const m of snap.members) this.set({ consumergroup: m.group }, m.count);
    },
  });
  if (opts.partitionLevel) {
    const partitionGauge = (name: string, help: string, value: (r: Row) => number | undefined): void => {
      new Gauge({
        name,
        help,
        labelNames: perPartition,
        registers,
        async collect() {
          const snap = await snapshot();
          this.reset();
          for (const r of snap.rows) {
            const v = value(r);
            if (v !== undefined) this.set({ consumergroup: r.group, topic: r.topic, partition: String(r.partition) }, v);
          }
        },
      });
    };
    partitionGauge('kafka_consumergroup_current_offset', 'Committed offset of the consumer group on the partition', (r) => r.committed);
    partitionGauge('kafka_consumergroup_lag', 'Records the consumer group is behind: the partition high watermark minus its committed offset', (r) => r.lag);
    partitionGauge('kafka_consumergroup_lag_seconds', 'Age in seconds of the record at the committed offset (0 when caught up)', (r) => r.lagSeconds);
  }
  const topicGauge = (name: string, help: string, value: (r: Row) => number | undefined, fold: (a: number, b: number) => number): void => {
    new Gauge({
      name,
      help,
      labelNames: perTopic,
      registers,
      async collect() {
        const snap = await snapshot();
        this.reset();
        const folded = new Map<string, { group: string; topic: string; v: number }>();
        for (const r of snap.rows) {
          const v = value(r);
          if (v === undefined) continue;
          const k = `${r.group}\0${r.topic}`;
          const f = folded.get(k);
          if (f) f.v = fold(f.v, v);
          else folded.set(k, { group: r.group, topic: r.topic, v });
        }
        for (const f of folded.values()) this.set({ consumergroup: f.group, topic: f.topic }, f.v);
      },
    });
  };
  const sum = (a: number, b: number): number => a + b;
  topicGauge('kafka_consumergroup_current_offset_sum', 'Sum of the committed offsets of the consumer group on the topic', (r) => r.committed, sum);
  topicGauge('kafka_consumergroup_lag_sum', 'Records the consumer group is behind on the topic, all partitions together', (r) => r.lag, sum);
  topicGauge(
    'kafka_consumergroup_lag_seconds_max',
    'Largest lag in seconds of the consumer group over the partitions of the topic',
    (r) => r.lagSeconds,
    Math.max,
  );

  refresher.start();
  return { refresh: () => refresher.refresh(), close: () => refresher.close() };
}
