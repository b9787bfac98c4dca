/**
 * What handing work between threads costs on this machine (issue 26: the hand-over figures the
 * multi-core design in docs/threads.md is predicted from). Runs in well under a minute.
 *
 *   node --import tsx bench/thread-handover.ts [--quick]
 *
 * - postMessage round trip (main -> worker -> main, one at a time): an empty message; 1 KiB,
 *   64 KiB and 1 MiB copied (structured clone); the same sizes transferred (the ArrayBuffer moves
 *   both ways, nothing is copied). Also a MessageChannel port handed to the worker, and one within
 *   a single thread (the clone cost without the thread hop).
 * - postMessage one way, pipelined (what a network thread streaming requests to a shard pays):
 *   messages/s, MB/s, and each side's CPU per message (/proc/thread-self/schedstat, ns).
 * - A SharedArrayBuffer ring (single producer, single consumer, length-prefixed records) with
 *   Atomics.notify and Atomics.waitAsync, so neither side blocks its event loop: round-trip
 *   latency and one-way throughput (the producer copies into the ring, the consumer reads in place).
 * - writeSync / readSync of a file (64 KiB and 1 MiB calls, page cache) from the main thread and
 *   from a worker: whether a shard worker's log I/O costs what the main thread's does.
 * - Buffer slices: what postMessage does with a pooled Buffer.allocUnsafe slice and with a frame
 *   that is a subarray of a socket chunk, copied and in the transfer list (bytes that arrive,
 *   whether the sender's other views survive); and the socket chunks Node hands over on loopback.
 * - The produce path in miniature: batches in a SharedArrayBuffer slab handed to 0 (inline), 1
 *   and 2 shard workers that CRC32C and write them: the main thread's CPU per MB left after the
 *   hand-over, and the shards' CPU per MB for the work moved.
 * - Whether threads can share one listening socket (listen({ fd }): Node 20 has no reusePort and
 *   cannot send a socket to a worker), and whether writeSync/readSync/socket.write take
 *   SharedArrayBuffer views (a shard appending straight from shared memory).
 * The load average is printed with the figures: on a loaded machine the thread hop waits for a
 * core, so latencies grow with the load; CPU per message is the figure that tolerates load.
 */
import { once } from 'node:events';
import { mkdtempSync, openSync, closeSync, readFileSync, rmSync, writeSync, readSync } from 'node:fs';
import { createServer, connect, type AddressInfo } from 'node:net';
import { loadavg, tmpdir, cpus } from 'node:os';
import path from 'node:path';
import { MessageChannel, Worker, type MessagePort } from 'node:worker_threads';

const QUICK = process.argv.includes('--quick');
const KiB = 1024;
const MiB = 1024 * 1024;
const load = (): string =>
  loadavg()
    .map((l) => l.toFixed(2))
    .join(' ');

/**
 * The SPSC ring, as JavaScript source: the worker (an eval'd script) and this thread share it.
 * Header (Int32, in the first 64 bytes): [0] head (next write position), [1] tail (next read
 * position), [2] pushes (the consumer waits on it), [3] pops (a producer with a full ring waits on it).
 * Records: int32 length, bytes, padded to 4; -1 (or under 4 bytes left) means "continue at 0".
 * head === tail is empty, so the producer never fills the ring completely.
 */
