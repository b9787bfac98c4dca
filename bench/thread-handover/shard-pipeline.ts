/**
 * The produce path in miniature: batches in a shared slab handed to 0, 1 and 2 shard workers.
 */
import { once } from 'node:events';
import { mkdtempSync, openSync, closeSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Worker } from 'node:worker_threads';
import { QUICK, KiB, MiB, load, ring, startWorker, row, us } from './common.js';

/**
 * The design's produce path in miniature: the main thread (the network thread) hands batches
 * that lie in a SharedArrayBuffer slab to shard workers as (offset, length) messages; each shard
 * computes their CRC32C in place and writes them to its own file, and answers. Against the same
 * work done inline on the main thread. What it shows on any core count: the main thread's CPU
 * per MB once the work has moved (the hand-over, measured whole), and whether a shard's CPU per
 * MB for the same work grows in a worker. Throughput only grows with spare cores.
 */
export async function shardPipeline(): Promise<void> {
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
