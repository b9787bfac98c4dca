/**
 * The worker thread of a ZkSession (started by zk-worker-backend.ts): node-zookeeper-client
 * runs here, so it answers the server's pings and keeps the session whatever the caller's
 * thread is doing. It runs the operations it is sent, in order, and posts back their replies,
 * the watch events and the session events, and its log lines.
 *
 * Watchers arrive as ids. Each id gets one function here, so the client registers a watcher
 * given twice for the same node once, as it does on one thread. Which (node, kind) pairs each
 * function is registered for mirrors the client's WatcherManager (registered when the client
 * does, consumed by the event types that consume it there), so the caller's thread can forget
 * a watcher exactly when it can no longer fire.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { ClientBackend, type WatchKind } from './zk-client-backend.js';
import { endSession } from './zk-client-connection.js';
import type { ZkLog, ZkSessionEvent, ZkWatchEvent, ZkWatcher } from './zk-session.js';
import {
  asBuffer,
  ownCopy,
  toWireError,
  type FromWorker,
  type LogLevel,
  type ToWorker,
  type WireOp,
  type WireSessionState,
  type WireValue,
  type WorkerInit,
} from './zk-worker-protocol.js';
import { messageOf } from '../../common/errors.js';

const port = parentPort!;
const init = workerData as WorkerInit;

function post(m: FromWorker, transfer: ArrayBuffer[] = []): void {
  port.postMessage(m, transfer);
}

function logAt(level: LogLevel): (obj: object, msg: string) => void {
  return (obj, msg) => {
    try {
      post({ t: 'log', level, obj, msg });
    } catch {
      post({ t: 'log', level, obj: {}, msg }); // a field that cannot be cloned: the line without it
    }
  };
}
const log: ZkLog = { info: logAt('info'), warn: logAt('warn'), error: logAt('error') };

interface Watch {
  fn: ZkWatcher;
  /** `kind:path` pairs the client holds this function for. */
  held: Set<string>;
  /** Operations carrying this watcher that have not answered yet. */
  inflight: number;
}
const watches = new Map<number, Watch>();
const idOf = new WeakMap<ZkWatcher, number>();

function watchFor(id: number): Watch {
  let w = watches.get(id);
  if (!w) {
    const fn: ZkWatcher = (event) => fired(id, entry, event);
    const entry: Watch = { fn, held: new Set(), inflight: 0 };
    idOf.set(fn, id);
    watches.set(id, entry);
    w = entry;
  }
  return w;
}

function forgetIfIdle(id: number, w: Watch): void {
  if (w.held.size === 0 && w.inflight === 0 && watches.get(id) === w) watches.delete(id);
}

/**
 * The tables an event empties for its node, in node-zookeeper-client's WatcherManager.emit
 * order. A function held in two of them is called once for each, so each call consumes one.
 */
const CONSUMES: Record<ZkWatchEvent['type'], WatchKind[]> = {
  created: ['data', 'existence'],
  dataChanged: ['data', 'existence'],
  childrenChanged: ['child'],
  deleted: ['data', 'child'],
};

function fired(id: number, w: Watch, event: ZkWatchEvent): void {
  const kind = CONSUMES[event.type].find((k) => w.held.has(`${k}:${event.path}`));
  if (kind) w.held.delete(`${kind}:${event.path}`);
  const live = w.held.size > 0;
  forgetIfIdle(id, w);
  post({ t: 'watch', id, event, live });
}

function onRegistered(fn: ZkWatcher, kind: WatchKind, path: string): void {
  const id = idOf.get(fn);
  if (id !== undefined) watches.get(id)?.held.add(`${kind}:${path}`);
}

let backend: ClientBackend | undefined;

function stateOf(b: ClientBackend): WireSessionState {
  const c = b.credentials();
  return { sessionId: b.sessionId(), timeoutMs: b.sessionTimeoutMs(), id: ownCopy(c.sessionId), password: ownCopy(c.password) };
}

function onSessionEvent(event: ZkSessionEvent): void {
  // The session's watches went with it (the new client starts with none).
  if (event === 'expired') {
    for (const [id, w] of watches) {
      w.held.clear();
      forgetIfIdle(id, w);
    }
  }
  if (backend) post({ t: 'session', event, state: stateOf(backend) });
}

const NOTHING = { value: undefined, transfer: [] };

async function run(b: ClientBackend, op: WireOp, watch: ZkWatcher | undefined): Promise<{ value: WireValue; transfer: ArrayBuffer[] }> {
  switch (op.kind) {
    case 'create':
      return { value: await b.create(op.path, asBuffer(op.data), op.mode), transfer: [] };
    case 'ensurePath':
      await b.ensurePath(op.path);
      return NOTHING;
    case 'get': {
      const got = await b.get(op.path, watch);
      const data = ownCopy(got.data);
      return { value: { data, stat: got.stat }, transfer: [data.buffer as ArrayBuffer] };
    }
    case 'set':
      return { value: await b.set(op.path, asBuffer(op.data), op.version), transfer: [] };
    case 'delete':
      await b.delete(op.path, op.version);
      return NOTHING;
    case 'exists':
      return { value: await b.exists(op.path, watch), transfer: [] };
    case 'children':
      return { value: await b.children(op.path, watch), transfer: [] };
    case 'multi':
      await b.multi(op.ops.map((o) => (o.op === 'create' || o.op === 'set' ? { ...o, data: asBuffer(o.data) } : o)));
      return NOTHING;
  }
}

async function handle(seq: number, op: WireOp, watchId: number | undefined): Promise<void> {
  const w = watchId === undefined ? undefined : watchFor(watchId);
  if (w) w.inflight++;
  try {
    if (!backend) throw new Error('the ZooKeeper session is not open');
    const { value, transfer } = await run(backend, op, w?.fn);
    post({ t: 'reply', seq, ok: true, value, ...(w ? { watchLive: w.held.size > 0 } : {}) }, transfer);
  } catch (err) {
    post({ t: 'reply', seq, ok: false, error: toWireError(err), ...(w ? { watchLive: w.held.size > 0 } : {}) });
  } finally {
    if (w && watchId !== undefined) {
      w.inflight--;
      forgetIfIdle(watchId, w);
    }
  }
}

async function close(): Promise<void> {
  await backend?.close().catch(() => undefined);
  watches.clear();
  post({ t: 'closed' });
}

port.on('message', (m: ToWorker) => {
  if (m.t === 'op') void handle(m.seq, m.op, m.watch);
  else void close();
});

async function open(): Promise<void> {
  if (init.endSession) {
    const old = { sessionId: asBuffer(init.endSession.sessionId), password: asBuffer(init.endSession.password) };
    await endSession(init, old).then(
      () => log.info({ sessionId: old.sessionId.toString('hex').replace(/^0+(?=.)/, '') }, 'ended the ZooKeeper session of the thread that died'),
      (err: unknown) =>
        log.warn({ err: messageOf(err) }, 'could not end the ZooKeeper session of the thread that died; its ephemeral nodes stay until it times out'),
    );
  }
  try {
    backend = await ClientBackend.open(init, log, onSessionEvent, onRegistered);
    post({ t: 'open', ok: true, state: stateOf(backend) });
  } catch (err) {
    post({ t: 'open', ok: false, error: toWireError(err) });
  }
}

void open();
