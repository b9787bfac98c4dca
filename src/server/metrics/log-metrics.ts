/**
 * Log metrics (Kafka's kafka.log MBeans, named as the JMX exporter's Kafka rules name them):
 * per partition hosted here, size, log start and end offsets and segment count
 * (`kafka_log_log_size{topic,partition}`...: dropped when metrics.partition.level.enable=false);
 * the flushes that synced data (LogFlushRateAndTimeMs); offline log directories.
 *
 * The per-partition families are built in one pass over the hosted partitions per scrape: one
 * labels object per partition, shared by the four families, and one sample per family, so the
 * cost is that of formatting the lines (bench/metrics-scrape.ts, bench/RESULTS.md).
 */
import type { ReplicaManager } from '../../replication/replica-manager.js';
import type { LogManager } from '../../storage/manager/log-manager.js';
import type { MetricsRegistry } from './registry.js';
import { collectedGauge, collectedTimer, one, type Sample } from './collected.js';

interface PartitionSamples {
  size: Sample[];
  logStartOffset: Sample[];
  logEndOffset: Sample[];
  numLogSegments: Sample[];
}

function partitionSamples(replicaManager: ReplicaManager): PartitionSamples {
  const out: PartitionSamples = { size: [], logStartOffset: [], logEndOffset: [], numLogSegments: [] };
  for (const p of replicaManager.hostedPartitions()) {
    const log = p.log;
    const labels = { topic: log.topic, partition: log.partition };
    out.size.push({ value: log.size, labels });
    out.logStartOffset.push({ value: log.logStartOffset, labels });
    out.logEndOffset.push({ value: log.logEndOffset, labels });
    out.numLogSegments.push({ value: log.segments.length, labels });
  }
  return out;
}

export interface LogMetricsOptions {
  replicaManager: ReplicaManager;
  logManager: LogManager;
  /** metrics.partition.level.enable: false leaves the per-partition families out. */
  partitionLevel: boolean;
}

export function registerLogMetrics(registry: MetricsRegistry, opts: LogMetricsOptions): void {
  const { replicaManager, logManager } = opts;
  if (opts.partitionLevel) {
    let cached: PartitionSamples | undefined;
    const current = (): PartitionSamples => {
      if (!cached) {
        cached = partitionSamples(replicaManager);
        // The registry asks every family in the same turn: the next scrape counts again.
        setImmediate(() => {
          cached = undefined;
        });
      }
      return cached;
    };
    collectedGauge(registry, 'kafka_log_log_size', 'Bytes of the partition log on disk (Log Size).', () => current().size);
    collectedGauge(registry, 'kafka_log_log_logstartoffset', 'First offset of the partition log (Log LogStartOffset).', () => current().logStartOffset);
    collectedGauge(
      registry,
      'kafka_log_log_logendoffset',
      'Offset the next record of the partition log gets (Log LogEndOffset).',
      () => current().logEndOffset,
    );
    collectedGauge(registry, 'kafka_log_log_numlogsegments', 'Segments of the partition log (Log NumLogSegments).', () => current().numLogSegments);
  }
  collectedTimer(
    registry,
    'kafka_log_logflushstats_logflushrateandtimems',
    'Log flushes that synced data: count and total ms (LogFlushRateAndTimeMs).',
    () => ({
      count: logManager.flushStats.flushes,
      sumMs: logManager.flushStats.totalMs,
    }),
  );
  collectedGauge(registry, 'kafka_log_logmanager_offlinelogdirectorycount', 'Log directories offline after an I/O error.', () =>
    one(logManager.logDirsOnline().filter((d) => !d.online).length),
  );
  collectedGauge(registry, 'kafka_log_logmanager_logdirectoryoffline', '1 when the log directory is offline, else 0 (LogDirectoryOffline).', () =>
    logManager.logDirsOnline().map((d) => ({ value: d.online ? 0 : 1, labels: { logDirectory: d.dir } })),
  );
}
