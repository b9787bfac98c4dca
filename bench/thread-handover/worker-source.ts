/**
 * The JavaScript the hand-over experiments' workers run (eval'd), and the SPSC ring both sides share.
 */

/**
 * The SPSC ring, as JavaScript source: the worker (an eval'd script) and this thread share it.
 * Header (Int32, in the first 64 bytes): [0] head (next write position), [1] tail (next read
 * position), [2] pushes (the consumer waits on it), [3] pops (a producer with a full ring waits on it).
 * Records: int32 length, bytes, padded to 4; -1 (or under 4 bytes left) means "continue at 0".
 * head === tail is empty, so the producer never fills the ring completely.
 */
export const RING_JS = `
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

export const WORKER_JS = `
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