const RING_JS = `
function ringOf(sab) {
  return { h: new Int32Array(sab, 0, 16), v: new DataView(sab, 64), d: new Uint8Array(sab, 64), cap: sab.byteLength - 64 };
}
function ringPush(r, src) {
  const need = 4 + ((src.length + 3) & ~3);
  let head = Atomics.load(r.h, 0);
  const tail = Atomics.load(r.h, 1);
  if (head >= tail) {
    if (r.cap - head < need || (r.cap - head === need && tail === 0)) {
      if (tail <= need) return false;
      if (r.cap - head >= 4) r.v.setInt32(head, -1);
      head = 0;
    }
  } else if (tail - head <= need) return false;
  r.v.setInt32(head, src.length);
  r.d.set(src, head + 4);
  Atomics.store(r.h, 0, head + need === r.cap ? 0 : head + need);
  Atomics.add(r.h, 2, 1);
  Atomics.notify(r.h, 2);
  return true;
}
/** The next record as a view into the ring (valid until ringDone), or undefined when empty. */
function ringPeek(r) {
  let tail = Atomics.load(r.h, 1);
  const head = Atomics.load(r.h, 0);
  if (tail === head) return undefined;
  if (r.cap - tail < 4 || r.v.getInt32(tail) === -1) {
    tail = 0;
    Atomics.store(r.h, 1, 0);
    if (tail === head) return undefined;
  }
  const len = r.v.getInt32(tail);
  r.at = tail + 4 + ((len + 3) & ~3);
  return r.d.subarray(tail + 4, tail + 4 + len);
}
function ringDone(r) {
  Atomics.store(r.h, 1, r.at === r.cap ? 0 : r.at);
  Atomics.add(r.h, 3, 1);
  Atomics.notify(r.h, 3);
}
/** Resolves when word i of the header differs from seen (at once if it already does). */
function ringWait(r, i, seen) {
  const w = Atomics.waitAsync(r.h, i, seen);
  return w.async ? w.value : Promise.resolve(w.value);
}
// schedstat's run time is brought up to date when the thread is switched out, so sleep 10 µs first.
const napWord = new Int32Array(new SharedArrayBuffer(4));
function cpuNs() {
  Atomics.wait(napWord, 0, 0, 0.01);
  return Number(require('node:fs').readFileSync('/proc/thread-self/schedstat', 'utf8').split(' ')[0]);
}
`;

const WORKER_JS = `
const { parentPort, workerData } = require('node:worker_threads');
const fs = require('node:fs');
${RING_JS}
const mode = workerData.mode;
if (mode === 'echo') {
  parentPort.on('message', (m) => parentPort.postMessage(m, m && m.t ? [m.b] : []));
} else if (mode === 'port') {
  parentPort.once('message', (port) => port.on('message', (m) => port.postMessage(m, m && m.t ? [m.b] : [])));
} else if (mode === 'count') {
  let n = 0, bytes = 0, cpu0 = 0;
  parentPort.on('message', (m) => {
    if (m === 'start') { n = 0; bytes = 0; cpu0 = cpuNs(); return; }
    if (m === 'end') { parentPort.postMessage({ n, bytes, cpuNs: cpuNs() - cpu0 }); return; }
    n++;
    bytes += m.b ? m.b.byteLength : 0;
  });
}
// Atomics.waitAsync holds no handle on the event loop: without one the worker would exit mid-wait.
if (mode.startsWith('ring')) setInterval(() => {}, 1 << 30);
if (mode === 'ring-echo') {
  const a = ringOf(workerData.req), b = ringOf(workerData.resp);
  (async () => {
    for (;;) {
      const seen = Atomics.load(a.h, 2);
      let m;
      while ((m = ringPeek(a)) !== undefined) {
        // The pops counter is read before trying: a pop between a failed push and the read would be a lost wake-up.
        for (let seenPops = Atomics.load(b.h, 3); !ringPush(b, m); seenPops = Atomics.load(b.h, 3)) await ringWait(b, 3, seenPops);
        ringDone(a);
      }
      await ringWait(a, 2, seen);
    }
  })();
} else if (mode === 'ring-sink') {
  const a = ringOf(workerData.req);
  parentPort.on('message', async (total) => {
    const cpu0 = cpuNs();
    let n = 0, sum = 0;
    while (n < total) {
      const seen = Atomics.load(a.h, 2);
      let m;
      while ((m = ringPeek(a)) !== undefined) { sum += m[0]; n++; ringDone(a); }
      if (n < total) await ringWait(a, 2, seen);
    }
    parentPort.postMessage({ n, sum, cpuNs: cpuNs() - cpu0 });
  });
} else if (mode === 'fs') {
  parentPort.on('message', ({ file, chunk, total, op }) => parentPort.postMessage(fsLoop(file, chunk, total, op)));
} else if (mode === 'shard') {
  // A shard's part of a produce: CRC32C over the batch bytes (in the shared slab, in place) and
  // the append's write to its own segment file; answers the request's offset.
  const { crc32c } = require('node:module').createRequire(workerData.root + '/package.json')('@node-rs/crc32');
  const slab = Buffer.from(workerData.slab);
  const fd = fs.openSync(workerData.file, 'w');
  let position = 0, cpu0 = 0;
  parentPort.postMessage('ready');
  parentPort.on('message', (m) => {
    if (m === 'start') { cpu0 = cpuNs(); return; }
    if (m === 'end') { parentPort.postMessage({ cpuNs: cpuNs() - cpu0 }); return; }
    const view = slab.subarray(m.off, m.off + m.len);
    const crc = crc32c(view);
    fs.writeSync(fd, view, 0, view.length, position);
    position = (position + view.length) % workerData.fileBytes;
    parentPort.postMessage({ off: m.off, crc });
  });
} else if (mode === 'accept') {
  const server = require('node:net').createServer((c) => c.end(String(require('node:worker_threads').threadId)));
  server.listen({ fd: workerData.fd }, () => parentPort.postMessage('listening'));
  parentPort.on('message', () => server.close(() => parentPort.postMessage('closed')));
} else if (mode === 'probe') {
  parentPort.on('message', (m) => parentPort.postMessage({ length: m.length, backing: m.buffer.byteLength }));
}
function fsLoop(file, chunk, total, op) {
  const fd = fs.openSync(file, op === 'write' ? 'w' : 'r');
  const buf = Buffer.alloc(chunk, 120);
  const cpu0 = cpuNs(), t0 = process.hrtime.bigint();
  for (let done = 0; done < total; done += chunk) {
    if (op === 'write') fs.writeSync(fd, buf, 0, chunk, done);
    else fs.readSync(fd, buf, 0, chunk, done);
  }
  const wallNs = Number(process.hrtime.bigint() - t0);
  fs.closeSync(fd);
  return { wallNs, cpuNs: cpuNs() - cpu0 };
}
`;

