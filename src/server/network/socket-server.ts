// Accepts client connections on every configured listener and enforces connection limits.
// Frames are moved to and from the dispatcher by Connection; nothing here decodes messages.
import net from 'node:net';
import { CloseLog, type CloseReason } from './close-log.js';
import { ANONYMOUS } from '../../security/principal.js';
import { Connection, type ConnectionStats } from './connection.js';
import { RequestMemoryPool } from './request-memory.js';
import type { ListenerSpec } from './listeners.js';
import type { ConnectionLimits, FrameLimits, NetworkLogger, PartsWrittenHook, RequestDispatcher } from './types.js';

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
  /** max.connections (2147483647). */
  maxConnections: number;
  /** max.connections.per.ip (2147483647). */
  maxConnectionsPerIp: number;
  /** Unanswered request bytes per connection before reading pauses (default 100 MiB). */
  maxInFlightBytesPerConnection?: number;
  /** queued.max.requests: unanswered requests per connection before reading pauses (default 500). */
  maxQueuedRequestsPerConnection?: number;
  /** socket.listen.backlog.size (default 50). */
  listenBacklog?: number;
  /** Frame limits a new connection on this listener starts with (SASL listeners: until authenticated). */
  initialFrameLimits?: (listener: ListenerSpec) => FrameLimits | undefined;
}

/** Fjord's default for queued.max.request.bytes (Kafka's is -1, unbounded): 256 MiB. */
export const DEFAULT_QUEUED_MAX_REQUEST_BYTES = 268435456;
/** Fjord's default for socket.request.receive.timeout.ms. */
export const DEFAULT_REQUEST_RECEIVE_TIMEOUT_MS = 30000;

interface BoundListener {
  spec: ListenerSpec;
  server: net.Server;
}

export class SocketServer {
  private readonly bound: BoundListener[] = [];
  private readonly connections = new Set<Connection>();
  private readonly connectionsPerIp = new Map<string, number>();
  private readonly limits: ConnectionLimits;
  private readonly memory: RequestMemoryPool;
  private readonly closeLog: CloseLog;
  private nextConnectionSeq = 0;
  private accepting = false;

  constructor(private readonly opts: SocketServerOptions) {
    this.limits = {
      socketRequestMaxBytes: opts.socketRequestMaxBytes,
      connectionsMaxIdleMs: opts.connectionsMaxIdleMs,
      requestReceiveTimeoutMs: opts.requestReceiveTimeoutMs ?? DEFAULT_REQUEST_RECEIVE_TIMEOUT_MS,
      maxQueuedRequestsPerConnection: opts.maxQueuedRequestsPerConnection ?? 500,
      maxInFlightBytesPerConnection: opts.maxInFlightBytesPerConnection ?? 100 * 1024 * 1024,
    };
    this.memory = new RequestMemoryPool(opts.queuedMaxRequestBytes ?? DEFAULT_QUEUED_MAX_REQUEST_BYTES);
    this.closeLog = new CloseLog(opts.logger);
  }

  /** Binds every listener; rejects (after closing those already bound) if one cannot be bound. */
  async start(): Promise<void> {
    this.accepting = true;
    try {
      for (const spec of this.opts.listeners) this.bound.push({ spec, server: await this.listen(spec) });
    } catch (err) {
      await this.closeListeners();
      this.accepting = false;
      throw err;
    }
  }

  /** Listener name → port actually bound (differs from the configured one when that was 0). */
  boundPorts(): Map<string, number> {
    const ports = new Map<string, number>();
    for (const { spec, server } of this.bound) {
      const address = server.address();
      if (address !== null && typeof address === 'object') ports.set(spec.name, address.port);
    }
    return ports;
  }

  connectionCount(): number {
    return this.connections.size;
  }

  connectionStats(): ConnectionStats[] {
    return [...this.connections].map((c) => c.stats());
  }

  /** The broker-wide request memory: bytes reserved now, the most ever, connections waiting for room. */
  requestMemoryStats(): { capacity: number; reserved: number; peakReserved: number; waiting: number } {
    const m = this.memory;
    return { capacity: m.capacity, reserved: m.reserved, peakReserved: m.peakReserved, waiting: m.waiting };
  }

