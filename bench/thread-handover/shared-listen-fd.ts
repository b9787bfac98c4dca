/**
 * Whether threads can share one listening socket, and whether I/O calls take SharedArrayBuffer views.
 */
import { once } from 'node:events';
import { mkdtempSync, openSync, closeSync, rmSync, writeSync, readSync } from 'node:fs';
import { createServer, connect, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startWorker, row } from './common.js';

/**
 * Node 20 can neither hand a socket to a worker nor listen with SO_REUSEPORT: can several threads
 * accept on one listening socket (listen({ fd }))? And do I/O calls take SharedArrayBuffer views?
 */
export async function sharedListenFd(): Promise<void> {
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
