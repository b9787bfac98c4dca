/**
 * A manual clock for the telemetry state machine's tests: timers fire only when the test
 * advances time, and `settle()` lets the promises they start run to their next await.
 */
import type { TelemetryClock } from '../../../src/client/telemetry/telemetry-reporter.js';

interface Timer {
  at: number;
  fn: () => void;
  id: number;
}

export class FakeClock implements TelemetryClock {
  private nowMs = 1_700_000_000_000;
  private timers: Timer[] = [];
  private nextId = 1;
  /** Returned by random(): 0.5 makes the first push land at exactly one interval. */
  randomValue = 0.5;

  now(): number {
    return this.nowMs;
  }

  setTimeout(fn: () => void, ms: number): unknown {
    const t = { at: this.nowMs + ms, fn, id: this.nextId++ };
    this.timers.push(t);
    return t.id;
  }

  clearTimeout(handle: unknown): void {
    this.timers = this.timers.filter((t) => t.id !== handle);
  }

  random(): number {
    return this.randomValue;
  }

  /** Delay until the next timer fires, or null when none is set. */
  nextDelay(): number | null {
    if (this.timers.length === 0) return null;
    return Math.min(...this.timers.map((t) => t.at)) - this.nowMs;
  }

  pending(): number {
    return this.timers.length;
  }

  /** Moves time forward by `ms`, firing due timers in order and letting their work settle. */
  async advance(ms: number): Promise<void> {
    const until = this.nowMs + ms;
    for (;;) {
      const due = this.timers.filter((t) => t.at <= until).sort((a, b) => a.at - b.at || a.id - b.id)[0];
      if (due === undefined) break;
      this.timers = this.timers.filter((t) => t !== due);
      this.nowMs = due.at;
      due.fn();
      await settle();
    }
    this.nowMs = until;
    await settle();
  }
}

/** Lets chains of resolved promises run (a fake transport answers without I/O). */
export async function settle(): Promise<void> {
  for (let i = 0; i < 20; i++) await new Promise<void>((resolve) => setImmediate(resolve));
}
