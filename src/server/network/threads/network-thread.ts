// A network thread (num.network.threads > 1, docs/threads.md "Step 4, as built"): accepts on a
// copy of every listener's socket, runs TLS, reads request frames within the size limits and its
// share of the request memory, and posts each batch of whole frames to the main thread in shared
// memory; writes the answers the main thread posts back, in the order posted. Everything a
// request means (routing, SASL, quotas, the order of answers) stays on the main thread.
import net from 'node:net';
import tls from 'node:tls';
import { parentPort, workerData } from 'node:worker_threads';
import { FrameReader, FrameSizeError, MIN_REQUEST_FRAME_BYTES } from '../frame-reader.js';
import { frameRefusal } from '../frame-refusal.js';
import { ReceiveClock, receiveTimeoutClose } from '../connection-clocks.js';
import type { FrameLimits } from '../types.js';
import { FrameAdmission, RequestMemoryPool } from '../request-memory.js';
import { copyIntoShared } from '../shared-frame-buffers.js';
import { copyListenerSocket } from './listen-socket-copies.js';
import { usesSasl } from '../../../security/security-protocol.js';
import type { CloseReason } from '../close-log.js';
import { ANONYMOUS } from '../../../security/principal.js';
import type { NetworkThreadInit, ThreadListener, ThreadListenerTls, ToMain, ToThread, TlsPeer } from './protocol.js';

const init = workerData as NetworkThreadInit;
const port = parentPort!;
const post = (m: ToMain, transfer?: ArrayBuffer[]): void => port.postMessage(m, transfer);
const readingMemory = new RequestMemoryPool(init.readingMemoryBytes);
const sockets = new Map<number, ThreadConnection>();
const servers: net.Server[] = [];
const tlsServers = new Map<string, tls.Server>();
let nextId = 1;

class ThreadConnection {
  private readonly reader: FrameReader;
  private readonly admission: FrameAdmission;
  private served = false;
  private pausedByMain = false;
  private closed = false;
  private dispatched = 0;
  /** Until authenticated on a SASL listener: sasl.server.max.receive.size, refused at the size prefix as at one thread. */
  private limits: FrameLimits | undefined;
  /** socket.request.receive.timeout.ms: only this thread sees a frame's first byte, so its clock runs here. */
  private readonly receiveClock: ReceiveClock;

  constructor(
    readonly id: number,
    private readonly socket: net.Socket,
    private readonly listener: ThreadListener,
  ) {
    // Before authentication a SASL listener's frames are raw tokens (no header minimum); the main
    // thread checks the exact limits (sasl.server.max.receive.size) as it reads each frame.
    const minBytes = usesSasl(listener.securityProtocol) ? 0 : MIN_REQUEST_FRAME_BYTES;
    const afterAuthentication: FrameLimits = { maxBytes: init.socketRequestMaxBytes, minBytes, maxName: 'socket.request.max.bytes' };
    this.limits = listener.initialFrameLimits;
    this.reader = new FrameReader(init.socketRequestMaxBytes, () => this.limits ?? afterAuthentication);
    this.admission = new FrameAdmission(readingMemory, () => queueMicrotask(() => this.readFrames()));
    this.receiveClock = new ReceiveClock(init.requestReceiveTimeoutMs, {
      isClosed: () => this.closed,
      onReceiveTimeout: (timeoutMs) => {
        const c = receiveTimeoutClose(timeoutMs, this.reader.bufferedBytes, this.admission.reservedBytes);
        this.closeFor(c.reason, c.message, c.fields);
      },
    });
    socket.setNoDelay(true);
    socket.pause();
    socket.on('data', (chunk: Buffer) => {
      if (this.closed) return;
      this.reader.push(chunk);
      this.readFrames();
    });
    socket.on('end', () => post({ t: 'end', id }));
    socket.on('error', () => this.socket.destroy()); // reported by 'close'
    socket.on('close', () => this.onClose());
  }

  serve(): void {
    this.served = true;
    this.updateFlow();
  }

  setLimits(limits: FrameLimits | undefined): void {
    this.limits = limits;
  }

