/**
 * Kafka's timers (Yammer histograms: the controller's state times, LogFlushRateAndTimeMs,
 * ZooKeeperRequestLatencyMs) as the JMX exporter shows them, so that Kafka's dashboards read them
 * unchanged: `name{quantile="0.50"|"0.75"|"0.95"|"0.98"|"0.99"|"0.999"}` in ms, with `name_count`
 * (and `name_sum`, which the exporter lacks), typed summary. Read at scrape time from a
 * LatencyHistogram the lower layer records into without allocating.
 *
 * The quantiles describe recent observations, as Kafka's exponentially decaying reservoirs favour
 * the last minutes: the counts since the older of two snapshots taken a minute apart (the last
 * one to two minutes, as the request metrics' quantiles). When nothing was timed in that window
 * they fall back to every observation so far (Kafka's reservoir likewise keeps its old samples
 * until new ones replace them; a rare controller event stays visible); 0 before the first.
 */
import { LATENCY_BUCKETS, latencyQuantile, type LatencyHistogram } from '../../common/latency-histogram.js';
import type { MetricsRegistry } from './registry.js';
import { type Sample, statsSummary } from './stats-families.js';

/** Kafka's Yammer percentiles, as the exporter labels them. */
export const TIMER_QUANTILES: readonly [number, string][] = [
  [0.5, '0.50'],
  [0.75, '0.75'],
  [0.95, '0.95'],
  [0.98, '0.98'],
  [0.99, '0.99'],
  [0.999, '0.999'],
];
/** A snapshot is taken when the newer one is this old: the window is the last one to two of these. */
export const TIMER_WINDOW_MS = 60_000;

const NO_LABELS: Record<string, string | number> = Object.freeze({}) as Record<string, string | number>;

/** Recent bucket counts of one histogram: now minus a snapshot one to two windows old. */
export class RecentLatencies {
  private older = new Float64Array(LATENCY_BUCKETS);
  private newer = new Float64Array(LATENCY_BUCKETS);
  private readonly delta = new Float64Array(LATENCY_BUCKETS);
  private newerAt: number;
  private source: LatencyHistogram | undefined;

  constructor(private readonly now: () => number = Date.now) {
    this.newerAt = now();
  }

  /** The counts to take quantiles of: the recent ones, or all of them when none is recent. */
  of(h: LatencyHistogram): Float64Array {
    const t = this.now();
    if (h !== this.source) {
      // Another histogram (a new controller object): its whole history is recent to us.
      this.source = h;
      this.older.fill(0);
      this.newer.fill(0);
      this.newerAt = t;
    } else if (t - this.newerAt >= TIMER_WINDOW_MS) {
      const recycled = this.older;
      this.older = this.newer;
      recycled.set(h.buckets);
      this.newer = recycled;
      this.newerAt = t;
    }
    let recent = 0;
    for (let b = 0; b < LATENCY_BUCKETS; b++) recent += this.delta[b] = h.buckets[b]! - this.older[b]!;
    return recent > 0 ? this.delta : h.buckets;
  }
}

/** The samples of one timer: its quantile lines, `_sum` and `_count` (`labels` on each). */
export function timerSamples(
  name: string,
  h: LatencyHistogram | undefined,
  recent: RecentLatencies,
  labels: Record<string, string | number> = NO_LABELS,
): Sample[] {
  const out: Sample[] = [];
  const counts = h ? recent.of(h) : undefined;
  for (const [q, quantile] of TIMER_QUANTILES) out.push({ value: counts ? latencyQuantile(counts, q) : 0, labels: { ...labels, quantile } });
  out.push({ metricName: `${name}_sum`, value: h?.sumMs ?? 0, labels });
  out.push({ metricName: `${name}_count`, value: h?.count ?? 0, labels });
  return out;
}

/** Registers a Kafka timer read from `histogram()` (undefined: not there now, zeros). */
export function statsQuantileTimer(
  registry: MetricsRegistry,
  name: string,
  help: string,
  histogram: () => LatencyHistogram | undefined,
  now: () => number = Date.now,
): void {
  const recent = new RecentLatencies(now);
  statsSummary(registry, name, help, () => timerSamples(name, histogram(), recent));
}
