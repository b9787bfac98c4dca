/**
 * Rate-limited logging of repeated storage failures. A full disk fails every append of every
 * partition in a directory, thousands a second: each failure is counted, at most one line per
 * key (a log directory and an action) is written per interval, and that line says how many
 * failures since the previous line were not logged. The first success after failures says so.
 */

/** The lines it writes; storage's StorageLogger (and a pino logger) satisfies it. */
export interface FailureLogger {
  info(msg: string): void;
  warn(msg: string): void;
  error(msg: string): void;
}

interface KeyState {
  lastLineMs: number;
  /** Failures since the last line written. */
  suppressed: number;
  /** Failures since the last success. */
  failures: number;
}

export const DEFAULT_FAILURE_LOG_INTERVAL_MS = 10_000;

export class FailureLog {
  private readonly keys = new Map<string, KeyState>();

  constructor(
    private readonly logger: FailureLogger,
    private readonly clock: () => number = Date.now,
    readonly intervalMs = DEFAULT_FAILURE_LOG_INTERVAL_MS,
  ) {}

  /** True while some key has failures not followed by a success (a cheap hot-path check). */
  get anyFailing(): boolean {
    return this.keys.size > 0;
  }

  /**
   * Counts a failure of `what` (a plural noun: "appends") under `key` (a directory); writes
   * `line()` unless a line for the same `what` and `key` was written less than the interval ago.
   */
  failed(key: string, what: string, level: 'error' | 'warn', line: () => string): void {
    const now = this.clock();
    const id = `${what}|${key}`;
    let st = this.keys.get(id);
    if (!st) {
      st = { lastLineMs: Number.NEGATIVE_INFINITY, suppressed: 0, failures: 0 };
      this.keys.set(id, st);
    }
    st.failures++;
    if (now - st.lastLineMs < this.intervalMs) {
      st.suppressed++;
      return;
    }
    const seconds = Math.round((now - st.lastLineMs) / 1000);
    const tail = st.suppressed > 0 ? ` (${st.suppressed} more failed ${what} in ${key} in the last ${seconds} s were not logged)` : '';
    st.lastLineMs = now;
    st.suppressed = 0;
    this.logger[level](line() + tail);
  }

  /** A success under `key`: ends its failure streak, with one line if there was one. */
  succeeded(key: string, what: string): void {
    const id = `${what}|${key}`;
    const st = this.keys.get(id);
    if (!st) return;
    this.keys.delete(id);
    this.logger.info(`${what} in ${key} succeed again after ${st.failures} failures`);
  }
}
