/**
 * When a shard worker that ended is started again (docs/threads.md "A shard's failure stays in
 * the shard"): at once after a worker that ran a while; after a backoff (1 s, doubling) when the
 * worker it replaces died within a minute of its own start, since a fault that comes back at
 * once would otherwise spin (each start replays the logs' recovery); and never again once a
 * shard has crashed `crashLimit` times within `crashWindowMs`: its partitions stay offline. Pure:
 * it only counts and answers, WorkerShards schedules.
 */

export interface RestartTimings {
  /** A worker that dies within this long of its (re)start is "quick": the next start is backed off. Default 60 s. */
  quickCrashMs?: number;
  /** The first backoff after a quick crash, doubling with each quick crash in a row. Default 1 s. */
  backoffMs?: number;
  /** The backoff never grows past this. Default 60 s. */
  maxBackoffMs?: number;
  /** This many crashes within `crashWindowMs`, and the shard is left offline. Default 3 (1: never restarted). */
  crashLimit?: number;
  /** Default 10 minutes. */
  crashWindowMs?: number;
}

export type RestartDecision = { restartInMs: number } | { giveUp: string };

export class RestartPolicy {
  private readonly quickCrashMs: number;
  private readonly backoffMs: number;
  private readonly maxBackoffMs: number;
  private readonly crashLimit: number;
  private readonly crashWindowMs: number;
  /** When each crash of this shard happened, oldest first, within the window. */
  private crashes: number[] = [];
  /** Quick crashes in a row (the backoff's exponent). */
  private quickInARow = 0;

  constructor(timings: RestartTimings = {}) {
    this.quickCrashMs = timings.quickCrashMs ?? 60_000;
    this.backoffMs = timings.backoffMs ?? 1000;
    this.maxBackoffMs = timings.maxBackoffMs ?? 60_000;
    this.crashLimit = Math.max(1, timings.crashLimit ?? 3);
    this.crashWindowMs = timings.crashWindowMs ?? 600_000;
  }

  /**
   * A worker of this shard ended at `now`, having started at `startedAt` (`restarted`: it was a
   * replacement, not the broker's first worker for the shard, whose first crash is never "again").
   */
  crashed(now: number, startedAt: number, restarted: boolean): RestartDecision {
    this.crashes = this.crashes.filter((at) => now - at < this.crashWindowMs);
    this.crashes.push(now);
    if (this.crashes.length >= this.crashLimit) {
      const n = this.crashes.length;
      const window = this.crashWindowMs >= 60_000 ? `${this.crashWindowMs / 60_000} min` : `${this.crashWindowMs / 1000} s`;
      return { giveUp: `${n} crash${n === 1 ? '' : 'es'} within ${window} (the limit is ${this.crashLimit})` };
    }
    const quick = restarted && now - startedAt < this.quickCrashMs;
    this.quickInARow = quick ? this.quickInARow + 1 : 0;
    if (this.quickInARow === 0) return { restartInMs: 0 };
    return { restartInMs: Math.min(this.maxBackoffMs, this.backoffMs * 2 ** (this.quickInARow - 1)) };
  }
}
