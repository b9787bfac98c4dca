// The main thread's side of the network threads (num.network.threads = M > 1, docs/threads.md
// "Step 4, as built"): binds every listener's socket and holds it, starts M threads that each
// accept on a copy of it, and turns what they post into RemoteSockets for the socket server's
// Connections (and the other way round). A thread that ends closes only its own connections
// (their clients reconnect, to the other threads meanwhile) and is started again.
import { Worker } from 'node:worker_threads';
import type { ListenerSpec } from '../listeners.js';
import type { FrameLimits, NetworkLogger } from '../types.js';
import { bindListenerSocket, type RawSocketHandle } from './listen-socket-copies.js';
import type { NetworkThreadInit, ThreadListenerTls, ToMain, ToThread } from './protocol.js';
import { RemoteSocket } from './remote-socket.js';
import { ThreadRestarts } from './thread-restarts.js';

export type OpenMessage = Extract<ToMain, { t: 'open' }>;
export type RefusedMessage = Extract<ToMain, { t: 'refused' }>;
export type ClosedMessage = Extract<ToMain, { t: 'closed' }>;

/** What the socket server does with what the threads report. */
export interface NetworkThreadsHost {
  /** A connection was accepted (TLS: its handshake done); the host admits and serves it, or destroys it. */
  opened(remote: RemoteSocket, open: OpenMessage): void;
  /** A TLS handshake failed or timed out on a thread. */
  refused(m: RefusedMessage): void;
  /** A thread closed a connection for something its peer did (a refused frame size). */
  closedFor(remote: RemoteSocket, m: ClosedMessage): void;
}

export interface NetworkThreadsOptions {
  count: number;
  listeners: ListenerSpec[];
  backlog: number;
  socketRequestMaxBytes: number;
  /** queued.max.request.bytes: each thread may hold its share of it in frames being read. */
  queuedMaxRequestBytes: number;
  tlsHandshakeTimeoutMs: number;
  requestReceiveTimeoutMs: number;
  /** A new connection's frame limits on a listener (SASL: small until authenticated), as at one thread. */
  initialFrameLimits?: (listener: ListenerSpec) => FrameLimits | undefined;
  tlsOf: (listener: string) => ThreadListenerTls | undefined;
  logger: NetworkLogger;
}

interface NetworkThread {
  index: number;
  worker: Worker;
  startedAt: number;
  remotes: Map<number, RemoteSocket>;
  ready: Promise<void>;
  /** Connections this thread accepted since the broker started (all its incarnations). */
  accepted: number;
  alive: boolean;
}

export class NetworkThreads {
  private readonly held = new Map<string, { handle: RawSocketHandle; port: number }>();
  private readonly threads: NetworkThread[] = [];
  private readonly restarts: ThreadRestarts;
  private stopping = false;
  private readonly stoppedAccepting = new Map<number, () => void>();

  constructor(
    private readonly opts: NetworkThreadsOptions,
    private readonly host: NetworkThreadsHost,
  ) {
    this.restarts = new ThreadRestarts(opts.count);
  }

  /** Binds every listener, then starts the threads; rejects (after giving back what it took) if one cannot bind. */
  async start(): Promise<void> {
    try {
      for (const spec of this.opts.listeners) {
        try {
          this.held.set(spec.name, await bindListenerSocket(spec.host, spec.port));
        } catch (err) {
          throw new Error(`Cannot bind listener ${spec.name} on ${spec.host}:${spec.port}: ${(err as Error).message}`);
        }
      }
      for (let i = 0; i < this.opts.count; i++) this.threads.push(this.spawn(i, 0));
      await Promise.all(this.threads.map((t) => t.ready));
      // Said once the threads listen (tests and scripts connect as soon as they read it).
      for (const spec of this.opts.listeners) {
        const port = this.held.get(spec.name)!.port;
        this.opts.logger.info({ listener: spec.name, host: spec.host, port }, `listening on ${spec.name}://${spec.host}:${port}`);
      }
      this.opts.logger.info({ threads: this.opts.count }, `${this.opts.count} network threads accept on every listener (num.network.threads)`);
      // The first form: say what differs from one network thread, once, where an operator looks.
      this.opts.logger.warn(
        { threads: this.opts.count },
        'num.network.threads > 1 is a first form (docs/threads.md "Step 4, as built"): the network threads read, write, run TLS and frame requests; ' +
          'every request is still decoded and routed on the main thread, and a TLS connection counts against the connection limits once its handshake completes',
      );
    } catch (err) {
      await this.stop();
      throw err;
    }
  }

  boundPorts(): Map<string, number> {
    return new Map([...this.held].map(([name, { port }]) => [name, port]));
  }

  /** Connections each thread accepted since start (the stat tests read to see the spread). */
  acceptedPerThread(): number[] {
    return this.threads.map((t) => t.accepted);
  }

  /** Threads running now (0 once stopped). */
  live(): number {
    return this.threads.filter((t) => t.alive).length;
  }

  /** A renewed certificate: new connections on every thread use it. */
  setTls(listener: string, tls: ThreadListenerTls): void {
    for (const t of this.threads) this.post(t, { t: 'tls', listener, tls });
  }

  /** Every thread stops accepting, then the main thread lets go of the listeners' sockets. */
  async stopAccepting(): Promise<void> {
    this.stopping = true;
    await Promise.all(
      this.threads.map(
        (t) =>
          new Promise<void>((resolve) => {
            const timer = setTimeout(resolve, 2000); // a thread that does not answer is ended by stop()
            this.stoppedAccepting.set(t.index, () => {
              clearTimeout(timer);
              resolve();
            });
            this.post(t, { t: 'stop-accepting' });
          }),
      ),
    );
    for (const { handle } of this.held.values()) handle.close();
    this.held.clear();
  }

