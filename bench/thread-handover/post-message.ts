/**
 * postMessage between threads: round trips (copied, transferred, over a MessageChannel) and one way, pipelined.
 */
import { once } from 'node:events';
import { MessageChannel, type Worker, type MessagePort } from 'node:worker_threads';
import { QUICK, KiB, MiB, load, ring, startWorker, type Msg, row, us, roundTrips } from './common.js';

export async function postMessageRoundTrips(): Promise<void> {
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
export async function postMessageThroughput(): Promise<void> {
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
