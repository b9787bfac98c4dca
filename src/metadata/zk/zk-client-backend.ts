/**
 * node-zookeeper-client behind ZkSession's primitives, on whichever thread loads it (the
 * session's worker, or the caller's with `thread: 'caller'`): typed errors, stats and watch
 * events, and a new client when the session expires (`expired`, then `newSession`). Connecting a
 * client (with its handshake bounded) is zk-client-connection.ts.
 */
import zookeeper from 'node-zookeeper-client';
import type { Client, Stat, Event as ZkClientEvent } from 'node-zookeeper-client';
import {
  ZkError,
  parseConnectString,
  type ZkBackend,
  type ZkBufferOp,
  type ZkCreateMode,
  type ZkErrorCode,
  type ZkLog,
  type ZkSessionCredentials,
  type ZkSessionEvent,
  type ZkStat,
  type ZkWatchEvent,
  type ZkWatcher,
} from './zk-session.js';
import { closeClient, connectClient, type ClientBackendOptions } from './zk-client-connection.js';
import { messageOf } from '../../common/errors.js';

/** The client's three watcher tables (node-zookeeper-client's WatcherManager). */
export type WatchKind = 'data' | 'existence' | 'child';

/** Called when the client has registered `watch` (synchronously, before any event can consume it). */
export type WatchRegistered = (watch: ZkWatcher, kind: WatchKind, path: string) => void;

const MODES: Record<ZkCreateMode, number> = {
  persistent: zookeeper.CreateMode.PERSISTENT,
  ephemeral: zookeeper.CreateMode.EPHEMERAL,
  persistent_sequential: zookeeper.CreateMode.PERSISTENT_SEQUENTIAL,
  ephemeral_sequential: zookeeper.CreateMode.EPHEMERAL_SEQUENTIAL,
};

const ERROR_CODES = new Map<number, ZkErrorCode>([
  [zookeeper.Exception.NO_NODE, 'NO_NODE'],
  [zookeeper.Exception.NODE_EXISTS, 'NODE_EXISTS'],
  [zookeeper.Exception.BAD_VERSION, 'BAD_VERSION'],
  [zookeeper.Exception.NOT_EMPTY, 'NOT_EMPTY'],
  [zookeeper.Exception.NO_CHILDREN_FOR_EPHEMERALS, 'NO_CHILDREN_FOR_EPHEMERALS'],
  [zookeeper.Exception.CONNECTION_LOSS, 'CONNECTION_LOSS'],
  [zookeeper.Exception.SESSION_EXPIRED, 'SESSION_EXPIRED'],
]);

function toZkError(err: unknown, path: string): ZkError {
  if (err instanceof zookeeper.Exception) {
    const code = ERROR_CODES.get(err.getCode()) ?? 'OTHER';
    return new ZkError(code, `ZooKeeper ${err.getName()} on ${path}`, path);
  }
  return new ZkError('OTHER', `ZooKeeper error on ${path}: ${messageOf(err)}`, path);
}

function toStat(stat: Stat): ZkStat {
  return {
    version: stat.version,
    cversion: stat.cversion,
    numChildren: stat.numChildren,
    dataLength: stat.dataLength,
    ephemeralOwner: stat.ephemeralOwner.toString('hex').replace(/^0+(?=.)/, ''),
    czxid: stat.czxid.readBigInt64BE(0),
    ctimeMs: Number(stat.ctime.readBigInt64BE(0)),
  };
}

function toWatchEvent(e: ZkClientEvent): ZkWatchEvent {
  const type =
    e.getType() === zookeeper.Event.NODE_CREATED
      ? 'created'
      : e.getType() === zookeeper.Event.NODE_DELETED
        ? 'deleted'
        : e.getType() === zookeeper.Event.NODE_DATA_CHANGED
          ? 'dataChanged'
          : 'childrenChanged';
  return { type, path: e.getPath() };
}

export class ClientBackend implements ZkBackend {
  private closed = false;
  private renewing: Promise<void> | undefined;

  private constructor(
    private client: Client,
    private readonly opts: ClientBackendOptions,
    private readonly logger: ZkLog | undefined,
    private readonly emit: (event: ZkSessionEvent) => void,
    private readonly registered: WatchRegistered | undefined,
  ) {
    this.attach(client);
  }

