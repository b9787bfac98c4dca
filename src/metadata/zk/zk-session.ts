/**
 * A ZooKeeper session as promises: a thin typed layer over `node-zookeeper-client` (callbacks,
 * loosely typed errors, one-shot watches). It connects with Kafka's settings (a connect string
 * with an optional chroot suffix, created when missing; session and connection timeouts), turns
 * client errors into `ZkError` with a small code union, and survives session expiry: the dead
 * client is replaced by a new one and `newSession` is emitted, so callers re-create their
 * ephemeral nodes and watches (ZooKeeper drops both with the session).
 *
 * Trap in node-zookeeper-client 1.1.3: its connect timeout covers only the TCP connect, so a
 * server that accepts a connection but never answers the session handshake leaves the client
 * waiting forever (ZooKeeper 3.8's server does that to a client that connects while it starts:
 * the close after "ZooKeeperServer not running" fails on an NPE and the connection is leaked).
 * Meanwhile the session expires on the server and the broker's registration vanishes. ZooKeeper's
 * own client gives each attempt, handshake included, the connect timeout (session timeout /
 * number of hosts) and then tries again; `guardHandshakes` does the same here.
 */
import { EventEmitter } from 'node:events';
import type { Socket } from 'node:net';
import zookeeper from 'node-zookeeper-client';
import type { Client, Stat, Event as ZkClientEvent } from 'node-zookeeper-client';
import type { Logger } from 'pino';

export type ZkErrorCode =
  | 'NO_NODE'
  | 'NODE_EXISTS'
  | 'BAD_VERSION'
  | 'NOT_EMPTY'
  | 'NO_CHILDREN_FOR_EPHEMERALS'
  | 'CONNECTION_LOSS'
  | 'SESSION_EXPIRED'
  | 'CONNECTION_TIMEOUT'
  | 'CLOSED'
  | 'OTHER';

export class ZkError extends Error {
  override readonly name = 'ZkError';
  constructor(
    readonly code: ZkErrorCode,
    message: string,
    readonly path?: string,
  ) {
    super(message);
  }
}

export function isZkError(err: unknown, code: ZkErrorCode): err is ZkError {
  return err instanceof ZkError && err.code === code;
}

export type ZkCreateMode = 'persistent' | 'ephemeral' | 'persistent_sequential' | 'ephemeral_sequential';

export interface ZkStat {
  version: number;
  cversion: number;
  numChildren: number;
  dataLength: number;
  /** Session id (hex) owning an ephemeral node; '0' for persistent nodes. */
  ephemeralOwner: string;
  /** The zxid that created the node: for `/brokers/ids/<id>`, Kafka's broker epoch. */
  czxid: bigint;
  /** Creation time (server clock, ms since the epoch): what Kafka's notification purge compares. */
  ctimeMs: number;
}

export type ZkWatchEvent = { type: 'created' | 'deleted' | 'dataChanged' | 'childrenChanged'; path: string };
export type ZkWatcher = (event: ZkWatchEvent) => void;

/** One operation of an atomic `multi` (all apply or none). Version -1 means any version. */
export type ZkOp =
  | { op: 'create'; path: string; data?: Buffer | string; mode?: ZkCreateMode }
  | { op: 'set'; path: string; data: Buffer | string; version?: number }
  | { op: 'delete'; path: string; version?: number }
  | { op: 'check'; path: string; version: number };

export interface ZkSessionOptions {
  /** `host:port[,host:port...][/chroot]`, as Kafka's zookeeper.connect. */
  connect: string;
  sessionTimeoutMs: number;
  connectionTimeoutMs: number;
  logger?: Logger;
}

export interface ZkSessionEvents {
  /** The session expired: its ephemeral nodes and watches are gone. A new session follows. */
  expired: [];
  /** A new session replaced an expired one: re-create ephemeral nodes and watches. */
  newSession: [];
  /** The connection to the server dropped (the session may still be alive). */
  disconnected: [];
  connected: [];
}

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

const toBuffer = (data: Buffer | string | undefined): Buffer => (data === undefined ? Buffer.alloc(0) : typeof data === 'string' ? Buffer.from(data) : data);

/** Splits `hosts/chroot` into the host list and the chroot ('' when none, or just '/'). */
export function parseConnectString(connect: string): { hosts: string; chroot: string } {
  const slash = connect.indexOf('/');
  if (slash < 0) return { hosts: connect, chroot: '' };
  const chroot = connect.slice(slash).replace(/\/+$/, '');
  return { hosts: connect.slice(0, slash), chroot };
}

/** What `guardHandshakes` reads of node-zookeeper-client's (private) ConnectionManager. */
interface ConnectionInternals {
  /** 1 while connecting (handshake included); negative once closing, closed or expired (final). */
  state: number;
  /** The socket of the current attempt. */
  socket: Socket | undefined;
  /** Session timeout / number of hosts, as ZooKeeper's client computes it. */
  connectTimeout: number;
}
const CONNECTING = 1;