  setPaused(paused: boolean): void {
    this.pausedByMain = paused;
    this.updateFlow();
  }

  write(bytes: Uint8Array, upTo: number, ack: boolean): void {
    if (this.closed) return;
    this.socket.write(bytes, ack ? () => post({ t: 'written', id: this.id, upTo }) : undefined);
  }

  /** Says 'written' once everything posted so far has been taken by the kernel (callbacks run in order). */
  ack(upTo: number): void {
    if (this.closed) return;
    this.socket.write(Buffer.alloc(0), () => post({ t: 'written', id: this.id, upTo }));
  }

  end(): void {
    if (!this.closed) this.socket.end();
  }

  destroy(): void {
    this.socket.destroy();
  }

  /** Posts every whole frame buffered, within this thread's share of the request memory. */
  private readFrames(): void {
    const frames: Buffer[] = [];
    let bytes = 0;
    try {
      for (;;) {
        const size = this.reader.frameSize();
        if (size < 0 || !this.admission.admit(size)) break;
        const frame = this.reader.takeFrame();
        if (frame === null) break;
        this.receiveClock.frameDone();
        readingMemory.release(this.admission.take()); // the main thread's pool holds it from here
        frames.push(frame);
        bytes += 4 + frame.length;
      }
    } catch (err) {
      if (!(err instanceof FrameSizeError)) throw err;
      const refusal = frameRefusal(
        err,
        {
          connectionId: String(this.id),
          clientHost: this.socket.remoteAddress ?? 'unknown',
          clientPort: this.socket.remotePort ?? 0,
          listenerName: this.listener.name,
          localPort: this.socket.localPort ?? 0,
          securityProtocol: this.listener.securityProtocol,
          principal: ANONYMOUS,
        },
        this.dispatched === 0 && frames.length === 0,
      );
      this.postFrames(frames, bytes);
      this.closeFor(refusal.reason, refusal.message, refusal.fields);
      return;
    }
    this.postFrames(frames, bytes);
    this.updateFlow();
  }

  /** One shared buffer for the batch: the main thread (and shard workers) read the frames in place. */
  private postFrames(frames: Buffer[], bytes: number): void {
    if (frames.length === 0) return;
    this.dispatched += frames.length;
    const out = Buffer.from(new SharedArrayBuffer(bytes));
    let offset = 0;
    for (const frame of frames) {
      out.writeInt32BE(frame.length, offset);
      copyIntoShared(frame, out, offset + 4);
      offset += 4 + frame.length;
    }
    post({ t: 'frames', id: this.id, bytes: out });
  }

  private updateFlow(): void {
    if (this.closed) return;
    const reading = this.served && !this.pausedByMain && !this.admission.waiting;
    if (reading) this.socket.resume();
    else this.socket.pause();
    // As at one thread: the clock counts while part of a frame is here and the rest is the peer's to
    // send; it stops (keeping its count) while the broker itself does not read.
    this.receiveClock.update(this.reader.bufferedBytes > 0, reading);
  }

  private closeFor(reason: CloseReason, message: string, fields: Record<string, unknown>): void {
    if (this.closed) return;
    this.closed = true;
    this.release();
    post({ t: 'closed', id: this.id, reason, message, fields });
    this.socket.destroy();
  }

  private release(): void {
    this.receiveClock.stop(true);
    this.reader.clear();
    this.admission.drop();
  }

  private onClose(): void {
    sockets.delete(this.id);
    if (this.closed) return;
    this.closed = true;
    this.release();
    post({ t: 'closed', id: this.id });
  }
}

function opened(listener: ThreadListener, socket: net.Socket, tlsPeer?: TlsPeer): void {
  const id = nextId++;
  sockets.set(id, new ThreadConnection(id, socket, listener));
  post({
    t: 'open',
    id,
    listener: listener.name,
    clientHost: socket.remoteAddress ?? 'unknown',
    clientPort: socket.remotePort ?? 0,
    localHost: socket.localAddress ?? listener.host,
    localPort: socket.localPort ?? listener.port,
    ...(tlsPeer ? { tlsPeer } : {}),
  });
}