  /** Connects (creating the chroot when the connect string names one that is missing). */
  static async open(
    opts: ClientBackendOptions,
    logger: ZkLog | undefined,
    emit: (event: ZkSessionEvent) => void,
    registered?: WatchRegistered,
  ): Promise<ClientBackend> {
    const { hosts, chroot } = parseConnectString(opts.connect);
    if (chroot !== '') {
      const root = await connectClient(hosts, opts.sessionTimeoutMs, opts.connectionTimeoutMs, logger);
      try {
        await new Promise<void>((resolve, reject) => root.mkdirp(chroot, (err) => (err ? reject(toZkError(err, chroot)) : resolve())));
      } finally {
        root.close();
      }
    }
    const client = await connectClient(opts.connect, opts.sessionTimeoutMs, opts.connectionTimeoutMs, logger);
    return new ClientBackend(client, opts, logger, emit, registered);
  }

  private attach(client: Client): void {
    // Connection changes are logged (rarely more than one line each way per outage), so a
    // broker's log tells when it lost ZooKeeper and whether it came back on the same session.
    let lostAt: number | undefined;
    client.on('connected', () => {
      if (client !== this.client) return;
      if (lostAt !== undefined) this.logger?.info({ sessionId: this.sessionId(), disconnectedMs: Date.now() - lostAt }, 'ZooKeeper connection re-established');
      lostAt = undefined;
      this.emit('connected');
    });
    client.on('disconnected', () => {
      if (client !== this.client || this.closed) return;
      lostAt = Date.now();
      this.logger?.info({ sessionId: this.sessionId() }, 'lost the ZooKeeper connection; reconnecting');
      this.emit('disconnected');
    });
    client.on('expired', () => {
      if (client !== this.client || this.closed) return;
      this.logger?.warn({ connect: this.opts.connect }, 'ZooKeeper session expired; opening a new session');
      this.emit('expired');
      this.renewing = this.renew(client);
    });
  }

  /** Replaces an expired client, retrying until connected or closed. */
  private async renew(dead: Client): Promise<void> {
    dead.close();
    while (!this.closed) {
      try {
        const fresh = await connectClient(this.opts.connect, this.opts.sessionTimeoutMs, this.opts.connectionTimeoutMs, this.logger);
        if (this.closed) {
          fresh.close();
          return;
        }
        this.client = fresh;
        this.attach(fresh);
        this.renewing = undefined;
        this.logger?.info({ sessionId: this.sessionId() }, 'new ZooKeeper session');
        this.emit('newSession');
        return;
      } catch (err) {
        this.logger?.warn({ err: messageOf(err) }, 'ZooKeeper reconnect failed; retrying');
      }
    }
  }

  /** The current client, once any session renewal has finished. */
  private async current(path: string): Promise<Client> {
    if (this.renewing) await this.renewing;
    if (this.closed) throw new ZkError('CLOSED', `ZooKeeper session is closed (${path})`, path);
    return this.client;
  }

  sessionId(): string {
    return this.client
      .getSessionId()
      .toString('hex')
      .replace(/^0+(?=.)/, '');
  }

  sessionTimeoutMs(): number {
    return this.client.getSessionTimeout();
  }

  credentials(): ZkSessionCredentials {
    return { sessionId: Buffer.from(this.client.getSessionId()), password: Buffer.from(this.client.getSessionPassword()) };
  }

  // One client-side function per watcher: the client then registers a repeated watch once.
  private readonly wrapped = new WeakMap<ZkWatcher, (e: ZkClientEvent) => void>();

  private wrapWatcher(watch: ZkWatcher | undefined): ((e: ZkClientEvent) => void) | undefined {
    if (!watch) return undefined;
    let w = this.wrapped.get(watch);
    if (!w) {
      w = (e) => watch(toWatchEvent(e));
      this.wrapped.set(watch, w);
    }
    return w;
  }

  async create(path: string, data: Buffer, mode: ZkCreateMode): Promise<string> {
    const c = await this.current(path);
    return new Promise((resolve, reject) => c.create(path, data, MODES[mode], (err, created) => (err ? reject(toZkError(err, path)) : resolve(created))));
  }

