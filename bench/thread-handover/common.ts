/**
 * What the hand-over experiments share: the --quick flag, this thread's copy of the ring, starting a
 * worker, the result rows, and the round-trip timer.
 */
import { RING_JS, WORKER_JS } from './worker-source.js';
import { readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { Worker } from 'node:worker_threads';

export const QUICK = process.argv.includes('--quick');
export const KiB = 1024;
export const MiB = 1024 * 1024;
export const load = (): string =>
  loadavg()
    .map((l) => l.toFixed(2))
    .join(' ');

// This thread's copies of the ring functions (the same source the worker runs).
export interface Ring {
  h: Int32Array;
}
export const ring = new Function('require', `${RING_JS}; return { ringOf, ringPush, ringPeek, ringDone, ringWait, cpuNs };`)((id: string) =>
  id === 'node:fs' ? { readFileSync } : undefined,
) as {
  ringOf(sab: SharedArrayBuffer): Ring;
  ringPush(r: Ring, src: Uint8Array): boolean;
  ringPeek(r: Ring): Uint8Array | undefined;
  ringDone(r: Ring): void;
  ringWait(r: Ring, i: number, seen: number): Promise<unknown>;
  cpuNs(): number;
};

export function startWorker(mode: string, data: Record<string, unknown> = {}): Worker {
  return new Worker(WORKER_JS, { eval: true, workerData: { mode, ...data } });
}

export interface Msg {
  b?: ArrayBuffer | Uint8Array;
  t?: boolean;
}

export const rows: string[][] = [];
export function row(...cells: string[]): void {
  rows.push(cells);
  console.error(cells.join('  '));
}
export const us = (ns: number): string => (ns / 1000).toFixed(ns < 10_000 ? 2 : 1);

/** Median µs of one round trip over `port`-like endpoints, after a warm-up. */
export async function roundTrips(
  send: (m: Msg, t: ArrayBuffer[]) => void,
  on: (f: (m: Msg) => void) => void,
  size: number,
  transfer: boolean,
  n: number,
): Promise<number> {
  let pending: ((m: Msg) => void) | undefined;
  on((m) => pending?.(m));
  let buf: ArrayBuffer | undefined = size > 0 ? Buffer.allocUnsafeSlow(size).buffer : undefined;
  const times: number[] = [];
  for (let i = 0; i < n + n / 10; i++) {
    const t0 = process.hrtime.bigint();
    const back = new Promise<Msg>((r) => (pending = r));
    if (buf === undefined) send({}, []);
    else if (transfer) send({ b: buf, t: true }, [buf]);
    else send({ b: buf }, []);
    const m = await back;
    if (transfer) buf = m.b as ArrayBuffer;
    if (i >= n / 10) times.push(Number(process.hrtime.bigint() - t0));
  }
  times.sort((a, b) => a - b);
  return times[Math.floor(times.length / 2)]!;
}
