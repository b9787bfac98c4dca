/**
 * What postMessage does with Buffer slices, and the socket chunks Node hands over on loopback.
 */
import { once } from 'node:events';
import { createServer, connect, type AddressInfo } from 'node:net';
import { KiB, startWorker, row } from './common.js';

/** What postMessage does with Buffers that are views of a bigger ArrayBuffer. */
export async function bufferSlices(): Promise<void> {
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
