// What a SocketServer is given: its listeners, dispatcher and every connection and memory limit,
// with Fjord's defaults for them. Separate from socket-server.ts, which accepts and serves
// connections, so the list of knobs reads on its own.
import type { ListenerTls } from '../../security/tls/index.js';
import type { ConnectionQuotaSettings } from './connection-quota-config.js';
import type { ListenerSpec } from './listeners.js';
import type { FrameLimits, NetworkLogger, PartsWrittenHook, RequestDispatcher, RequestTimingSink } from './types.js';

export interface SocketServerOptions {
  listeners: ListenerSpec[];
  dispatcher: RequestDispatcher;
  /** Gets back the parts of multi-part responses once written (e.g. pooled fetch buffers). */
  onPartsWritten?: PartsWrittenHook;
  logger: NetworkLogger;
  /** socket.request.max.bytes (Kafka default 104857600). */
  socketRequestMaxBytes: number;
  /** connections.max.idle.ms (600000); <= 0 disables idle closing. */
  connectionsMaxIdleMs: number;
  /** socket.request.receive.timeout.ms: a frame must arrive whole within this (default 30000); <= 0 = never. */
  requestReceiveTimeoutMs?: number;
  /**
   * queued.max.request.bytes: request bytes held broker-wide (being read or not yet answered)
   * before connections stop reading (default DEFAULT_QUEUED_MAX_REQUEST_BYTES); <= 0 = unbounded.
   */
  queuedMaxRequestBytes?: number;
  /** max.connections (2147483647); `connectionQuotas`, when given, wins. */
  maxConnections: number;
  /** max.connections.per.ip (2147483647); `connectionQuotas`, when given, wins. */
  maxConnectionsPerIp: number;
  /** Every connection limit (connection-quota-config.ts); changed later with setConnectionQuotas. */
  connectionQuotas?: ConnectionQuotaSettings;
  /** inter.broker.listener.name: exempt from max.connections and the open-file ceiling when there are several listeners. */
  interBrokerListener?: string;
  /** ulimit -n (default: read from /proc; Infinity = no ceiling on client connections). */
  openFileLimit?: number;
  /** Descriptors segment files may hold, kept out of the client connections' share (default 0). */
  segmentFiles?: number;
  /** quota.window.num / quota.window.size.seconds, for max.connection.creation.rate (default 11 x 1 s). */
  rateWindow?: { samples: number; windowMs: number };
  /** Unanswered request bytes per connection before reading pauses (default 100 MiB). */
  maxInFlightBytesPerConnection?: number;
  /** queued.max.requests: unanswered requests per connection before reading pauses (default 500). */
  maxQueuedRequestsPerConnection?: number;
  /**
   * queued.max.response.bytes.per.connection: answers ready for a peer and not yet taken by the
   * kernel before its connection stops reading (default DEFAULT_QUEUED_MAX_RESPONSE_BYTES).
   */
  maxQueuedResponseBytesPerConnection?: number;
  /** Requests handled one at a time per connection (answers that can be large); absent: none. */
  largeAnswerRequest?: (frame: Buffer) => boolean;
  /** socket.listen.backlog.size (default 50). */
  listenBacklog?: number;
  /** TLS of each SSL / SASL_SSL listener by name (required for those listeners). */
  listenerTls?: ReadonlyMap<string, ListenerTls>;
  /**
   * A TLS handshake must complete within this (default: socket.request.receive.timeout.ms, else
   * connections.max.idle.ms); <= 0 = never.
   */
  tlsHandshakeTimeoutMs?: number;
  /** Frame limits a new connection on this listener starts with (SASL listeners: until authenticated). */
  initialFrameLimits?: (listener: ListenerSpec) => FrameLimits | undefined;
  /** Request metrics: each request's times once answered (server/metrics/request-stats.ts); absent: not measured. */
  requestTimes?: RequestTimingSink;
  /**
   * Produce frames in shared memory, for shard workers to read in place (num.io.threads > 1:
   * shared-frame-buffers.ts); absent: ordinary, pooled frame buffers (frame-buffers.ts).
   */
  sharedProduceFrames?: boolean;
  /**
   * num.network.threads: 1 (default) = this thread accepts and serves every connection; M > 1 = M
   * network threads own the sockets (threads/network-threads.ts) and this thread runs the same
   * Connections on stand-ins for them.
   */
  networkThreads?: number;
}

/** Fjord's default for queued.max.request.bytes (Kafka's is -1, unbounded): 256 MiB. */
export const DEFAULT_QUEUED_MAX_REQUEST_BYTES = 268435456;
/** Fjord's default for queued.max.response.bytes.per.connection: 1 MiB. */
export const DEFAULT_QUEUED_MAX_RESPONSE_BYTES = 1048576;
/**
 * The cap is never below a socket's write high-water mark (16 KiB), else a connection could stop
 * reading with too few bytes buffered for the socket to ever signal 'drain'.
 */
export const MIN_QUEUED_RESPONSE_BYTES = 64 * 1024;
/** Fjord's default for socket.request.receive.timeout.ms. */
export const DEFAULT_REQUEST_RECEIVE_TIMEOUT_MS = 30000;