  /** How many connections the broker closed for `reason` (idle, receive-timeout, bad-frame, ...). */
  closedConnections(reason: CloseReason): number {
    return this.closeLog.count(reason);
  }

  /**
   * Stops accepting, lets in-flight requests be answered and written until `deadlineMs`, then
   * closes every connection.
   */
  async stop(deadlineMs = 5000): Promise<void> {
    this.accepting = false;
    const listenersClosed = this.closeListeners();
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, deadlineMs);
    });
    await Promise.all([...this.connections].map((c) => c.drainAndClose(deadline)));
    clearTimeout(timer);
    await Promise.all([...this.connections].map((c) => c.whenClosed()));
    await listenersClosed;
  }

  private listen(spec: ListenerSpec): Promise<net.Server> {
    const server = net.createServer({ allowHalfOpen: true, noDelay: true }, (socket) => this.onConnection(spec, socket));
    return new Promise((resolve, reject) => {
      const onError = (err: NodeJS.ErrnoException): void => {
        reject(new Error(`Cannot bind listener ${spec.name} on ${spec.host}:${spec.port}: ${err.code ?? err.message}`));
      };
      server.once('error', onError);
      server.listen({ host: spec.host, port: spec.port, backlog: this.opts.listenBacklog ?? 50 }, () => {
        server.off('error', onError);
        server.on('error', (err) => this.opts.logger.error({ listener: spec.name, err: err.message }, 'listener error'));
        const address = server.address();
        const port = address !== null && typeof address === 'object' ? address.port : spec.port;
        this.opts.logger.info({ listener: spec.name, host: spec.host, port }, `listening on ${spec.name}://${spec.host}:${port}`);
        resolve(server);
      });
    });
  }

  private closeListeners(): Promise<void> {
    const servers = this.bound.splice(0).map(({ server }) => server);
    return Promise.all(servers.map((s) => new Promise<void>((resolve) => s.close(() => resolve())))).then(() => undefined);
  }

  private onConnection(spec: ListenerSpec, socket: net.Socket): void {
    const clientHost = socket.remoteAddress ?? 'unknown';
    const clientPort = socket.remotePort ?? 0;
    if (!this.accepting) {
      socket.destroy();
      return;
    }
    if (this.connections.size >= this.opts.maxConnections) {
      this.closeLog.closed('max-connections', { clientHost, clientPort, listener: spec.name }, `rejecting connection from ${clientHost}: max.connections ${this.opts.maxConnections} reached`);
      socket.destroy();
      return;
    }
    const fromIp = this.connectionsPerIp.get(clientHost) ?? 0;
    if (fromIp >= this.opts.maxConnectionsPerIp) {
      this.closeLog.closed('max-connections-per-ip', { clientHost, clientPort, listener: spec.name }, `rejecting connection from ${clientHost}: max.connections.per.ip ${this.opts.maxConnectionsPerIp} reached`);
      socket.destroy();
      return;
    }
    this.connectionsPerIp.set(clientHost, fromIp + 1);
    const localPort = socket.localPort ?? spec.port;
    const connectionId = `${socket.localAddress ?? spec.host}:${localPort}-${clientHost}:${clientPort}-${this.nextConnectionSeq++}`;
    const frameLimits = this.opts.initialFrameLimits?.(spec);
    const connection = new Connection(
      socket,
      { connectionId, clientHost, clientPort, listenerName: spec.name, localPort, securityProtocol: spec.securityProtocol, principal: ANONYMOUS, ...(frameLimits ? { frameLimits } : {}) },
      this.opts.dispatcher,
      this.limits,
      this.memory,
      this.closeLog,
      this.opts.onPartsWritten,
    );
    this.connections.add(connection);
    this.opts.logger.debug({ connectionId }, 'connection accepted');
    socket.once('close', () => {
      this.connections.delete(connection);
      const left = (this.connectionsPerIp.get(clientHost) ?? 1) - 1;
      if (left <= 0) this.connectionsPerIp.delete(clientHost);
      else this.connectionsPerIp.set(clientHost, left);
      this.opts.logger.debug({ connectionId }, 'connection closed');
    });
  }
}
