/**
 * ZkSession's primitives on the caller's thread, run by node-zookeeper-client on a worker
 * thread of its own (zk-session-worker.ts). The client there answers the server's pings while
 * this thread is busy, so a request that holds the broker's loop past the session timeout no
 * longer costs it the session, its registration or its controllership (Kafka's ZooKeeper
 * client has its own threads for the same reason).
 *
 * Each call is a message; replies, watch events and session events come back on one port in
 * the order the worker saw them, so a watch that fired before a later operation's reply is
 * delivered before that reply. They are not batched: each is its own task here, with promise
 * continuations run in between, as the client's callbacks were on one thread. Watchers become ids (the same function keeps its id while the
 * client may still fire it; the worker says when it no longer can).
 *
 * A worker that dies (an uncaught error, out of memory) takes its client, and with it the
 * session, along: that is reported as an expiry. The error is logged, calls in flight fail
 * with SESSION_EXPIRED, `expired` is emitted, and a new worker first ends the old session (so
 * its ephemeral nodes go now, not at its timeout) and then opens a new one (`newSession`), as
 * after any expiry.
 */
import { Worker } from 'node:worker_threads';
import type { Logger } from 'pino';
import {
  ZkError,
  type ZkBackend,
  type ZkBufferOp,
  type ZkCreateMode,
  type ZkSessionCredentials,
  type ZkSessionEvent,
  type ZkSessionOptions,
  type ZkStat,
  type ZkWatcher,
} from './zk-session.js';
import {
  asBuffer,
  fromWireError,
  ownCopy,
  type FromWorker,
  type ToWorker,
  type WireOp,
  type WireSessionState,
  type WireValue,
  type WorkerInit,
} from './zk-worker-protocol.js';
import { messageOf } from '../../common/errors.js';

/** Pause between attempts to replace a dead worker (each attempt is bounded by the connection timeout). */
const RESTART_BACKOFF_MS = 1000;
/** How long close waits for the worker to close its session before stopping it anyway. */
const CLOSE_WAIT_MS = 3000;

function spawnWorker(init: WorkerInit): Worker {
  const here = import.meta.url;
  if (here.endsWith('.ts')) {
    // Under tsx (tests, tools run from source) the worker is TypeScript too, and Node 20 does
    // not give a worker the `--import tsx` hooks of its parent: register them there first.
    const entry = new URL('./zk-session-worker.ts', here).href;
    const tsx = import.meta.resolve('tsx/esm/api');
    const boot = `import(${JSON.stringify(tsx)}).then((tsx) => { tsx.register(); return import(${JSON.stringify(entry)}); })`;
    return new Worker(boot, { eval: true, workerData: init });
  }
  return new Worker(new URL('./zk-session-worker.js', here), { workerData: init });
}

interface Pending {
  resolve(value: WireValue): void;
  reject(err: ZkError): void;
  watchId: number | undefined;
}

interface WatchEntry {
  fn: ZkWatcher;
  /** Calls carrying this watcher not answered yet. */
  pending: number;
  /** Whether the worker's client holds it (as of the last message about it). */
  live: boolean;
}

/** A started worker and the answer to its opening. */
interface Started {
  worker: Worker;
  opened: Promise<WireSessionState>;
}

export class WorkerBackend implements ZkBackend {
  private worker!: Worker;
  private state!: WireSessionState;
  private closed = false;
  private renewing: Promise<void> | undefined;
  private nextSeq = 1;
  private nextWatchId = 1;
  private readonly pending = new Map<number, Pending>();
  private readonly watches = new Map<number, WatchEntry>();
  private readonly watchIds = new WeakMap<ZkWatcher, number>();
  private readonly exited = new WeakSet<Worker>();
  private readonly logger: Logger | undefined;

  private constructor(
    private readonly opts: ZkSessionOptions,
    private readonly emit: (event: ZkSessionEvent) => void,
  ) {
    this.logger = opts.logger;
  }

  /** Starts the worker and waits for its session (creating the chroot when missing). */
  static async open(opts: ZkSessionOptions, emit: (event: ZkSessionEvent) => void): Promise<WorkerBackend> {
    const b = new WorkerBackend(opts, emit);
    const started = b.start();
    b.worker = started.worker;
    b.state = await started.opened;
    return b;
  }

