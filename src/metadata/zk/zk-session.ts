/**
 * A ZooKeeper session as promises: a thin typed layer over `node-zookeeper-client` (callbacks,
 * loosely typed errors, one-shot watches). It connects with Kafka's settings (a connect string
 * with an optional chroot suffix, created when missing; session and connection timeouts), turns
 * client errors into `ZkError` with a small code union, and survives session expiry: the dead
 * client is replaced by a new one and `newSession` is emitted, so callers re-create their
 * ephemeral nodes and watches (ZooKeeper drops both with the session).
 *
 * The client runs on a worker thread of its own by default (zk-worker-backend.ts): a session
 * lives only as long as the client answers the server's pings, and a request that holds the
 * main loop for seconds must not cost the broker its registration (issue 21; Kafka's ZooKeeper
 * client has its own threads too). Replies, watch events and session events reach the caller
 * in the order the server sent them. `thread: 'caller'` runs the client on the caller's thread
 * (zk-client-backend.ts, where the client's traps are handled); the worker runs that same code.
 */
import { EventEmitter } from 'node:events';
import type { Logger } from 'pino';
import { LatencyHistogram } from '../../common/latency-histogram.js';

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
  /**
   * Where the client runs: on a worker thread of its own (the default), so the session outlives
   * a busy caller, or on the caller's thread (the session then expires when the caller's loop
   * is held past the session timeout).
   */
  thread?: 'worker' | 'caller';
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

export type ZkSessionEvent = keyof ZkSessionEvents;

/** What a second client needs to join a session (how ZooKeeper's own tests expire one). */
export interface ZkSessionCredentials {
  sessionId: Buffer;
  password: Buffer;
}

/** The lines a session logs; a pino Logger is one. */
export interface ZkLog {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

/**
 * The primitives a session is built on: node-zookeeper-client on this thread, or a proxy to it
 * on a worker. Data is always a Buffer here; ZkSession converts strings.
 */
export interface ZkBackend {
  create(path: string, data: Buffer, mode: ZkCreateMode): Promise<string>;
  ensurePath(path: string): Promise<void>;
  get(path: string, watch?: ZkWatcher): Promise<{ data: Buffer; stat: ZkStat }>;
  set(path: string, data: Buffer, version: number): Promise<ZkStat>;
  delete(path: string, version: number): Promise<void>;
  exists(path: string, watch?: ZkWatcher): Promise<ZkStat | null>;
  children(path: string, watch?: ZkWatcher): Promise<string[]>;
  multi(ops: readonly ZkBufferOp[]): Promise<void>;
  close(): Promise<void>;
  sessionId(): string;
  sessionTimeoutMs(): number;
  credentials(): ZkSessionCredentials;
}

/** A `ZkOp` whose data is a Buffer. */
export type ZkBufferOp =
  | { op: 'create'; path: string; data: Buffer; mode: ZkCreateMode }
  | { op: 'set'; path: string; data: Buffer; version: number }
  | { op: 'delete'; path: string; version: number }
  | { op: 'check'; path: string; version: number };

const toBuffer = (data: Buffer | string | undefined): Buffer => (data === undefined ? Buffer.alloc(0) : typeof data === 'string' ? Buffer.from(data) : data);

function toBufferOp(o: ZkOp): ZkBufferOp {
  switch (o.op) {
    case 'create':
      return { op: 'create', path: o.path, data: toBuffer(o.data), mode: o.mode ?? 'persistent' };
    case 'set':
      return { op: 'set', path: o.path, data: toBuffer(o.data), version: o.version ?? -1 };
    case 'delete':
      return { op: 'delete', path: o.path, version: o.version ?? -1 };
    case 'check':
      return o;
  }
}

/** Splits `hosts/chroot` into the host list and the chroot ('' when none, or just '/'). */
export function parseConnectString(connect: string): { hosts: string; chroot: string } {
  const slash = connect.indexOf('/');
  if (slash < 0) return { hosts: connect, chroot: '' };
  const chroot = connect.slice(slash).replace(/\/+$/, '');
  return { hosts: connect.slice(0, slash), chroot };
}

/**
 * The session's plain stats, read by the metrics: ZooKeeper's client state as Kafka's
 * SessionState gauge names it, Kafka's SessionExpireListener meters, and every request's
 * round trip (Kafka's ZooKeeperRequestLatencyMs).
 */
export interface ZkSessionStats {
  /** CONNECTED; CONNECTING after a disconnect or an expiry (the client reconnects); CLOSED once closed. */
  state: 'CONNECTED' | 'CONNECTING' | 'CLOSED';
  expires: number;
  disconnects: number;
  /** Connections made (the first and every reconnect; Kafka's ZooKeeperSyncConnectsPerSec). */
  connects: number;
  requests: number;
  requestTotalMs: number;
  /** Every request's round trip, for its quantiles (Kafka's ZooKeeperRequestLatencyMs histogram). */
  readonly requestLatency: LatencyHistogram;
}

export class ZkSession extends EventEmitter<ZkSessionEvents> {
  private backend!: ZkBackend;
  readonly stats: ZkSessionStats = {
    state: 'CONNECTED',
    expires: 0,
    disconnects: 0,
    connects: 1,
    requests: 0,
    requestTotalMs: 0,
    requestLatency: new LatencyHistogram(),
  };

