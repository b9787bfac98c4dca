/**
 * A SharedArrayBuffer ring between threads (Atomics.notify / waitAsync): round trips and one-way throughput.
 */
import { once } from 'node:events';
import { QUICK, KiB, MiB, load, ring, startWorker, row, us } from './common.js';

export async function sharedRing(): Promise<void> {
  // Atomics.waitAsync holds no handle on the event loop: keep this one alive while waiting.
  const keepAlive = setInterval(() => undefined, 1 << 30);
  try {
    await sharedRingRuns();
  } finally {
    clearInterval(keepAlive);
  }
}

export async function sharedRingRuns(): Promise<void> {
  const cap = 8 * MiB;
  // Round trips: a request ring and a response ring, the worker echoes (copies ring to ring).
  const req = new SharedArrayBuffer(cap + 64);
  const resp = new SharedArrayBuffer(cap + 64);
  const w = startWorker('ring-echo', { req, resp });
  const a = ring.ringOf(req);
  const b = ring.ringOf(resp);
  for (const size of [0, KiB, 64 * KiB, MiB]) {
    const n = QUICK ? 300 : size >= MiB ? 500 : 3000;
    const msg = Buffer.alloc(size, 1);
    const times: number[] = [];
    for (let i = 0; i < n; i++) {
      const t0 = process.hrtime.bigint();
      const seen = Atomics.load(b.h, 2);
      if (!ring.ringPush(a, msg)) throw new Error('request ring full');
      let m = ring.ringPeek(b);
      while (m === undefined) {
        await ring.ringWait(b, 2, seen);
        m = ring.ringPeek(b);
      }
      ring.ringDone(b);
      times.push(Number(process.hrtime.bigint() - t0));
    }
    times.sort((x, y) => x - y);
    row(
      'ring round trip',
      size === 0 ? 'empty' : `${size / KiB} KiB`,
      `${us(times[Math.floor(n / 2)]!)} µs`,
      `p99 ${us(times[Math.floor(n * 0.99)]!)} µs`,
      load(),
    );
  }
  await w.terminate();
  // One way: the producer copies records in; the consumer reads each in place and frees it.
  for (const [size, n0] of [
    [KiB, 400_000],
    [64 * KiB, 20_000],
    [MiB, 1500],
  ] as const) {
    const n = QUICK ? n0 / 10 : n0;
    const sab = new SharedArrayBuffer(cap + 64);
    const sink = startWorker('ring-sink', { req: sab });
    const r = ring.ringOf(sab);
    const msg = Buffer.alloc(size, 1);
    sink.postMessage(n);
    const t0 = process.hrtime.bigint();
    const cpu0 = ring.cpuNs();
    let waits = 0;
    for (let i = 0; i < n; i++) {
      // The pops counter is read before trying: a pop between a failed push and the read would be a lost wake-up.
      for (let seenPops = Atomics.load(r.h, 3); !ring.ringPush(r, msg); seenPops = Atomics.load(r.h, 3)) {
        waits++;
        await ring.ringWait(r, 3, seenPops);
      }
    }
    const sendCpu = ring.cpuNs() - cpu0;
    const [done] = (await once(sink, 'message')) as [{ n: number; cpuNs: number }];
    const wallNs = Number(process.hrtime.bigint() - t0);
    row(
      'ring one way',
      `${size / KiB} KiB`,
      `${((n / wallNs) * 1e9).toFixed(0)} msg/s`,
      `${((n * size) / MiB / (wallNs / 1e9)).toFixed(0)} MB/s`,
      `${us(sendCpu / n)} µs`,
      `${us(done.cpuNs / n)} µs`,
      `${waits} full waits`,
      load(),
    );
    await sink.terminate();
  }
}