  private init(endSession?: WireSessionState): WorkerInit {
    const { connect, sessionTimeoutMs, connectionTimeoutMs } = this.opts;
    return {
      connect,
      sessionTimeoutMs,
      connectionTimeoutMs,
      ...(endSession ? { endSession: { sessionId: endSession.id, password: endSession.password } } : {}),
    };
  }

  /** Starts a worker; `opened` settles with its session, or its failure (the worker is then stopped). */
  private start(endSession?: WireSessionState): Started {
    const worker = spawnWorker(this.init(endSession));
    let settle: { resolve(s: WireSessionState): void; reject(e: Error): void } | undefined;
    const opened = new Promise<WireSessionState>((resolve, reject) => (settle = { resolve, reject }));
    let failure: Error | undefined;
    let stopped = false;
    worker.on('message', (m: FromWorker) => {
      if (m.t === 'open') {
        if (m.ok) settle?.resolve(m.state);
        else {
          settle?.reject(fromWireError(m.error));
          stopped = true;
          void worker.terminate();
        }
        settle = undefined;
      } else if (worker === this.worker) this.onMessage(m);
      else if (m.t === 'log') this.log(m.level, m.obj, m.msg);
    });
    worker.on('error', (err) => (failure = err));
    worker.on('exit', (code) => {
      this.exited.add(worker);
      if (stopped) return;
      const why = `the ZooKeeper session thread exited with code ${code}${failure ? `: ${failure.message}` : ''}`;
      if (settle) {
        settle.reject(new ZkError('OTHER', why));
        settle = undefined;
      } else if (worker === this.worker && !this.closed) this.onDeath(why, failure);
    });
    return { worker, opened };
  }

  private log(level: 'info' | 'warn' | 'error', obj: object, msg: string): void {
    this.logger?.[level](obj, msg);
  }

  private onMessage(m: FromWorker): void {
    switch (m.t) {
      case 'reply': {
        const p = this.pending.get(m.seq);
        if (!p) return;
        this.pending.delete(m.seq);
        if (p.watchId !== undefined) {
          const w = this.watches.get(p.watchId);
          if (w) {
            w.pending--;
            w.live = m.watchLive ?? false;
            this.forgetIfIdle(p.watchId, w);
          }
        }
        if (m.ok) p.resolve(m.value);
        else p.reject(fromWireError(m.error));
        return;
      }
      case 'watch': {
        const w = this.watches.get(m.id);
        if (!w) return;
        w.live = m.live;
        this.forgetIfIdle(m.id, w);
        w.fn(m.event);
        return;
      }
      case 'session':
        this.state = m.state;
        if (m.event === 'expired') this.dropWatches();
        this.emit(m.event);
        return;
      case 'log':
        this.log(m.level, m.obj, m.msg);
        return;
      case 'open':
      case 'closed':
        return;
    }
  }

  private forgetIfIdle(id: number, w: WatchEntry): void {
    if (!w.live && w.pending === 0 && this.watches.get(id) === w) this.watches.delete(id);
  }

  /** The session's watches are gone; those carried by calls in flight wait for their replies. */
  private dropWatches(): void {
    for (const [id, w] of this.watches) {
      w.live = false;
      this.forgetIfIdle(id, w);
    }
  }

  /** The worker died on its own: its session is lost. */
  private onDeath(why: string, err: Error | undefined): void {
    this.logger?.error({ err: err?.stack ?? err?.message, sessionId: this.state.sessionId }, `${why}; the ZooKeeper session is lost, opening a new one`);
    const lost = new ZkError('SESSION_EXPIRED', `ZooKeeper session lost: ${why}`);
    this.failPending(lost);
    this.watches.clear();
    // Renewing before announcing: a call made by an 'expired' listener waits for the new worker.
    this.renewing = this.restart(this.state);
    this.emit('expired');
  }

  private failPending(err: ZkError): void {
    const calls = [...this.pending.values()];
    this.pending.clear();
    for (const p of calls) p.reject(new ZkError(err.code, err.message));
  }

  /** Replaces a dead worker, retrying until it has a session or the backend is closed. */
  private async restart(dead: WireSessionState): Promise<void> {
    while (!this.closed) {
      const started = this.start(dead);
      this.worker = started.worker;
      try {
        this.state = await started.opened;
        if (this.closed) {
          await started.worker.terminate();
          return;
        }
        this.renewing = undefined;
        this.logger?.info({ sessionId: this.state.sessionId }, 'new ZooKeeper session');
        this.emit('newSession');
        return;
      } catch (err) {
        if (this.closed) return;
        this.logger?.warn({ err: messageOf(err) }, 'could not open a new ZooKeeper session; retrying');
        await new Promise((r) => setTimeout(r, RESTART_BACKOFF_MS));
      }
    }
  }

