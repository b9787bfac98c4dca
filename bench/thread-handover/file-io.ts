/**
 * writeSync / readSync of a file from the main thread and from a worker.
 */
import { once } from 'node:events';
import { mkdtempSync, openSync, closeSync, rmSync, writeSync, readSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { QUICK, KiB, MiB, load, ring, startWorker, row } from './common.js';

export async function fileIo(): Promise<void> {
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