  async ensurePath(path: string): Promise<void> {
    const c = await this.current(path);
    return new Promise((resolve, reject) => c.mkdirp(path, (err) => (err ? reject(toZkError(err, path)) : resolve())));
  }

  async get(path: string, watch?: ZkWatcher): Promise<{ data: Buffer; stat: ZkStat }> {
    const c = await this.current(path);
    const w = this.wrapWatcher(watch);
    return new Promise((resolve, reject) => {
      const cb = (err: Error | InstanceType<typeof zookeeper.Exception> | null, data: Buffer, stat: Stat): void => {
        if (err) {
          reject(toZkError(err, path));
          return;
        }
        if (watch) this.registered?.(watch, 'data', path);
        resolve({ data: data ?? Buffer.alloc(0), stat: toStat(stat) });
      };
      if (w) c.getData(path, w, cb);
      else c.getData(path, cb);
    });
  }

  async set(path: string, data: Buffer, version: number): Promise<ZkStat> {
    const c = await this.current(path);
    return new Promise((resolve, reject) => c.setData(path, data, version, (err, stat) => (err ? reject(toZkError(err, path)) : resolve(toStat(stat)))));
  }

  async delete(path: string, version: number): Promise<void> {
    const c = await this.current(path);
    return new Promise((resolve, reject) => c.remove(path, version, (err) => (err ? reject(toZkError(err, path)) : resolve())));
  }

  async exists(path: string, watch?: ZkWatcher): Promise<ZkStat | null> {
    const c = await this.current(path);
    const w = this.wrapWatcher(watch);
    return new Promise((resolve, reject) => {
      const cb = (err: Error | InstanceType<typeof zookeeper.Exception> | null, stat: Stat): void => {
        if (err) {
          reject(toZkError(err, path));
          return;
        }
        // On an absent node the client keeps the watch as an existence watch, else as a data watch.
        if (watch) this.registered?.(watch, stat ? 'data' : 'existence', path);
        resolve(stat ? toStat(stat) : null);
      };
      if (w) c.exists(path, w, cb);
      else c.exists(path, cb);
    });
  }

  async children(path: string, watch?: ZkWatcher): Promise<string[]> {
    const c = await this.current(path);
    const w = this.wrapWatcher(watch);
    return new Promise((resolve, reject) => {
      const cb = (err: Error | InstanceType<typeof zookeeper.Exception> | null, names: string[]): void => {
        if (err) {
          reject(toZkError(err, path));
          return;
        }
        if (watch) this.registered?.(watch, 'child', path);
        resolve(names);
      };
      if (w) c.getChildren(path, w, cb);
      else c.getChildren(path, cb);
    });
  }

  async multi(ops: readonly ZkBufferOp[]): Promise<void> {
    const first = ops[0]?.path ?? '/';
    const c = await this.current(first);
    const tx = c.transaction();
    for (const o of ops) {
      if (o.op === 'create') tx.create(o.path, o.data, MODES[o.mode]);
      else if (o.op === 'set') tx.setData(o.path, o.data, o.version);
      else if (o.op === 'delete') tx.remove(o.path, o.version);
      else tx.check(o.path, o.version);
    }
    // Trap in node-zookeeper-client 1.1.3: Transaction's check/setData/remove do
    // `version = version || -1`, so version 0 (every fresh node's) silently means "any version"
    // and the condition is lost. Write the requested versions into the queued ops ourselves.
    const queued = (tx as unknown as { ops?: { version?: number }[] }).ops;
    if (!Array.isArray(queued) || queued.length !== ops.length) throw new ZkError('OTHER', 'unexpected node-zookeeper-client Transaction internals', first);
    ops.forEach((o, i) => {
      if (o.op !== 'create') queued[i]!.version = o.version;
    });
    return new Promise((resolve, reject) =>
      tx.commit((err, results: unknown) => {
        if (!err) return resolve();
        // The client reports the failing operation's error code in its results list.
        const failed = Array.isArray(results)
          ? results.findIndex((r: unknown) => typeof r === 'object' && r !== null && 'err' in r && (r as { err: number }).err !== 0)
          : -1;
        reject(toZkError(err, failed >= 0 ? ops[failed]!.path : first));
      }),
    );
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await closeClient(this.client);
  }
}