  private constructor() {
    super();
  }

  /** Connects (creating the chroot when the connect string names one that is missing). */
  static async open(opts: ZkSessionOptions): Promise<ZkSession> {
    const session = new ZkSession();
    const emit = (event: ZkSessionEvent): void => {
      session.noteEvent(event);
      session.emit(event);
    };
    // Loaded on demand: the worker side never loads node-zookeeper-client on this thread.
    session.backend =
      opts.thread === 'caller'
        ? await (await import('./zk-client-backend.js')).ClientBackend.open(opts, opts.logger, emit)
        : await (await import('./zk-worker-backend.js')).WorkerBackend.open(opts, emit);
    return session;
  }

  private noteEvent(event: ZkSessionEvent): void {
    const stats = this.stats;
    if (stats.state === 'CLOSED') return;
    if (event === 'expired') {
      stats.expires++;
      stats.state = 'CONNECTING';
    } else if (event === 'disconnected') {
      stats.disconnects++;
      stats.state = 'CONNECTING';
    } else if (event === 'connected' || event === 'newSession') {
      if (stats.state !== 'CONNECTED') stats.connects++;
      stats.state = 'CONNECTED';
    }
  }

  /** Counts and times one request (not a hot path: ZooKeeper calls are few). */
  private timed<T>(started: number, call: Promise<T>): Promise<T> {
    return call.finally(() => {
      const ms = performance.now() - started;
      this.stats.requests++;
      this.stats.requestTotalMs += ms;
      this.stats.requestLatency.observe(ms);
    });
  }

  /** The session id as hex (as ZooKeeper's tools print it, without 0x). */
  sessionId(): string {
    return this.backend.sessionId();
  }

  /** The negotiated session timeout (the server clamps the requested one to its bounds). */
  sessionTimeoutMs(): number {
    return this.backend.sessionTimeoutMs();
  }

  /** The id and password of the current session (tests expire a session by joining it). */
  credentials(): ZkSessionCredentials {
    return this.backend.credentials();
  }

  create(path: string, data?: Buffer | string, mode: ZkCreateMode = 'persistent'): Promise<string> {
    return this.timed(performance.now(), this.backend.create(path, toBuffer(data), mode));
  }

  /** Creates `path` and its missing parents as persistent nodes; an existing node is fine. */
  ensurePath(path: string): Promise<void> {
    return this.timed(performance.now(), this.backend.ensurePath(path));
  }

  /** The node's data and stat. A watch is set only when the node exists (ZooKeeper's rule). */
  get(path: string, watch?: ZkWatcher): Promise<{ data: Buffer; stat: ZkStat }> {
    return this.timed(performance.now(), this.backend.get(path, watch));
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

  set(path: string, data: Buffer | string, version = -1): Promise<ZkStat> {
    return this.timed(performance.now(), this.backend.set(path, toBuffer(data), version));
  }

  delete(path: string, version = -1): Promise<void> {
    return this.timed(performance.now(), this.backend.delete(path, version));
  }

  /** The node's stat, or null when absent; the watch fires on creation, deletion or change. */
  exists(path: string, watch?: ZkWatcher): Promise<ZkStat | null> {
    return this.timed(performance.now(), this.backend.exists(path, watch));
  }

  children(path: string, watch?: ZkWatcher): Promise<string[]> {
    return this.timed(performance.now(), this.backend.children(path, watch));
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
  multi(ops: readonly ZkOp[]): Promise<void> {
    return this.timed(performance.now(), this.backend.multi(ops.map(toBufferOp)));
  }

  close(): Promise<void> {
    this.stats.state = 'CLOSED';
    return this.backend.close();
  }
}
