/**
 * Latencies as a count per whole millisecond: a 30-minute soak has millions of samples, and the
 * side processes send their counts once a second as `{ "ms": count }` objects, merged here.
 */
export interface LatencySummary {
  count: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
}

export class Histogram {
  private readonly counts = new Map<number, number>();
  count = 0;

  add(ms: number, n = 1): void {
    if (!Number.isFinite(ms) || n <= 0) return;
    const k = Math.max(0, Math.round(ms));
    this.counts.set(k, (this.counts.get(k) ?? 0) + n);
    this.count += n;
  }

  /** Adds a side process's `{ "ms": count }` object. */
  merge(obj: Record<string, number>): void {
    for (const [k, n] of Object.entries(obj)) this.add(Number(k), n);
  }

  /** The smallest latency with at least p% of the samples at or below it (0 when empty). */
  percentile(p: number): number {
    if (this.count === 0) return 0;
    const rank = Math.max(1, Math.ceil((p / 100) * this.count));
    let seen = 0;
    for (const k of [...this.counts.keys()].sort((a, b) => a - b)) {
      seen += this.counts.get(k)!;
      if (seen >= rank) return k;
    }
    return this.max();
  }

  max(): number {
    let m = 0;
    for (const k of this.counts.keys()) if (k > m) m = k;
    return m;
  }

  summary(): LatencySummary {
    return { count: this.count, p50Ms: this.percentile(50), p99Ms: this.percentile(99), maxMs: this.max() };
  }
}
