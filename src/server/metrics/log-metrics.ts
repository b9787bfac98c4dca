/**
 * Log metrics (Kafka's kafka.log MBeans, named as the JMX exporter's Kafka rules name them):
 * per partition hosted here, size, log start and end offsets and segment count
 * (`kafka_log_log_size{topic,partition}`...: dropped when metrics.partition.level.enable=false);
 * the flushes that synced data (LogFlushRateAndTimeMs); offline log directories.
 *
 * The per-partition families write their own lines (registry.ts, PreformattedFamily) in one pass
 * over the hosted partitions per scrape, shared by the four, in slices of 1,000 partitions
 * between which the event loop runs (bench/metrics-scrape.ts, bench/RESULTS.md: prom-client's
 * own formatting held the loop 80-200 ms per scrape at 10,000 partitions).
 *
 * With shard workers (num.io.threads > 1) the partitions of user topics live on other threads:
 * the pass asks every shard for its partitions' state (PartitionShards.partitionStates, one
 * message per shard) instead of walking this thread's ReplicaManager. At 1 it walks the logs
 * directly, as before. Flush stats and offline directories likewise: at 1 this thread's
 * LogManager; with shard workers every shard's (PartitionShards.logManagerStats, one message per
 * shard per scrape), summed here: a directory is offline when any shard has it offline.
 */
import type { ReplicaManager } from '../../replication/replica-manager.js';
import type { PartitionShards, PartitionState } from '../../replication/shards/partition-shards.js';
import type { LogManagerStats } from '../../replication/shards/partition-shards.js';
import { logStatsThisScrape, onShardWorkers, statesThisScrape } from './scrape-states.js';
import { LatencyHistogram } from '../../common/latency-histogram.js';
import type { LogManager } from '../../storage/manager/log-manager.js';
import { Gauge } from 'prom-client';
import type { UnifiedLog } from '../../storage/log/unified-log.js';
import type { MetricsRegistry, PreformattedFamily } from './registry.js';
import { statsGauge, statsSummary, one } from './stats-families.js';
import { RecentLatencies, statsQuantileTimer, timerSamples } from './timer-metrics.js';
import { oncePerTurn } from './once-per-turn.js';

/** The four per-partition families, in this order: name, help, the value of a log here, the value of a partition's state from its shard. */
const PARTITION_FAMILIES: readonly [string, string, (log: UnifiedLog) => number, (state: PartitionState) => number][] = [
  ['kafka_log_log_size', 'Bytes of the partition log on disk (Log Size).', (log) => log.size, (s) => s.sizeBytes],
  ['kafka_log_log_logstartoffset', 'First offset of the partition log (Log LogStartOffset).', (log) => log.logStartOffset, (s) => s.logStartOffset],
  ['kafka_log_log_logendoffset', 'Offset the next record of the partition log gets (Log LogEndOffset).', (log) => log.logEndOffset, (s) => s.logEndOffset],
  ['kafka_log_log_numlogsegments', 'Segments of the partition log (Log NumLogSegments).', (log) => log.segments.length, (s) => s.segmentCount],
];

/** Where the partitions are read: this thread's ReplicaManager (one shard), or every shard through the seam. */
interface PartitionSource {
  replicaManager: ReplicaManager;
  /** Present and count > 1: partitions on shard workers. */
  shards?: PartitionShards | undefined;
}

const onWorkers = (src: PartitionSource): src is PartitionSource & { shards: PartitionShards } => onShardWorkers(src.shards);

/** Partitions written per turn of the event loop: a scrape at 10,000 partitions never holds it long. */
const SLICE = 1000;

/**
 * Writes the four families' sample lines in one pass over the hosted partitions, yielding to the
 * event loop between slices. Topic names need no escaping: Kafka allows only [a-zA-Z0-9._-].
 */
async function partitionLines(src: PartitionSource): Promise<string[][]> {
  if (onWorkers(src)) return stateLines(await statesThisScrape(src.shards));
  const lines: string[][] = PARTITION_FAMILIES.map(() => []);
  let n = 0;
  for (const p of src.replicaManager.hostedPartitions()) {
    const log = p.log;
    const labels = `{topic="${log.topic}",partition="${log.partition}"} `;
    for (let f = 0; f < PARTITION_FAMILIES.length; f++) lines[f]!.push(PARTITION_FAMILIES[f]![0] + labels + PARTITION_FAMILIES[f]![2](log));
    if (++n % SLICE === 0) await new Promise((resolve) => setImmediate(resolve));
  }
  return lines;
}

/** The same lines from the shards' answers (num.io.threads > 1), in slices too. */
async function stateLines(states: readonly PartitionState[]): Promise<string[][]> {
  const lines: string[][] = PARTITION_FAMILIES.map(() => []);
  for (let i = 0; i < states.length; i++) {
    const s = states[i]!;
    const labels = `{topic="${s.topic}",partition="${s.partition}"} `;
    for (let f = 0; f < PARTITION_FAMILIES.length; f++) lines[f]!.push(PARTITION_FAMILIES[f]![0] + labels + PARTITION_FAMILIES[f]![3](s));
    if ((i + 1) % SLICE === 0) await new Promise((resolve) => setImmediate(resolve));
  }
  return lines;
}

