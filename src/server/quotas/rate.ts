/**
 * A rate over sampled windows, measured as Kafka's metrics library measures a quota sensor
 * (SampledStat + Rate with a SampledTotal): `samples` windows of `windowMs` each; a window starts
 * at the first value recorded after the previous one completed; windows older than
 * samples × windowMs are forgotten when measured; and the elapsed time divided by is never less
 * than samples − 1 full windows, so a new sensor does not read a huge rate from its first value.
 *
 * Pure: every call takes the time, so tests drive it with their own clock.
 */

interface Sample {
  startMs: number;
  total: number;
}

export interface RateWindowConfig {
  /** quota.window.num (Kafka: 11). */
  samples: number;
  /** quota.window.size.seconds × 1000 (Kafka: 1000). */
  windowMs: number;
}

export class SampledRate {
  private readonly ring: Sample[] = [];
  private current = 0;

  constructor(private readonly cfg: RateWindowConfig) {}

  /** Adds `value` at `nowMs` (a negative value takes back an earlier record, as Kafka's unrecord). */
  record(value: number, nowMs: number): void {
    let s = this.currentSample(nowMs);
    if (nowMs - s.startMs >= this.cfg.windowMs) s = this.advance(nowMs);
    s.total += value;
  }

  /** Units per second at `nowMs`. */
  measure(nowMs: number): number {
    this.purgeObsolete(nowMs);
    let total = 0;
    for (const s of this.ring) total += s.total;
    return total / (this.windowSizeMs(nowMs) / 1000);
  }

  /** The time the rate is computed over at `nowMs`, in ms (Kafka's Rate.windowSize). */
  windowSizeMs(nowMs: number): number {
    this.purgeObsolete(nowMs);
    let elapsed = nowMs - this.oldest(nowMs).startMs;
    const fullWindows = Math.floor(elapsed / this.cfg.windowMs);
    const minFull = this.cfg.samples - 1;
    if (fullWindows < minFull) elapsed += (minFull - fullWindows) * this.cfg.windowMs;
    return elapsed === 0 ? 1 : elapsed;
  }

  private currentSample(nowMs: number): Sample {
    if (this.ring.length === 0) this.ring.push({ startMs: nowMs, total: 0 });
    return this.ring[this.current]!;
  }

  private advance(nowMs: number): Sample {
    this.current = (this.current + 1) % this.cfg.samples;
    if (this.current >= this.ring.length) {
      const s = { startMs: nowMs, total: 0 };
      this.ring.push(s);
      return s;
    }
    const s = this.ring[this.current]!;
    s.startMs = nowMs;
    s.total = 0;
    return s;
  }

  private purgeObsolete(nowMs: number): void {
    const expireAge = this.cfg.samples * this.cfg.windowMs;
    for (const s of this.ring) {
      if (nowMs - s.startMs >= expireAge) {
        s.startMs = nowMs;
        s.total = 0;
      }
    }
  }

  private oldest(nowMs: number): Sample {
    let oldest = this.currentSample(nowMs);
    for (const s of this.ring) if (s.startMs < oldest.startMs) oldest = s;
    return oldest;
  }
}

/**
 * Records `value` and returns how long the client must wait for the rate to fall back to `bound`
 * (0 when within it): Kafka's QuotaUtils.throttleTime, (rate − bound) / bound × window size, rounded.
 * A bound of 0 (or less) allows nothing: the wait is the whole window span.
 */
export function recordAndThrottleMs(rate: SampledRate, bound: number, value: number, nowMs: number): number {
  rate.record(value, nowMs);
  const measured = rate.measure(nowMs);
  if (measured <= bound) return 0;
  const windowMs = rate.windowSizeMs(nowMs);
  if (bound <= 0) return Math.round(windowMs);
  return Math.round(((measured - bound) / bound) * windowMs);
}
