/**
 * node-zookeeper-client behind ZkSession's primitives, on whichever thread loads it (the
 * session's worker, or the caller's with `thread: 'caller'`): typed errors, stats and watch
 * events, and a new client when the session expires (`expired`, then `newSession`).
 *
 * Trap in node-zookeeper-client 1.1.3: its connect timeout covers only the TCP connect, so a
 * server that accepts a connection but never answers the session handshake leaves the client
 * waiting forever (ZooKeeper 3.8's server does that to a client that connects while it starts:
 * the close after "ZooKeeperServer not running" fails on an NPE and the connection is leaked).
 * Meanwhile the session expires on the server and the broker's registration vanishes. ZooKeeper's
 * own client gives each attempt, handshake included, the connect timeout (session timeout /
 * number of hosts) and then tries again; `guardHandshakes` does the same here.
 */
import type { Socket } from 'node:net';
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

/** What the client backend needs of ZkSessionOptions (the worker gets these as plain data). */
export interface ClientBackendOptions {
  connect: string;
  sessionTimeoutMs: number;
  connectionTimeoutMs: number;
}

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
  return new ZkError('OTHER', `ZooKeeper error on ${path}: ${err instanceof Error ? err.message : String(err)}`, path);
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

/** What `guardHandshakes` reads of node-zookeeper-client's (private) ConnectionManager. */
interface ConnectionInternals {
  /** 1 while connecting (handshake included); negative once closing, closed or expired (final). */
  state: number;
  /** The socket of the current attempt. */
  socket: Socket | undefined;
  /** Session timeout / number of hosts, as ZooKeeper's client computes it. */
  connectTimeout: number;
  /** The session a connect asks to resume (zeros for a new one), and its password. */
  sessionId: Buffer;
  sessionPassword: Buffer;
}
const CONNECTING = 1;

function internalsOf(client: Client): Partial<ConnectionInternals> | undefined {
  return (client as unknown as { connectionManager?: Partial<ConnectionInternals> }).connectionManager;
}

/**
 * Abandons a connection attempt that has not completed its handshake within the client's
 * connect timeout, so the client tries again (see the trap above). Stops once the client is
 * closed or its session expired.
 */
function guardHandshakes(client: Client, logger?: ZkLog): void {
  const cm = internalsOf(client);
  if (!cm || typeof cm.state !== 'number' || typeof cm.connectTimeout !== 'number') {
    logger?.warn({}, 'unexpected node-zookeeper-client internals: connection attempts are not bounded');
    return;
  }
  const internals = cm as ConnectionInternals;
  let attempt: Socket | undefined;
  let since = 0;
  const timer = setInterval(
    () => {
      if (internals.state < 0) return clearInterval(timer);
      const sock = internals.socket;
      if (internals.state !== CONNECTING || !sock) {
        attempt = undefined;
        return;
      }
      if (sock !== attempt) {
        attempt = sock;
        since = Date.now();
        return;
      }
      if (Date.now() - since <= internals.connectTimeout) return;
      logger?.warn({ waitedMs: Date.now() - since }, 'ZooKeeper did not answer the session handshake within the connect timeout; trying again');
      attempt = undefined;
      sock.destroy(); // the client sees the connection close and reconnects (same session)
    },
    Math.min(1000, Math.max(50, Math.floor(internals.connectTimeout / 4))),
  );
  timer.unref();
}

/** Connects one raw client, or fails after `timeoutMs` (the client keeps retrying otherwise). */
function connectClient(connect: string, sessionTimeoutMs: number, timeoutMs: number, logger?: ZkLog): Promise<Client> {
  const client = zookeeper.createClient(connect, { sessionTimeout: sessionTimeoutMs, spinDelay: 250, retries: 0 });
  guardHandshakes(client, logger);
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      client.removeListener('connected', onConnected);
      client.close();
      reject(new ZkError('CONNECTION_TIMEOUT', `Timed out waiting for a connection to ZooKeeper at ${connect} within ${timeoutMs} ms (zookeeper.connection.timeout.ms)`));
    }, timeoutMs);
    const onConnected = (): void => {
      clearTimeout(timer);
      resolve(client);
    };
    client.once('connected', onConnected);
    client.connect();
  });
}

function closeClient(c: Client, waitMs = 2000): Promise<void> {
  return new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, waitMs);
    c.once('disconnected', () => {
      clearTimeout(timer);
      resolve();
    });
    c.close();
  });
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
  static async open(opts: ClientBackendOptions, logger: ZkLog | undefined, emit: (event: ZkSessionEvent) => void, registered?: WatchRegistered): Promise<ClientBackend> {
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

  /**
   * Ends a session another client held (one whose thread died): joins it as ZooKeeper's own
   * client can (its id and password) and closes it, so the server drops its ephemeral nodes now
   * rather than at its timeout. A session that expired meanwhile is as good.
   */
  static async endSession(opts: ClientBackendOptions, session: ZkSessionCredentials): Promise<void> {
    const client = zookeeper.createClient(opts.connect, { sessionTimeout: opts.sessionTimeoutMs, spinDelay: 250, retries: 0 });
    const cm = internalsOf(client);
    if (!Buffer.isBuffer(cm?.sessionId) || !Buffer.isBuffer(cm.sessionPassword)) throw new ZkError('OTHER', 'unexpected node-zookeeper-client internals: cannot join a session');
    session.sessionId.copy(cm.sessionId);
    session.password.copy(cm.sessionPassword);
    guardHandshakes(client);
    let timer: NodeJS.Timeout | undefined;
    let joined = false;
    try {
      joined = await new Promise<boolean>((resolve, reject) => {
        timer = setTimeout(() => reject(new ZkError('CONNECTION_TIMEOUT', `could not reach ZooKeeper at ${opts.connect} within ${opts.connectionTimeoutMs} ms to end the old session`)), opts.connectionTimeoutMs);
        client.once('connected', () => resolve(true));
        client.once('expired', () => resolve(false));
        client.connect();
      });
      // closeSession: the server ends the session (and its ephemeral nodes), then drops the connection.
      if (joined) await closeClient(client);
    } finally {
      clearTimeout(timer);
      if (!joined) client.close(); // stops the attempt (or the expired client)
    }
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
        this.logger?.warn({ err: err instanceof Error ? err.message : String(err) }, 'ZooKeeper reconnect failed; retrying');
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
    return this.client.getSessionId().toString('hex').replace(/^0+(?=.)/, '');
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
        if (err) { reject(toZkError(err, path)); return; }
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
        if (err) { reject(toZkError(err, path)); return; }
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
        if (err) { reject(toZkError(err, path)); return; }
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