/** A per-partition log family: its text written directly (registry.ts, PreformattedFamily); get() for JSON readers. */
class PartitionLogFamily extends Gauge<string> implements PreformattedFamily {
  constructor(
    registry: MetricsRegistry,
    private readonly index: number,
    private readonly src: PartitionSource,
    private readonly lines: () => Promise<string[][]>,
  ) {
    super({ name: PARTITION_FAMILIES[index]![0], help: PARTITION_FAMILIES[index]![1], labelNames: ['topic', 'partition'], registers: [registry] });
  }

  async preformattedText(): Promise<string> {
    const [name, help] = PARTITION_FAMILIES[this.index]!;
    const body = (await this.lines())[this.index]!;
    return body.length === 0 ? `# HELP ${name} ${help}\n# TYPE ${name} gauge` : `# HELP ${name} ${help}\n# TYPE ${name} gauge\n${body.join('\n')}`;
  }

  override async get(): ReturnType<Gauge<string>['get']> {
    const [, , ofLog, ofState] = PARTITION_FAMILIES[this.index]!;
    const values = onWorkers(this.src)
      ? (await statesThisScrape(this.src.shards)).map((s) => ({ value: ofState(s), labels: { topic: s.topic, partition: s.partition } }))
      : [...this.src.replicaManager.hostedPartitions()].map((p) => ({ value: ofLog(p.log), labels: { topic: p.topic, partition: p.partition } }));
    return { ...(await super.get()), values };
  }
}

export interface LogMetricsOptions {
  replicaManager: ReplicaManager;
  /** The partitions' owners: read through when there are shard workers (count > 1). */
  shards?: PartitionShards | undefined;
  logManager: LogManager;
  /** metrics.partition.level.enable: false leaves the per-partition families out. */
  partitionLevel: boolean;
}

export function registerLogMetrics(registry: MetricsRegistry, opts: LogMetricsOptions): void {
  const { logManager } = opts;
  if (opts.partitionLevel) {
    // One pass per scrape for the four families: the registry asks them all in the same turn,
    // so the first starts the pass and the others share it; the next scrape starts another.
    const lines = oncePerTurn(() => partitionLines(opts));
    for (let i = 0; i < PARTITION_FAMILIES.length; i++) new PartitionLogFamily(registry, i, opts, lines);
  }
  if (onWorkers(opts)) registerShardLogStats(registry, opts.shards);
  else registerThisThreadLogStats(registry, logManager);
}

const FLUSH = 'kafka_log_logflushstats_logflushrateandtimems';
const FLUSH_HELP = 'Log flushes that synced data: time in ms, quantiles and count (LogFlushRateAndTimeMs).';
const OFFLINE_COUNT = 'kafka_log_logmanager_offlinelogdirectorycount';
const OFFLINE_COUNT_HELP = 'Log directories offline after an I/O error.';
const DIR_OFFLINE = 'kafka_log_logmanager_logdirectoryoffline';
const DIR_OFFLINE_HELP = '1 when the log directory is offline, else 0 (LogDirectoryOffline).';

/** One shard (num.io.threads=1): this thread's LogManager, read directly. */
function registerThisThreadLogStats(registry: MetricsRegistry, logManager: LogManager): void {
  statsQuantileTimer(registry, FLUSH, FLUSH_HELP, () => logManager.flushStats);
  statsGauge(registry, OFFLINE_COUNT, OFFLINE_COUNT_HELP, () => one(logManager.logDirsOnline().filter((d) => !d.online).length));
  statsGauge(registry, DIR_OFFLINE, DIR_OFFLINE_HELP, () =>
    logManager.logDirsOnline().map((d) => ({ value: d.online ? 0 : 1, labels: { logDirectory: d.dir } })),
  );
}

/** Shard workers: every shard's stats, asked once per scrape and summed on this thread. */
function registerShardLogStats(registry: MetricsRegistry, shards: PartitionShards): void {
  // One histogram object for the life of the family: RecentLatencies keys its window on it.
  const total = new LatencyHistogram();
  const recent = new RecentLatencies();
  statsSummary(registry, FLUSH, FLUSH_HELP, async () => timerSamples(FLUSH, sumFlushes(total, await logStatsThisScrape(shards)), recent));
  statsGauge(registry, OFFLINE_COUNT, OFFLINE_COUNT_HELP, async () => one(dirsOf(await logStatsThisScrape(shards)).filter((d) => !d.online).length));
  statsGauge(registry, DIR_OFFLINE, DIR_OFFLINE_HELP, async () =>
    dirsOf(await logStatsThisScrape(shards)).map((d) => ({ value: d.online ? 0 : 1, labels: { logDirectory: d.dir } })),
  );
}

/** `total` set to the sum of the shards' flush histograms. */
function sumFlushes(total: LatencyHistogram, stats: readonly LogManagerStats[]): LatencyHistogram {
  total.count = 0;
  total.sumMs = 0;
  total.buckets.fill(0);
  for (const { flush } of stats) {
    total.count += flush.count;
    total.sumMs += flush.sumMs;
    for (let b = 0; b < total.buckets.length; b++) total.buckets[b]! += flush.buckets[b] ?? 0;
  }
  return total;
}

/** Every shard's directories in first-seen order; one is offline when any shard has it offline (its logs there answer errors). */
function dirsOf(stats: readonly LogManagerStats[]): { dir: string; online: boolean }[] {
  const dirs = new Map<string, boolean>();
  for (const s of stats) for (const d of s.dirs) dirs.set(d.dir, (dirs.get(d.dir) ?? true) && d.online);
  return [...dirs].map(([dir, online]) => ({ dir, online }));
}