  /** Ends every thread (their connections, if any are left, close with them). */
  async stop(): Promise<void> {
    this.stopping = true;
    this.restarts.cancelAll();
    for (const { handle } of this.held.values()) handle.close();
    this.held.clear();
    await Promise.all(this.threads.map((t) => t.worker.terminate()));
  }

  /** Tests: ends thread `index` as a crash would (its connections close, it is started again). */
  async crashForTest(index: number): Promise<void> {
    await this.threads[index]?.worker.terminate();
  }

  private spawn(index: number, accepted: number): NetworkThread {
    const init: NetworkThreadInit = {
      index,
      listeners: this.opts.listeners.map((spec) => {
        const tls = this.opts.tlsOf(spec.name);
        const initialFrameLimits = this.opts.initialFrameLimits?.(spec);
        return { ...spec, fd: this.held.get(spec.name)!.handle.fd, ...(tls ? { tls } : {}), ...(initialFrameLimits ? { initialFrameLimits } : {}) };
      }),
      backlog: this.opts.backlog,
      socketRequestMaxBytes: this.opts.socketRequestMaxBytes,
      readingMemoryBytes: this.opts.queuedMaxRequestBytes > 0 ? Math.max(1, Math.floor(this.opts.queuedMaxRequestBytes / this.opts.count)) : 0,
      tlsHandshakeTimeoutMs: this.opts.tlsHandshakeTimeoutMs,
      requestReceiveTimeoutMs: this.opts.requestReceiveTimeoutMs,
    };
    const worker = startWorker(init);
    let readyResolve: () => void = () => undefined;
    let readyReject: (err: Error) => void = () => undefined;
    const ready = new Promise<void>((resolve, reject) => {
      readyResolve = resolve;
      readyReject = reject;
    });
    const thread: NetworkThread = { index, worker, startedAt: Date.now(), remotes: new Map(), ready, accepted, alive: true };
    worker.on('message', (m: ToMain) => {
      if (m.t === 'ready') readyResolve();
      else if (m.t === 'listen-failed') readyReject(new Error(`network thread ${index} cannot listen: ${m.message}`));
      else this.onMessage(thread, m);
    });
    worker.on('error', (err) => {
      this.opts.logger.error({ thread: index, err: err.message }, 'network thread failed');
      readyReject(err);
    });
    worker.on('exit', (code) => {
      readyReject(new Error(`network thread ${index} exited with code ${code}`));
      this.onExit(thread, code);
    });
    return thread;
  }

  private onMessage(thread: NetworkThread, m: ToMain): void {
    switch (m.t) {
      case 'open': {
        thread.accepted++;
        const remote = new RemoteSocket(m.id, (msg, transfer) => this.post(thread, msg, transfer));
        thread.remotes.set(m.id, remote);
        this.host.opened(remote, m);
        break;
      }
      case 'frames':
        thread.remotes.get(m.id)?.onFrames(Buffer.from(m.bytes.buffer, m.bytes.byteOffset, m.bytes.byteLength));
        break;
      case 'end':
        thread.remotes.get(m.id)?.onEnd();
        break;
      case 'written':
        thread.remotes.get(m.id)?.onWritten(m.upTo);
        break;
      case 'closed': {
        const remote = thread.remotes.get(m.id);
        if (remote === undefined) break;
        thread.remotes.delete(m.id);
        if (m.reason !== undefined) this.host.closedFor(remote, m);
        remote.onClosed();
        break;
      }
      case 'refused':
        this.host.refused(m);
        break;
      case 'stopped-accepting':
        this.stoppedAccepting.get(thread.index)?.();
        break;
      case 'ready':
      case 'listen-failed':
        break;
    }
  }

  private onExit(thread: NetworkThread, code: number): void {
    thread.alive = false;
    const lost = thread.remotes.size;
    for (const remote of thread.remotes.values()) remote.onClosed();
    thread.remotes.clear();
    this.stoppedAccepting.get(thread.index)?.();
    if (this.stopping || this.threads[thread.index] !== thread) return;
    const delayMs = this.restarts.delayAfterExit(thread.index, Date.now() - thread.startedAt);
    this.opts.logger.warn(
      { thread: thread.index, code, closedConnections: lost, restartInMs: delayMs },
      `network thread ${thread.index} ended (code ${code}): its ${lost} connections closed; starting it again in ${delayMs} ms`,
    );
    this.restarts.schedule(delayMs, () => {
      if (this.stopping) return;
      const next = this.spawn(thread.index, thread.accepted);
      this.threads[thread.index] = next;
      // A thread that cannot listen again (listen-failed) would hold its slot without accepting:
      // end it, so that its exit schedules the next try through the restart policy's backoff.
      next.ready.catch((err: unknown) => {
        this.opts.logger.error({ thread: thread.index, err: (err as Error).message }, 'network thread did not start again');
        void next.worker.terminate();
      });
    });
  }

  private post(thread: NetworkThread, m: ToThread, transfer?: ArrayBuffer[]): void {
    thread.worker.postMessage(m, transfer);
  }
}

function startWorker(init: NetworkThreadInit): Worker {
  const here = import.meta.url;
  if (here.endsWith('.ts')) {
    // Under tsx (tests, benches) the thread is TypeScript too and Node 20 does not give a worker
    // its parent's `--import tsx` hooks: register them there first (as shard-channels.ts does).
    const entry = new URL('./network-thread.ts', here).href;
    const tsx = import.meta.resolve('tsx/esm/api');
    const boot = `import(${JSON.stringify(tsx)}).then((tsx) => { tsx.register(); return import(${JSON.stringify(entry)}); })`;
    return new Worker(boot, { eval: true, workerData: init });
  }
  return new Worker(new URL('./network-thread.js', here), { workerData: init });
}
