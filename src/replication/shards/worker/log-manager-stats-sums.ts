/**
 * WorkerShards' logManagerStats over its shards, kept so that the flush counters summed from it
 * never go backwards (Prometheus would read a counter reset): a shard that does not answer (ended,
 * or past the scrape's deadline) is counted by its last answer, and a worker a restart replaced
 * keeps its flushes (and its replica fetchers' bytes) in the sum, since the new worker counts from 0.
 */
import type { LogManagerStats } from '../partition-shards.js';

type FlushStats = LogManagerStats['flush'];

export class LogManagerStatsSums {
  private readonly last = new Map<number, LogManagerStats[]>();
  private retired: FlushStats | undefined;
  private retiredBytesIn = 0;

  /** A shard's answer, from the worker that is still the shard's. */
  answered(shard: number, stats: LogManagerStats[]): void {
    this.last.set(shard, stats);
  }

  /** The shard's worker is replaced: its last flush counts stay in the sum, its answer stands in no more. */
  retire(shard: number): void {
    for (const { flush, replication } of this.last.get(shard) ?? []) {
      this.retired = addedFlushes(this.retired, flush);
      this.retiredBytesIn += replication?.bytesIn ?? 0;
    }
    this.last.delete(shard);
  }

  /** Every shard's last answer, in shard order, and the retired workers' flushes as one more entry. */
  all(shards: number): LogManagerStats[] {
    const live = Array.from({ length: shards }, (_, i) => this.last.get(i) ?? []).flat();
    if (!this.retired) return live;
    const replication = this.retiredBytesIn > 0 ? { replication: { bytesIn: this.retiredBytesIn, maxLag: 0, failedPartitions: 0 } } : {};
    return [...live, { flush: this.retired, dirs: [], ...replication }];
  }
}

function addedFlushes(sum: FlushStats | undefined, more: FlushStats): FlushStats {
  if (!sum) return { count: more.count, sumMs: more.sumMs, buckets: Float64Array.from(more.buckets) };
  const buckets = new Float64Array(Math.max(sum.buckets.length, more.buckets.length));
  for (let b = 0; b < buckets.length; b++) buckets[b] = (sum.buckets[b] ?? 0) + (more.buckets[b] ?? 0);
  return { count: sum.count + more.count, sumMs: sum.sumMs + more.sumMs, buckets };
}