function tlsOptions(t: ThreadListenerTls): tls.TlsOptions {
  return {
    ...t.material,
    minVersion: t.minVersion as tls.SecureVersion,
    maxVersion: t.maxVersion as tls.SecureVersion,
    ...(t.ciphers !== undefined ? { ciphers: t.ciphers } : {}),
    requestCert: t.clientAuth !== 'none',
    rejectUnauthorized: t.clientAuth === 'required',
  };
}

function tlsServerFor(listener: ThreadListener, t: ThreadListenerTls): tls.Server {
  const server = tls.createServer({
    allowHalfOpen: true,
    noDelay: true,
    ...tlsOptions(t),
    handshakeTimeout: init.tlsHandshakeTimeoutMs > 0 ? init.tlsHandshakeTimeoutMs : 0x7fffffff,
  });
  server.on('secureConnection', (socket: tls.TLSSocket) => {
    const cert = socket.getPeerX509Certificate();
    const peer: TlsPeer = {
      authorized: socket.authorized,
      ...(cert ? { certificate: new Uint8Array(cert.raw) } : {}),
      ...(socket.authorizationError ? { authorizationError: String(socket.authorizationError) } : {}),
    };
    opened(listener, socket, peer);
  });
  server.on('tlsClientError', (err: NodeJS.ErrnoException, socket: tls.TLSSocket) => {
    const timedOut = err.code === 'ERR_TLS_HANDSHAKE_TIMEOUT';
    post({
      t: 'refused',
      reason: timedOut ? 'tls-handshake-timeout' : 'tls-handshake-failed',
      message: timedOut
        ? `TLS handshake not completed within ${init.tlsHandshakeTimeoutMs} ms`
        : `TLS handshake failed: ${err.message.split('\n')[0] ?? err.message}`,
      clientHost: socket.remoteAddress ?? 'unknown',
      clientPort: socket.remotePort ?? 0,
      listener: listener.name,
    });
    socket.destroy();
  });
  tlsServers.set(listener.name, server);
  return server;
}

async function listen(listener: ThreadListener): Promise<void> {
  const handle = await copyListenerSocket(listener.fd);
  const server =
    listener.tls !== undefined
      ? tlsServerFor(listener, listener.tls)
      : net.createServer({ allowHalfOpen: true, noDelay: true, pauseOnConnect: true }, (socket) => opened(listener, socket));
  servers.push(server);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    // A raw TCP handle: Node's listen takes it as the server's own.
    server.listen(handle as unknown as net.ListenOptions, init.backlog, () => {
      server.off('error', reject);
      resolve();
    });
  });
}

port.on('message', (m: ToThread) => {
  switch (m.t) {
    case 'serve':
      sockets.get(m.id)?.serve();
      break;
    case 'pause':
    case 'resume':
      sockets.get(m.id)?.setPaused(m.t === 'pause');
      break;
    case 'write':
      sockets.get(m.id)?.write(m.bytes, m.upTo, m.ack);
      break;
    case 'ack':
      sockets.get(m.id)?.ack(m.upTo);
      break;
    case 'limits':
      sockets.get(m.id)?.setLimits(m.limits);
      break;
    case 'end':
      sockets.get(m.id)?.end();
      break;
    case 'destroy':
      sockets.get(m.id)?.destroy();
      break;
    case 'tls': {
      const server = tlsServers.get(m.listener);
      if (server === undefined) break;
      const options = tlsOptions(m.tls);
      server.setSecureContext(options);
      const auth = server as unknown as { requestCert: boolean; rejectUnauthorized: boolean };
      auth.requestCert = options.requestCert === true;
      auth.rejectUnauthorized = options.rejectUnauthorized === true;
      break;
    }
    case 'stop-accepting':
      // close() stops accepting at once (its callback would wait for the connections, which the
      // main thread closes one by one as they drain).
      for (const s of servers) s.close();
      post({ t: 'stopped-accepting' });
      break;
  }
});

Promise.all(init.listeners.map((l) => listen(l))).then(
  () => post({ t: 'ready' }),
  (err: unknown) => post({ t: 'listen-failed', listener: '', message: err instanceof Error ? err.message : String(err) }),
);
