// Each network thread accepts on every listener through a listening socket of its own: a copy
// (another file descriptor) of one socket that the main thread binds and holds. Node 20 cannot
// duplicate a descriptor or set SO_REUSEPORT, and a worker that `listen({ fd })`s on the main
// thread's own descriptor would close it for everyone when it ends (libuv closes the descriptor
// with the handle), and close it twice (someone else's file by then) at shutdown. So copies come
// the one way Node gives: a handle sent over an IPC channel (SCM_RIGHTS) arrives as a new
// descriptor. A short-lived helper process does the sending (docs/threads.md "Step 4, as built"):
// - `bind`: binds (never listens: nobody accepts in the helper or on the main thread) and sends
//   the bound socket to the main thread, which holds it so the port stays the listener's while
//   network threads come and go;
// - `copy`: gets the main thread's socket as its fd 3 and sends it to the network thread that
//   started it, whose `server.listen(handle)` makes it listen (listen(2) on a socket that already
//   listens only sets the backlog) and accepts on it.
// The kernel keeps one accept queue per socket, so every copy takes connections from the same
// queue: a thread that ends loses none that are waiting, and the listener stops only when the
// main thread and every thread have closed theirs.
import { spawn } from 'node:child_process';
import dns from 'node:dns/promises';
import net from 'node:net';
import { getSystemErrorName } from 'node:util';

/** A TCP handle as Node's IPC hands it over ('net.Native'): its descriptor, closable once. */
export interface RawSocketHandle {
  readonly fd: number;
  close(callback?: () => void): void;
}

// Plain JavaScript run by `node -e`: the raw TCP handle is process.binding('tcp_wrap') (the only
// way to hold a socket without listening on it), so it lives in the helper, not in the broker.
const HELPER = `
const { TCP, constants } = process.binding('tcp_wrap');
const [mode, host, port] = process.argv.slice(1);
const h = new TCP(constants.SERVER);
let err = 0;
if (mode === 'bind') err = host.includes(':') ? h.bind6(host, Number(port), 0) : h.bind(host, Number(port));
else err = h.open(3);
const out = {};
if (!err) h.getsockname(out);
// libuv defers a bind's EADDRINUSE to listen(): a socket left unbound has no port.
if (!err && !out.port) err = 'EADDRINUSE';
if (err) { process.send({ err }, () => process.exit(1)); }
else { process.send({ port: out.port }, h, () => process.exit(0)); }
`;

function runHelper(args: string[], fd?: number): Promise<{ port: number; handle: RawSocketHandle }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--no-deprecation', '-e', HELPER, ...args], {
      stdio: ['ignore', 'ignore', 'inherit', fd === undefined ? 'ignore' : fd, 'ipc'],
      // The broker's own options (--import tsx, heap flags) are not the helper's.
      env: { ...process.env, NODE_OPTIONS: '' },
    });
    let settled = false;
    child.once('message', (m: { err?: number | string; port?: number }, handle: unknown) => {
      settled = true;
      if (m.err !== undefined || handle === undefined) reject(new Error(describe(m.err)));
      else resolve({ port: m.port ?? 0, handle: handle as RawSocketHandle });
    });
    child.once('error', (err) => {
      if (!settled) reject(err);
    });
    child.once('exit', (code) => {
      if (!settled) reject(new Error(`listener helper exited with code ${code ?? 'null'}`));
    });
  });
}

function describe(err: number | string | undefined): string {
  if (err === undefined) return 'no socket came back';
  return typeof err === 'number' ? getSystemErrorName(err) : err;
}

/** Binds host:port (resolved as net.Server would) without listening; the caller holds the socket. */
export async function bindListenerSocket(host: string, port: number): Promise<{ port: number; handle: RawSocketHandle }> {
  const address = net.isIP(host) !== 0 ? host : (await dns.lookup(host)).address;
  return runHelper(['bind', address, String(port)]);
}

/** A copy of the socket with descriptor `fd` (held by the main thread), for this thread to listen on. */
export async function copyListenerSocket(fd: number): Promise<RawSocketHandle> {
  return (await runHelper(['copy'], fd)).handle;
}