  private async call(op: WireOp, watch: ZkWatcher | undefined, transfer: ArrayBuffer[] = []): Promise<WireValue> {
    if (this.renewing) await this.renewing;
    if (this.closed) throw new ZkError('CLOSED', `ZooKeeper session is closed (${'path' in op ? op.path : 'multi'})`, 'path' in op ? op.path : undefined);
    const seq = this.nextSeq++;
    const watchId = watch ? this.watchId(watch) : undefined;
    const msg: ToWorker = watchId === undefined ? { t: 'op', seq, op } : { t: 'op', seq, op, watch: watchId };
    return new Promise<WireValue>((resolve, reject) => {
      this.pending.set(seq, { resolve, reject, watchId });
      this.worker.postMessage(msg, transfer);
    });
  }

  private watchId(fn: ZkWatcher): number {
    let id = this.watchIds.get(fn);
    if (id === undefined) {
      id = this.nextWatchId++;
      this.watchIds.set(fn, id);
    }
    const w = this.watches.get(id);
    if (w) w.pending++;
    else this.watches.set(id, { fn, pending: 1, live: false });
    return id;
  }

  sessionId(): string {
    return this.state.sessionId;
  }

  sessionTimeoutMs(): number {
    return this.state.timeoutMs;
  }

  credentials(): ZkSessionCredentials {
    return { sessionId: Buffer.from(this.state.id), password: Buffer.from(this.state.password) };
  }

  async create(path: string, data: Buffer, mode: ZkCreateMode): Promise<string> {
    const bytes = ownCopy(data);
    return (await this.call({ kind: 'create', path, data: bytes, mode }, undefined, [bytes.buffer as ArrayBuffer])) as string;
  }

  async ensurePath(path: string): Promise<void> {
    await this.call({ kind: 'ensurePath', path }, undefined);
  }

  async get(path: string, watch?: ZkWatcher): Promise<{ data: Buffer; stat: ZkStat }> {
    const got = (await this.call({ kind: 'get', path }, watch)) as { data: Uint8Array; stat: ZkStat };
    return { data: asBuffer(got.data), stat: got.stat };
  }

  async set(path: string, data: Buffer, version: number): Promise<ZkStat> {
    const bytes = ownCopy(data);
    return (await this.call({ kind: 'set', path, data: bytes, version }, undefined, [bytes.buffer as ArrayBuffer])) as ZkStat;
  }

  async delete(path: string, version: number): Promise<void> {
    await this.call({ kind: 'delete', path, version }, undefined);
  }

  async exists(path: string, watch?: ZkWatcher): Promise<ZkStat | null> {
    return (await this.call({ kind: 'exists', path }, watch)) as ZkStat | null;
  }

  async children(path: string, watch?: ZkWatcher): Promise<string[]> {
    return (await this.call({ kind: 'children', path }, watch)) as string[];
  }

  async multi(ops: readonly ZkBufferOp[]): Promise<void> {
    const transfer: ArrayBuffer[] = [];
    const wire = ops.map((o) => {
      if (o.op !== 'create' && o.op !== 'set') return o;
      const data = ownCopy(o.data);
      transfer.push(data.buffer as ArrayBuffer);
      return { ...o, data };
    });
    await this.call({ kind: 'multi', ops: wire }, undefined, transfer);
  }

  /** Closes the session (the server drops its ephemeral nodes) and stops the worker. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    const worker = this.worker;
    let timer: NodeJS.Timeout | undefined;
    if (!this.exited.has(worker)) {
      await Promise.race([
        new Promise<void>((resolve) => {
          worker.on('message', (m: FromWorker) => m.t === 'closed' && resolve());
          worker.once('exit', () => resolve());
          worker.postMessage({ t: 'close' } satisfies ToWorker);
        }),
        new Promise<void>((resolve) => (timer = setTimeout(resolve, CLOSE_WAIT_MS))),
      ]);
      clearTimeout(timer);
    }
    await worker.terminate();
    this.failPending(new ZkError('CLOSED', 'ZooKeeper session is closed'));
    this.watches.clear();
  }
}
