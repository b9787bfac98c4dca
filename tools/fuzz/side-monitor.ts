/**
 * The fuzzer's view of the well-behaved producer and consumer (side-clients.ts, run as their own
 * process so the fuzzer's load does not slow them): their once-a-second counters, and the
 * records per second they achieved between two moments.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { resolve } from 'node:path';
import { createInterface } from 'node:readline';
import type { SideRates } from './report.js';

export interface SideSample {
  t: number;
  produced: number;
  consumed: number;
  errors: number;
  lastError: string;
}

export class SideClients {
  samples: SideSample[] = [];
  private constructor(private readonly child: ChildProcess) {
    createInterface({ input: child.stdout! }).on('line', (line) => {
      try {
        const s = JSON.parse(line) as SideSample;
        this.samples.push({ ...s, t: Date.now() });
      } catch {
        /* not a sample */
      }
    });
    child.stderr!.resume();
  }
  static start(bootstrap: string, topic: string, partitions: number, rate: number): SideClients {
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', resolve(import.meta.dirname, 'side-clients.ts'), bootstrap, topic, String(partitions), String(rate)],
      {
        stdio: ['pipe', 'pipe', 'pipe'],
      },
    );
    return new SideClients(child);
  }
  last(): SideSample | undefined {
    return this.samples[this.samples.length - 1];
  }
  async waitFor(pred: (s: SideSample) => boolean, ms: number): Promise<boolean> {
    const end = Date.now() + ms;
    while (Date.now() < end) {
      const s = this.last();
      if (s && pred(s)) return true;
      await new Promise((r) => setTimeout(r, 100));
    }
    return false;
  }
  /** Records per second between two wall-clock times. */
  rates(from: number, to: number): SideRates {
    const a = [...this.samples].reverse().find((s) => s.t <= from) ?? this.samples[0];
    const b = [...this.samples].reverse().find((s) => s.t <= to) ?? this.last();
    if (!a || !b || b.t <= a.t) return { produced: 0, consumed: 0 };
    const secs = (b.t - a.t) / 1000;
    return { produced: (b.produced - a.produced) / secs, consumed: (b.consumed - a.consumed) / secs };
  }
  async stop(): Promise<void> {
    this.child.kill('SIGTERM');
    await new Promise<void>((r) => {
      const timer = setTimeout(() => {
        this.child.kill('SIGKILL');
        r();
      }, 5000);
      this.child.once('exit', () => {
        clearTimeout(timer);
        r();
      });
    });
  }
}

/** Starts the side clients and measures their baseline (3 s after a 1 s start-up burst). */
export async function startSideClients(
  bootstrap: string,
  topic: string,
  partitions: number,
  rate: number,
  log: (line: string) => void,
): Promise<{ side: SideClients; baseline: SideRates }> {
  const side = SideClients.start(bootstrap, topic, partitions, rate);
  const sideUp = await side.waitFor((s) => s.produced > rate && s.consumed > rate, 30_000);
  if (!sideUp) log(`side clients did not get going: ${JSON.stringify(side.last())}`);
  await new Promise((r) => setTimeout(r, 1000)); // past the start-up burst
  const baseFrom = Date.now();
  await new Promise((r) => setTimeout(r, 3000));
  const baseline = side.rates(baseFrom, Date.now());
  log(`side clients baseline: ${baseline.produced.toFixed(0)} produced/s, ${baseline.consumed.toFixed(0)} consumed/s`);
  return { side, baseline };
}

/** At least half the baseline throughput, both ways. */
export function keptThroughput(r: SideRates, baseline: SideRates): boolean {
  return r.produced >= baseline.produced * 0.5 && r.consumed >= baseline.consumed * 0.5 && baseline.produced > 0;
}
