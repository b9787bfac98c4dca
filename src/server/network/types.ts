import type { Logger } from 'pino';
import type { KafkaPrincipal } from '../../security/principal.js';
import type { SecurityProtocol } from '../../security/security-protocol.js';

export interface ConnectionContext {
  /** Kafka-style "localHost:localPort-remoteHost:remotePort-sequence". */
  connectionId: string;
  clientHost: string;
  clientPort: number;
  listenerName: string;
  localPort: number;
  /** The listener's protocol (listener.security.protocol.map). */
  securityProtocol: SecurityProtocol;
  /**
   * Who the client is. User:ANONYMOUS until TLS client authentication or SASL establishes
   * otherwise; the security layer replaces it (re-authentication may replace it again).
   */
  principal: KafkaPrincipal;
  /**
   * Set by a security layer to bound request frames on this connection instead of
   * socket.request.max.bytes and the request-header minimum (SASL: sasl.server.max.receive.size
   * until authenticated, no minimum for raw SASL tokens); consulted before each frame is read.
   */
  frameLimits?: FrameLimits;
  /**
   * Set by a security layer (failed authentication): the connection reads no further request
   * and closes once the responses already queued are written.
   */
  closeAfterResponses?: boolean;
  /**
   * Quotas (KIP-219): stop reading requests from this connection for `ms` from now (the longest
   * of overlapping calls wins); responses are still written. Set by the connection; absent in tests
   * that call handlers without one.
   */
  muteFor?: (ms: number) => void;
  /**
   * Request metrics: set by the router while it handles a Fetch (one at a time per connection,
   * a large-answer request): 1 from a consumer, 2 from a follower (Kafka's FetchConsumer/FetchFollower).
   */
  fetchKind?: number;
  /**
   * Request metrics: performance.now() when the connection dispatched the request being handled
   * (valid while the handler runs synchronously from dispatch, where the router reads it).
   */
  dispatchedAt?: number;
  /** KIP-714's client_software_name / _version selectors: what the connection's ApiVersions (v3+) said. */
  clientSoftwareName?: string;
  clientSoftwareVersion?: string;
}

/**
 * What a Connection uses of its socket: a net.Socket (or tls.TLSSocket) on the main thread, or the
 * stand-in for one a network thread owns (threads/remote-socket.ts, num.network.threads > 1).
 */
export interface ConnectionSocket {
  setNoDelay(noDelay?: boolean): unknown;
  on(event: 'data', listener: (chunk: Buffer) => void): unknown;
  on(event: 'drain' | 'end' | 'close', listener: () => void): unknown;
  on(event: 'error', listener: (err: Error) => void): unknown;
  once(event: 'close', listener: () => void): unknown;
  pause(): unknown;
  resume(): unknown;
  cork(): void;
  uncork(): void;
  write(chunk: Uint8Array, callback?: () => void): boolean;
  end(): unknown;
  destroy(): unknown;
  readonly writableLength: number;
  /** A socket read on another thread (RemoteSocket) is told when the connection's frame limits change. */
  setFrameLimits?(limits: FrameLimits | undefined): void;
}

export interface FrameLimits {
  maxBytes: number;
  minBytes: number;
  /** Names the limit in the close message, e.g. "sasl.server.max.receive.size". */
  maxName: string;
}

/**
 * Handles one request frame (without the size prefix) and returns the response frame (without the
 * size prefix), or null when no response is sent (Produce with acks=0). Throwing closes the connection.
 * A response may be a list of buffers (written back to back, e.g. a header and record sets held
 * by reference); the connection must not see them change until written.
 */
export type ResponseFrame = Buffer | readonly Buffer[];

/**
 * Called with the parts of a multi-part response once the socket no longer needs them (written
 * to the kernel, or dropped with the connection), so their owner can reuse the memory.
 */
export type PartsWrittenHook = (parts: readonly Buffer[]) => void;
export type RequestDispatcher = (frame: Buffer, ctx: ConnectionContext) => Promise<ResponseFrame | null> | ResponseFrame | null;

/** Throw from a dispatcher to close the connection on purpose (logged at warn, like any error). */
export class CloseConnectionError extends Error {
  override readonly name = 'CloseConnectionError';
}

export interface ConnectionLimits {
  socketRequestMaxBytes: number;
  /** Idle = no complete request read and no response written; partial frames do not count. */
  connectionsMaxIdleMs: number;
  /** socket.request.receive.timeout.ms: a started frame must be whole within this; <= 0 = never. */
  requestReceiveTimeoutMs: number;
  maxQueuedRequestsPerConnection: number;
  maxInFlightBytesPerConnection: number;
  /**
   * queued.max.response.bytes.per.connection: answers ready for the peer and not yet taken by the
   * kernel (waiting their turn, or in the socket's buffer); reading stops at this many.
   */
  maxQueuedResponseBytes: number;
  /**
   * Requests whose answer can be far larger than the request (Fetch, Metadata, Describe*...): one
   * such request per connection is handled at a time, as Kafka handles every request. Absent: none.
   */
  largeAnswerRequest?: (frame: Buffer) => boolean;
  /** Request metrics: told each request's times once its answer is handed to the socket; absent: not measured. */
  requestTimes?: RequestTimingSink;
  /** Produce frames go into shared memory (shared-frame-buffers.ts: shard workers read their records in place); absent: ordinary frame buffers. */
  sharedProduceFrames?: boolean;
}

/**
 * Where a connection reports each request's times (server/metrics/request-stats.ts), in ms:
 * plain numbers, so measuring allocates nothing. `fetchKind` is ConnectionContext.fetchKind for a Fetch, else 0.
 */
export interface RequestTimingSink {
  requestDone(
    apiKey: number,
    apiVersion: number,
    fetchKind: number,
    requestQueueMs: number,
    responseQueueMs: number,
    sendMs: number,
    totalMs: number,
    requestBytes: number,
    responseBytes: number,
  ): void;
}

export type NetworkLogger = Pick<Logger, 'debug' | 'info' | 'warn' | 'error'>;

/** Connections served on a listener since start, and closed since (open = created - closed). */
export interface ListenerConnectionStats {
  created: number;
  closed: number;
}

export interface ConnectionStats {
  connectionId: string;
  /** Requests dispatched whose response has not been written yet. */
  queuedRequests: number;
  paused: boolean;
  writeBlocked: boolean;
  /** Waiting for room in the broker-wide request memory before reading on. */
  waitingForMemory: boolean;
  /** Bytes received and not yet handed to the dispatcher (a partial frame, or frames held back). */
  bufferedBytes: number;
  dispatched: number;
  /** Answers ready for the peer not yet taken by the kernel (waiting their turn or in the socket's buffer). */
  queuedResponseBytes: number;
  /** The most queuedResponseBytes seen (measured when answers are queued or written). */
  peakQueuedResponseBytes: number;
}
