/**
 * A latency histogram that lower layers record into without allocating (Kafka's Yammer timers:
 * the controller's state times, log flushes, ZooKeeper requests): a count, a sum of milliseconds
 * and fixed log-scale buckets, eight per doubling from 10 µs to about 13 minutes, so any quantile
 * read from it is within 9% of the true value (a bucket's width). server/metrics/ turns it into the JMX exporter's
 * `{quantile="0.50".."0.999"}` lines at scrape time; nothing here knows Prometheus.
 */

/** Upper bound of bucket 0, in ms. */
const FIRST_BOUND_MS = 0.01;
/** Buckets per doubling: each bound is 2^(1/8) (about 1.09) times the previous one. */
const PER_DOUBLING = 8;
/** Bounded buckets; one more, unbounded, holds what is above the last bound (about 13 minutes). */
const BOUNDED = 211;

/** The buckets' upper bounds in ms (the last, unbounded bucket has none). */
export const LATENCY_BOUNDS_MS: Float64Array = Float64Array.from({ length: BOUNDED }, (_, i) => FIRST_BOUND_MS * 2 ** (i / PER_DOUBLING));
export const LATENCY_BUCKETS = BOUNDED + 1;

export class LatencyHistogram {
  /** Observations so far. */
  count = 0;
  /** Their total, ms. */
  sumMs = 0;
  /** Observations by bucket: bucket i holds (bound[i-1], bound[i]]. */
  readonly buckets = new Float64Array(LATENCY_BUCKETS);

  observe(ms: number): void {
    const v = ms > 0 ? ms : 0;
    let i = v <= FIRST_BOUND_MS ? 0 : Math.ceil(Math.log2(v / FIRST_BOUND_MS) * PER_DOUBLING);
    if (i > BOUNDED) i = BOUNDED;
    this.buckets[i]!++;
    this.count++;
    this.sumMs += v;
  }
}

/**
 * The q-quantile (0 < q <= 1) of bucket counts laid out as LatencyHistogram's, interpolated
 * linearly within its bucket; 0 when the counts are all zero.
 */
export function latencyQuantile(buckets: Float64Array, q: number): number {
  let n = 0;
  for (let b = 0; b < LATENCY_BUCKETS; b++) n += buckets[b]!;
  if (n === 0) return 0;
  const rank = q * n;
  let seen = 0;
  for (let b = 0; b < LATENCY_BUCKETS; b++) {
    const inBucket = buckets[b]!;
    if (inBucket > 0 && seen + inBucket >= rank) {
      const lower = b === 0 ? 0 : LATENCY_BOUNDS_MS[b - 1]!;
      if (b >= BOUNDED) return lower;
      return lower + ((LATENCY_BOUNDS_MS[b]! - lower) * (rank - seen)) / inBucket;
    }
    seen += inBucket;
  }
  return LATENCY_BOUNDS_MS[BOUNDED - 1]!;
}