/**
 * Abandons a connection attempt that has not completed its handshake within the client's
 * connect timeout, so the client tries again (see the trap above). Stops once the client is
 * closed or its session expired.
 */
function guardHandshakes(client: Client, logger?: Logger): void {
  const cm = (client as unknown as { connectionManager?: Partial<ConnectionInternals> }).connectionManager;
  if (!cm || typeof cm.state !== 'number' || typeof cm.connectTimeout !== 'number') {
    logger?.warn('unexpected node-zookeeper-client internals: connection attempts are not bounded');
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
function connectClient(connect: string, sessionTimeoutMs: number, timeoutMs: number, logger?: Logger): Promise<Client> {
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

export class ZkSession extends EventEmitter<ZkSessionEvents> {
  private client: Client;
  private closed = false;
  private renewing: Promise<void> | undefined;

  private constructor(
    client: Client,
    private readonly opts: ZkSessionOptions,
  ) {
    super();
    this.client = client;
    this.attach(client);
  }

  /** Connects (creating the chroot when the connect string names one that is missing). */
  static async open(opts: ZkSessionOptions): Promise<ZkSession> {
    const { hosts, chroot } = parseConnectString(opts.connect);
    if (chroot !== '') {
      const root = await connectClient(hosts, opts.sessionTimeoutMs, opts.connectionTimeoutMs, opts.logger);
      try {
        await new Promise<void>((resolve, reject) =>
          root.mkdirp(chroot, (err) => (err ? reject(toZkError(err, chroot)) : resolve())),
        );
      } finally {
        root.close();
      }
    }
    const client = await connectClient(opts.connect, opts.sessionTimeoutMs, opts.connectionTimeoutMs, opts.logger);
    return new ZkSession(client, opts);
  }

  private attach(client: Client): void {
    // Connection changes are logged (rarely more than one line each way per outage), so a
    // broker's log tells when it lost ZooKeeper and whether it came back on the same session.
    let lostAt: number | undefined;
    client.on('connected', () => {
      if (client !== this.client) return;
      if (lostAt !== undefined) this.opts.logger?.info({ sessionId: this.sessionId(), disconnectedMs: Date.now() - lostAt }, 'ZooKeeper connection re-established');
      lostAt = undefined;
      this.emit('connected');
    });
    client.on('disconnected', () => {
      if (client !== this.client || this.closed) return;
      lostAt = Date.now();
      this.opts.logger?.info({ sessionId: this.sessionId() }, 'lost the ZooKeeper connection; reconnecting');
      this.emit('disconnected');
    });
    client.on('expired', () => {
      if (client !== this.client || this.closed) return;
      this.opts.logger?.warn({ connect: this.opts.connect }, 'ZooKeeper session expired; opening a new session');
      this.emit('expired');
      this.renewing = this.renew(client);
    });
  }

  /** Replaces an expired client, retrying until connected or closed. */
  private async renew(dead: Client): Promise<void> {
    dead.close();
    while (!this.closed) {
      try {
        const fresh = await connectClient(this.opts.connect, this.opts.sessionTimeoutMs, this.opts.connectionTimeoutMs, this.opts.logger);
        if (this.closed) {
          fresh.close();
          return;
        }
        this.client = fresh;
        this.attach(fresh);
        this.renewing = undefined;
        this.opts.logger?.info({ sessionId: this.sessionId() }, 'new ZooKeeper session');
        this.emit('newSession');
        return;
      } catch (err) {
        this.opts.logger?.warn({ err: err instanceof Error ? err.message : String(err) }, 'ZooKeeper reconnect failed; retrying');
      }
    }
  }

  /** The current client, once any session renewal has finished. */
  private async current(path: string): Promise<Client> {
    if (this.renewing) await this.renewing;
    if (this.closed) throw new ZkError('CLOSED', `ZooKeeper session is closed (${path})`, path);
    return this.client;
  }

  /** The session id as hex (as ZooKeeper's tools print it, without 0x). */
  sessionId(): string {
    return this.client.getSessionId().toString('hex').replace(/^0+(?=.)/, '');
  }

  /** The negotiated session timeout (the server clamps the requested one to its bounds). */
  sessionTimeoutMs(): number {
    return this.client.getSessionTimeout();
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

  async create(path: string, data?: Buffer | string, mode: ZkCreateMode = 'persistent'): Promise<string> {
    const c = await this.current(path);
    return new Promise((resolve, reject) =>
      c.create(path, toBuffer(data), MODES[mode], (err, created) => (err ? reject(toZkError(err, path)) : resolve(created))),
    );
  }

  /** Creates `path` and its missing parents as persistent nodes; an existing node is fine. */
  async ensurePath(path: string): Promise<void> {
    const c = await this.current(path);
    return new Promise((resolve, reject) => c.mkdirp(path, (err) => (err ? reject(toZkError(err, path)) : resolve())));
  }

  /** The node's data and stat. A watch is set only when the node exists (ZooKeeper's rule). */
  async get(path: string, watch?: ZkWatcher): Promise<{ data: Buffer; stat: ZkStat }> {
    const c = await this.current(path);
    const w = this.wrapWatcher(watch);
    return new Promise((resolve, reject) => {
      const cb = (err: Error | InstanceType<typeof zookeeper.Exception> | null, data: Buffer, stat: Stat): void =>
        err ? reject(toZkError(err, path)) : resolve({ data: data ?? Buffer.alloc(0), stat: toStat(stat) });
      if (w) c.getData(path, w, cb);
      else c.getData(path, cb);
    });
  }

  /** Like `get`, but undefined when the node does not exist. */
  async getIfExists(path: string, watch?: ZkWatcher): Promise<{ data: Buffer; stat: ZkStat } | undefined> {
    try {
      return await this.get(path, watch);
    } catch (err) {
      if (isZkError(err, 'NO_NODE')) return undefined;
      throw err;
    }
  }

  /**
   * Kafka's setOrCreate: sets the node, creating it and its missing parents when absent; one
   * created meanwhile by another writer is set again (last writer wins, as with set).
   */
  async setOrCreate(path: string, data: Buffer): Promise<void> {
    try {
      await this.set(path, data);
      return;
    } catch (err) {
      if (!isZkError(err, 'NO_NODE')) throw err;
    }
    await this.ensurePath(path.slice(0, path.lastIndexOf('/')));
    try {
      await this.create(path, data);
    } catch (err) {
      if (!isZkError(err, 'NODE_EXISTS')) throw err;
      await this.set(path, data);
    }
  }

  async set(path: string, data: Buffer | string, version = -1): Promise<ZkStat> {
    const c = await this.current(path);
    return new Promise((resolve, reject) =>
      c.setData(path, toBuffer(data), version, (err, stat) => (err ? reject(toZkError(err, path)) : resolve(toStat(stat)))),
    );
  }

  async delete(path: string, version = -1): Promise<void> {
    const c = await this.current(path);
    return new Promise((resolve, reject) => c.remove(path, version, (err) => (err ? reject(toZkError(err, path)) : resolve())));
  }

  /** The node's stat, or null when absent; the watch fires on creation, deletion or change. */
  async exists(path: string, watch?: ZkWatcher): Promise<ZkStat | null> {
    const c = await this.current(path);
    const w = this.wrapWatcher(watch);
    return new Promise((resolve, reject) => {
      const cb = (err: Error | InstanceType<typeof zookeeper.Exception> | null, stat: Stat): void =>
        err ? reject(toZkError(err, path)) : resolve(stat ? toStat(stat) : null);
      if (w) c.exists(path, w, cb);
      else c.exists(path, cb);
    });
  }

  async children(path: string, watch?: ZkWatcher): Promise<string[]> {
    const c = await this.current(path);
    const w = this.wrapWatcher(watch);
    return new Promise((resolve, reject) => {
      const cb = (err: Error | InstanceType<typeof zookeeper.Exception> | null, names: string[]): void =>
        err ? reject(toZkError(err, path)) : resolve(names);
      if (w) c.getChildren(path, w, cb);
      else c.getChildren(path, cb);
    });
  }

  /** Like `children`, but [] when the node does not exist (a cluster or group not set up yet). */
  async childrenIfExists(path: string, watch?: ZkWatcher): Promise<string[]> {
    try {
      return await this.children(path, watch);
    } catch (err) {
      if (isZkError(err, 'NO_NODE')) return [];
      throw err;
    }
  }

  /** Applies every operation atomically; on failure none is applied and the first error is thrown. */
  async multi(ops: readonly ZkOp[]): Promise<void> {
    const first = ops[0]?.path ?? '/';
    const c = await this.current(first);
    const tx = c.transaction();
    for (const o of ops) {
      if (o.op === 'create') tx.create(o.path, toBuffer(o.data), MODES[o.mode ?? 'persistent']);
      else if (o.op === 'set') tx.setData(o.path, toBuffer(o.data), o.version ?? -1);
      else if (o.op === 'delete') tx.remove(o.path, o.version ?? -1);
      else tx.check(o.path, o.version);
    }
    // Trap in node-zookeeper-client 1.1.3: Transaction's check/setData/remove do
    // `version = version || -1`, so version 0 (every fresh node's) silently means "any version"
    // and the condition is lost. Write the requested versions into the queued ops ourselves.
    const queued = (tx as unknown as { ops?: { version?: number }[] }).ops;
    if (!Array.isArray(queued) || queued.length !== ops.length) throw new ZkError('OTHER', 'unexpected node-zookeeper-client Transaction internals', first);
    ops.forEach((o, i) => {
      if (o.op !== 'create') queued[i]!.version = o.version ?? -1;
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
    const c = this.client;
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, 2000);
      c.once('disconnected', () => {
        clearTimeout(timer);
        resolve();
      });
      c.close();
    });
  }
}