// This thread's copies of the ring functions (the same source the worker runs).
interface Ring {
  h: Int32Array;
}
const ring = new Function('require', `${RING_JS}; return { ringOf, ringPush, ringPeek, ringDone, ringWait, cpuNs };`)((id: string) =>
  id === 'node:fs' ? { readFileSync } : undefined,
) as {
  ringOf(sab: SharedArrayBuffer): Ring;
  ringPush(r: Ring, src: Uint8Array): boolean;
  ringPeek(r: Ring): Uint8Array | undefined;
  ringDone(r: Ring): void;
  ringWait(r: Ring, i: number, seen: number): Promise<unknown>;
  cpuNs(): number;
};

function startWorker(mode: string, data: Record<string, unknown> = {}): Worker {
  return new Worker(WORKER_JS, { eval: true, workerData: { mode, ...data } });
}

interface Msg {
  b?: ArrayBuffer | Uint8Array;
  t?: boolean;
}

const rows: string[][] = [];
function row(...cells: string[]): void {
  rows.push(cells);
  console.error(cells.join('  '));
}
const us = (ns: number): string => (ns / 1000).toFixed(ns < 10_000 ? 2 : 1);

/** Median µs of one round trip over `port`-like endpoints, after a warm-up. */
async function roundTrips(
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

async function postMessageRoundTrips(): Promise<void> {
  const n = QUICK ? 500 : 3000;
  const w = startWorker('echo');
  const chan = new MessageChannel();
  const pw = startWorker('port');
  pw.postMessage(chan.port2, [chan.port2]);
  const local = new MessageChannel();
  local.port2.on('message', (m: Msg) => local.port2.postMessage(m, m.t ? [m.b as ArrayBuffer] : []));
  const onOf =
    (p: Worker | MessagePort) =>
    (f: (m: Msg) => void): void => {
      p.removeAllListeners('message');
      p.on('message', f);
    };
  for (const [label, size, transfer] of [
    ['empty', 0, false],
    ['1 KiB copied', KiB, false],
    ['64 KiB copied', 64 * KiB, false],
    ['1 MiB copied', MiB, false],
    ['1 KiB transferred', KiB, true],
    ['64 KiB transferred', 64 * KiB, true],
    ['1 MiB transferred', MiB, true],
  ] as const) {
    const count = size >= MiB && !transfer ? n / 5 : n;
    const viaWorker = await roundTrips((m, t) => w.postMessage(m, t), onOf(w), size, transfer, count);
    const viaPort = await roundTrips((m, t) => chan.port1.postMessage(m, t), onOf(chan.port1), size, transfer, count);
    const sameThread = await roundTrips((m, t) => local.port1.postMessage(m, t), onOf(local.port1), size, transfer, count);
    row('round trip', label, `${us(viaWorker)} µs`, `${us(viaPort)} µs`, `${us(sameThread)} µs`, load());
  }
  chan.port1.close();
  local.port1.close();
  await Promise.all([w.terminate(), pw.terminate()]);
}

/** One way, pipelined: the sender posts `n` messages as fast as it can; the worker counts them. */
async function postMessageThroughput(): Promise<void> {
  const w = startWorker('count');
  for (const [label, size, transfer, n0] of [
    ['empty', 0, false, 200_000],
    ['1 KiB copied', KiB, false, 100_000],
    ['64 KiB copied', 64 * KiB, false, 10_000],
    ['1 MiB copied', MiB, false, 1000],
    ['1 KiB transferred (fresh buffer each)', KiB, true, 100_000],
    ['64 KiB transferred (fresh buffer each)', 64 * KiB, true, 10_000],
    ['1 MiB transferred (fresh buffer each)', MiB, true, 1000],
  ] as const) {
    const n = QUICK ? n0 / 10 : n0;
    const src = size > 0 ? Buffer.allocUnsafeSlow(size).buffer : undefined;
    w.postMessage('start');
    const t0 = process.hrtime.bigint();
    const cpu0 = ring.cpuNs();
    for (let i = 0; i < n; i++) {
      if (src === undefined) w.postMessage({});
      else if (transfer) {
        const b = Buffer.allocUnsafeSlow(size).buffer;
        w.postMessage({ b }, [b]);
      } else w.postMessage({ b: src });
    }
    const sendCpu = ring.cpuNs() - cpu0;
    w.postMessage('end');
    const [done] = (await once(w, 'message')) as [{ n: number; cpuNs: number }];
    const wallNs = Number(process.hrtime.bigint() - t0);
    if (done.n !== n) throw new Error(`worker counted ${done.n} of ${n}`);
    const mbs = size > 0 ? `${((n * size) / MiB / (wallNs / 1e9)).toFixed(0)} MB/s` : '–';
    row('one way', label, `${((n / wallNs) * 1e9).toFixed(0)} msg/s`, mbs, `${us(sendCpu / n)} µs`, `${us(done.cpuNs / n)} µs`, load());
  }
  await w.terminate();
}

async function sharedRing(): Promise<void> {
  // Atomics.waitAsync holds no handle on the event loop: keep this one alive while waiting.
  const keepAlive = setInterval(() => undefined, 1 << 30);
  try {
    await sharedRingRuns();
  } finally {
    clearInterval(keepAlive);
  }
}

async function sharedRingRuns(): Promise<void> {
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

async function fileIo(): Promise<void> {
  const dir = mkdtempSync(path.join(tmpdir(), 'fjord-handover-'));
  const file = path.join(dir, 'segment');
  const w = startWorker('fs');
  const total = QUICK ? 64 * MiB : 256 * MiB;
  const onMain = (chunk: number, op: string): { wallNs: number; cpuNs: number } => {
    const fd = openSync(file, op === 'write' ? 'w' : 'r');
    const buf = Buffer.alloc(chunk, 120);
    const cpu0 = ring.cpuNs();
    const t0 = process.hrtime.bigint();
    for (let done = 0; done < total; done += chunk) {
      if (op === 'write') writeSync(fd, buf, 0, chunk, done);
      else readSync(fd, buf, 0, chunk, done);
    }
    const wallNs = Number(process.hrtime.bigint() - t0);
    closeSync(fd);
    return { wallNs, cpuNs: ring.cpuNs() - cpu0 };
  };
  try {
    for (const op of ['write', 'read']) {
      for (const chunk of [64 * KiB, MiB]) {
        // Alternate main and worker twice; keep each one's better run.
        const best = { main: Infinity, worker: Infinity, mainCpu: 0, workerCpu: 0 };
        for (let i = 0; i < 2; i++) {
          const m = onMain(chunk, op);
          w.postMessage({ file, chunk, total, op });
          const [x] = (await once(w, 'message')) as [{ wallNs: number; cpuNs: number }];
          if (m.wallNs < best.main) Object.assign(best, { main: m.wallNs, mainCpu: m.cpuNs });
          if (x.wallNs < best.worker) Object.assign(best, { worker: x.wallNs, workerCpu: x.cpuNs });
        }
        const gbs = (ns: number): string => `${(total / MiB / 1024 / (ns / 1e9)).toFixed(2)} GB/s`;
        const perMb = (ns: number): string => `${(ns / 1e6 / (total / MiB)).toFixed(3)} ms/MB`;
        row(`${op}Sync`, `${op}Sync, ${chunk / KiB} KiB calls`, gbs(best.main), perMb(best.mainCpu), gbs(best.worker), perMb(best.workerCpu), load());
      }
    }
  } finally {
    await w.terminate();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** What postMessage does with Buffers that are views of a bigger ArrayBuffer. */
async function bufferSlices(): Promise<void> {
  const w = startWorker('probe');
  const probe = async (label: string, view: Buffer, transfer: boolean, sibling: Buffer): Promise<void> => {
    const before = view.length;
    const backing = view.buffer.byteLength;
    try {
      w.postMessage(view, transfer ? [view.buffer as ArrayBuffer] : []);
      const [got] = (await once(w, 'message')) as [{ length: number; backing: number }];
      row(
        'slice',
        label,
        `sent a ${before} B view of an ArrayBuffer of ${backing} B`,
        `the worker got a ${got.length} B view of an ArrayBuffer of ${got.backing} B`,
        `afterwards the sender's view has ${view.length} B, another view of the same ArrayBuffer ${sibling.length} B`,
      );
    } catch (err) {
      row('slice', label, `postMessage threw: ${String(err)}`);
    }
  };
  const pooled = Buffer.allocUnsafe(KiB);
  const pooledSibling = Buffer.allocUnsafe(KiB);
  await probe('Buffer.allocUnsafe(1 KiB), copied', pooled, false, pooledSibling);
  await probe('Buffer.allocUnsafe(1 KiB), in the transfer list', pooled, true, pooledSibling);
  const chunk = Buffer.allocUnsafeSlow(64 * KiB);
  await probe('1 KiB frame inside a 64 KiB chunk, copied', chunk.subarray(1000, 1000 + KiB), false, chunk.subarray(0, 100));
  await probe('1 KiB frame inside a 64 KiB chunk, in the transfer list', chunk.subarray(1000, 1000 + KiB), true, chunk.subarray(0, 100));
  await w.terminate();
  // The chunks a loopback socket delivers: 1 MiB written as 1 KiB frames.
  const sizes = new Map<string, number>();
  const server = createServer((s) => {
    s.on('data', (d: Buffer) => {
      const key = `${d.length === d.buffer.byteLength ? 'own' : 'view of'} ${d.buffer.byteLength >= 64 * KiB ? '≥64 KiB' : `${d.buffer.byteLength} B`}`;
      sizes.set(key, (sizes.get(key) ?? 0) + 1);
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const c = connect((server.address() as AddressInfo).port, '127.0.0.1');
  await once(c, 'connect');
  for (let i = 0; i < 1024; i++) c.write(Buffer.alloc(KiB, i));
  c.end();
  await once(c, 'close');
  await new Promise((r) => setTimeout(r, 50));
  server.close();
  row('socket chunks', '1 MiB written as 1 KiB writes, loopback', [...sizes].map(([k, v]) => `${v} x ${k} ArrayBuffer`).join(', '));
}

/**
 * The design's produce path in miniature: the main thread (the network thread) hands batches
 * that lie in a SharedArrayBuffer slab to shard workers as (offset, length) messages; each shard
 * computes their CRC32C in place and writes them to its own file, and answers. Against the same
 * work done inline on the main thread. What it shows on any core count: the main thread's CPU
 * per MB once the work has moved (the hand-over, measured whole), and whether a shard's CPU per
 * MB for the same work grows in a worker. Throughput only grows with spare cores.
 */
async function shardPipeline(): Promise<void> {
  const root = path.join(path.dirname(new URL(import.meta.url).pathname), '..');
  const { crc32c } = (await import('@node-rs/crc32')) as { crc32c: (b: Uint8Array) => number };
  const dir = mkdtempSync(path.join(tmpdir(), 'fjord-shards-'));
  const slabBytes = 64 * MiB;
  const fileBytes = 128 * MiB;
  const slab = new SharedArrayBuffer(slabBytes);
  const slabView = Buffer.from(slab);
  for (let i = 0; i < slabBytes; i += 4) slabView.writeUInt32LE((i * 2654435761) >>> 0, i);
  try {
    for (const [batch, total] of [
      [MiB, QUICK ? 64 * MiB : 512 * MiB],
      [16 * KiB, QUICK ? 16 * MiB : 128 * MiB],
    ] as const) {
      const n = total / batch;
      const offsetOf = (i: number): number => (i * batch) % slabBytes;
      for (const shards of [1, 0, 2, 0, 1]) {
        // Workers start (and load their modules) before the clock does.
        const workers = Array.from({ length: shards }, (_, s) => startWorker('shard', { root, slab, file: path.join(dir, `shard-${s}`), fileBytes }));
        await Promise.all(workers.map((w) => once(w, 'message')));
        const t0 = process.hrtime.bigint();
        const cpu0 = ring.cpuNs();
        let shardCpu = 0;
        if (shards === 0) {
          const fd = openSync(path.join(dir, 'inline'), 'w');
          let position = 0;
          for (let i = 0; i < n; i++) {
            const view = slabView.subarray(offsetOf(i), offsetOf(i) + batch);
            crc32c(view);
            writeSync(fd, view, 0, batch, position);
            position = (position + batch) % fileBytes;
          }
          closeSync(fd);
        } else {
          for (const w of workers) w.postMessage('start');
          // Up to 16 batches in flight per shard, handed round-robin, as a network thread would.
          await new Promise<void>((resolve) => {
            let sent = 0;
            let answered = 0;
            const send = (w: Worker): void => {
              if (sent < n) w.postMessage({ off: offsetOf(sent++), len: batch });
            };
            for (const w of workers) {
              w.on('message', () => {
                if (++answered === n) resolve();
                send(w);
              });
              for (let q = 0; q < 16; q++) send(w);
            }
          });
        }
        // Stopped before the workers are asked for their CPU and terminated.
        const wallNs = Number(process.hrtime.bigint() - t0);
        const mainCpu = ring.cpuNs() - cpu0;
        for (const w of workers) {
          w.removeAllListeners('message');
          w.postMessage('end');
          const [done] = (await once(w, 'message')) as [{ cpuNs: number }];
          shardCpu += done.cpuNs;
          await w.terminate();
        }
        const mb = total / MiB;
        row(
          'shards',
          `${batch >= MiB ? `${batch / MiB} MiB` : `${batch / KiB} KiB`} batches`,
          shards === 0 ? 'inline on the main thread' : `${shards} shard worker${shards > 1 ? 's' : ''}`,
          `${(mb / (wallNs / 1e9)).toFixed(0)} MB/s`,
          `${(mainCpu / 1e6 / mb).toFixed(3)} ms/MB`,
          shards === 0 ? '–' : `${(shardCpu / 1e6 / mb).toFixed(3)} ms/MB`,
          shards === 0 ? '–' : `${us(mainCpu / n)} µs`,
          load(),
        );
      }
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * Node 20 can neither hand a socket to a worker nor listen with SO_REUSEPORT: can several threads
 * accept on one listening socket (listen({ fd }))? And do I/O calls take SharedArrayBuffer views?
 */
async function sharedListenFd(): Promise<void> {
  const server = createServer((c) => c.end('main'));
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const fd = (server as unknown as { _handle: { fd: number } })._handle.fd;
  const workers = [startWorker('accept', { fd }), startWorker('accept', { fd })];
  await Promise.all(workers.map((w) => once(w, 'message')));
  const by = new Map<string, number>();
  for (let i = 0; i < 30; i++) {
    const c = connect((server.address() as AddressInfo).port, '127.0.0.1');
    const [d] = (await once(c, 'data')) as [Buffer];
    const who = d.toString() === 'main' ? 'main' : `worker ${d.toString()}`;
    by.set(who, (by.get(who) ?? 0) + 1);
    c.destroy();
  }
  for (const w of workers) {
    w.postMessage('close');
    await once(w, 'message');
    await w.terminate();
  }
  server.close();
  row(
    'listen fd',
    `30 connections to one listening socket, accepted by the main thread and two workers (listen({ fd })): ${[...by].map(([k, v]) => `${k}: ${v}`).join(', ')}`,
  );
  const sab = new SharedArrayBuffer(4096);
  const view = Buffer.from(sab, 100, 1000).fill(65);
  const dir = mkdtempSync(path.join(tmpdir(), 'fjord-handover-'));
  try {
    const fd2 = openSync(path.join(dir, 'f'), 'w+');
    const wrote = writeSync(fd2, view, 0, 1000, 0);
    const read = readSync(fd2, view, 0, 1000, 0);
    closeSync(fd2);
    const echo = createServer((c) => c.end(view.subarray(0, 10)));
    echo.listen(0, '127.0.0.1');
    await once(echo, 'listening');
    const c = connect((echo.address() as AddressInfo).port, '127.0.0.1');
    const [d] = (await once(c, 'data')) as [Buffer];
    c.destroy();
    echo.close();
    row('listen fd', `a Buffer over a SharedArrayBuffer: writeSync wrote ${wrote} B, readSync read ${read} B, socket.write sent ${d.length} B`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  const started = Date.now();
  console.error(`node ${process.version}, ${cpus().length} cores (${cpus()[0]?.model ?? '?'}), load average ${load()}`);
  await postMessageRoundTrips();
  await postMessageThroughput();
  await sharedRing();
  await shardPipeline();
  await fileIo();
  await bufferSlices();
  await sharedListenFd();
  const header = `node ${process.version}; ${cpus().length} cores (${cpus()[0]?.model ?? '?'}); ${((Date.now() - started) / 1000).toFixed(0)} s; load average at the end ${load()}`;
  const table = (kind: string, head: string[]): string => {
    const body = rows.filter((r) => r[0] === kind).map((r) => `| ${r.slice(1).join(' | ')} |`);
    return `| ${head.join(' | ')} |\n|${head.map(() => '---').join('|')}|\n${body.join('\n')}`;
  };
  console.log(
    [
      header,
      table('round trip', ['postMessage round trip (median)', 'main ↔ worker', 'MessageChannel port ↔ worker', 'MessageChannel, same thread', 'load average']),
      table('one way', [
        'postMessage one way, pipelined',
        'messages/s',
        'MB/s (transferred: moved by reference, never touched)',
        'sender CPU / msg',
        'receiver CPU / msg',
        'load average',
      ]),
      [
        table('ring round trip', ['SAB ring round trip (Atomics.waitAsync both sides)', 'median', 'p99', 'load average']),
        table('ring one way', [
          'SAB ring one way (copy in, read in place)',
          'messages/s',
          'MB/s',
          'producer CPU / msg',
          'consumer CPU / msg',
          'producer waits (ring full)',
          'load average',
        ]),
      ].join('\n\n'),
      table('shards', [
        'CRC32C + write of batches in a shared slab',
        'where',
        'MB/s',
        'main thread CPU / MB',
        'shard workers CPU / MB (all)',
        'main thread CPU / batch (the hand-over)',
        'load average',
      ]),
      [
        table('writeSync', ['file I/O (page cache)', 'main thread', 'main CPU', 'worker', 'worker CPU', 'load average']),
        rows
          .filter((r) => r[0] === 'readSync')
          .map((r) => `| ${r.slice(1).join(' | ')} |`)
          .join('\n'),
      ].join('\n'),
      [...rows.filter((r) => r[0] === 'slice' || r[0] === 'socket chunks' || r[0] === 'listen fd').map((r) => `- ${r.slice(1).join('; ')}`)].join('\n'),
    ].join('\n\n'),
  );
}

await main();
