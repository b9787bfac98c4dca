// Accepts client connections on every configured listener and enforces connection limits.
// Frames are moved to and from the dispatcher by Connection; nothing here decodes messages.
import net from 'node:net';
import tls from 'node:tls';
import { CloseLog, type CloseReason } from './close-log.js';
import { ANONYMOUS, type KafkaPrincipal } from '../../security/principal.js';
import { usesTls } from '../../security/security-protocol.js';
import { tlsPrincipal, type ListenerTls } from '../../security/tls/index.js';
import { Connection } from './connection.js';
import { NO_CONNECTION_QUOTAS, type ConnectionQuotaSettings } from './connection-quota-config.js';
import { ConnectionQuotas, type Ticket } from './connection-quotas.js';
import { fdBudget, readOpenFileLimit, type FdBudget } from './fd-headroom.js';
import { RequestMemoryPool } from './request-memory.js';
import type { ListenerSpec } from './listeners.js';
import {
  DEFAULT_QUEUED_MAX_REQUEST_BYTES,
  DEFAULT_QUEUED_MAX_RESPONSE_BYTES,
  DEFAULT_REQUEST_RECEIVE_TIMEOUT_MS,
  MIN_QUEUED_RESPONSE_BYTES,
  type SocketServerOptions,
} from './socket-server-options.js';
import type { ConnectionLimits, ConnectionSocket, ConnectionStats, ListenerConnectionStats } from './types.js';
import { NetworkThreads, type ClosedMessage, type OpenMessage, type RefusedMessage } from './threads/network-threads.js';
import type { RemoteSocket } from './threads/remote-socket.js';
import { tlsPeerPrincipal } from './threads/tls-peer-principal.js';
import type { ThreadListenerTls } from './threads/protocol.js';

interface BoundListener {
  spec: ListenerSpec;
  server: net.Server;
}

export class SocketServer {
  private readonly bound: BoundListener[] = [];
  private readonly connections = new Set<Connection>();
  private readonly quotas: ConnectionQuotas;
  readonly fdBudget: FdBudget;
  private readonly limits: ConnectionLimits;
  private readonly memory: RequestMemoryPool;
  private readonly closeLog: CloseLog;
  private nextConnectionSeq = 0;
  private accepting = false;
  /** TLS sockets still in their handshake (not yet a Connection). */
  private readonly handshaking = new Set<net.Socket>();
  private readonly tlsServers = new Map<string, tls.Server>();
  private readonly listenerTls = new Map<string, ListenerTls>();
  /** Connections served and closed per listener (socket-server-metrics), read by server/metrics. */
  readonly listenerStats = new Map<string, ListenerConnectionStats>();
  /** num.network.threads > 1: the threads that own the sockets; absent: this thread does. */
  private threads: NetworkThreads | undefined;

  constructor(private readonly opts: SocketServerOptions) {
    this.limits = {
      socketRequestMaxBytes: opts.socketRequestMaxBytes,
      connectionsMaxIdleMs: opts.connectionsMaxIdleMs,
      requestReceiveTimeoutMs: opts.requestReceiveTimeoutMs ?? DEFAULT_REQUEST_RECEIVE_TIMEOUT_MS,
      maxQueuedRequestsPerConnection: opts.maxQueuedRequestsPerConnection ?? 500,
      maxInFlightBytesPerConnection: opts.maxInFlightBytesPerConnection ?? 100 * 1024 * 1024,
      maxQueuedResponseBytes: Math.max(opts.maxQueuedResponseBytesPerConnection ?? DEFAULT_QUEUED_MAX_RESPONSE_BYTES, MIN_QUEUED_RESPONSE_BYTES),
      ...(opts.largeAnswerRequest ? { largeAnswerRequest: opts.largeAnswerRequest } : {}),
      ...(opts.requestTimes ? { requestTimes: opts.requestTimes } : {}),
      ...(opts.sharedProduceFrames ? { sharedProduceFrames: true } : {}),
    };
    for (const l of opts.listeners) this.listenerStats.set(l.name, { created: 0, closed: 0 });
    this.memory = new RequestMemoryPool(opts.queuedMaxRequestBytes ?? DEFAULT_QUEUED_MAX_REQUEST_BYTES);
    this.closeLog = new CloseLog(opts.logger);
    this.fdBudget = fdBudget(opts.openFileLimit ?? readOpenFileLimit(), opts.segmentFiles ?? 0);
    const b = this.fdBudget;
    this.quotas = new ConnectionQuotas(
      {
        listeners: opts.listeners.map((l) => l.name),
        ...(opts.interBrokerListener !== undefined ? { interBrokerListener: opts.interBrokerListener } : {}),
        backlog: opts.listenBacklog ?? 50,
        fileCeiling: b.clientCeiling,
        fileCeilingText: `ulimit -n ${b.openFileLimit}, less ${b.segmentFiles} for segment files and ${b.headroom} for inter-broker connections and other files, leaves ${b.clientCeiling}`,
        rateWindow: opts.rateWindow ?? { samples: 11, windowMs: 1000 },
      },
      opts.connectionQuotas ?? { ...NO_CONNECTION_QUOTAS, maxConnections: opts.maxConnections, maxConnectionsPerIp: opts.maxConnectionsPerIp },
      { closeLeastRecentlyUsed: (except, message) => this.closeLeastRecentlyUsed(except, message) },
    );
    for (const [name, t] of opts.listenerTls ?? []) this.listenerTls.set(name, t);
    for (const spec of opts.listeners) {
      if (usesTls(spec.securityProtocol) && !this.listenerTls.has(spec.name))
        throw new Error(`BUG: listener ${spec.name} (${spec.securityProtocol}) has no TLS settings`);
    }
  }

  /** Swaps a listener's TLS settings (renewed certificate): new connections use them, open ones keep theirs. */
  setListenerTls(name: string, settings: ListenerTls): void {
    this.listenerTls.set(name, settings);
    this.threads?.setTls(name, threadTls(settings));
    const server = this.tlsServers.get(name);
    if (server === undefined) return;
    server.setSecureContext(secureContextOptions(settings));
    // ssl.client.auth: the tls.Server reads these for each connection it wraps.
    const auth = server as unknown as { requestCert: boolean; rejectUnauthorized: boolean };
    auth.requestCert = settings.clientAuth !== 'none';
    auth.rejectUnauthorized = settings.clientAuth === 'required';
  }

  listenerTlsOf(name: string): ListenerTls | undefined {
    return this.listenerTls.get(name);
  }

  /** New connection limits (dynamic configs): waiting connections get in if they now fit; open ones stay. */
  setConnectionQuotas(settings: ConnectionQuotaSettings): void {
    this.quotas.update(settings);
  }

  /** Sockets accepted and parked until a slot frees (max.connections) or the creation rate allows. */
  waitingConnectionCount(): number {
    return this.quotas.waitingConnections;
  }

  /** Binds every listener; rejects (after closing those already bound) if one cannot be bound. */
  async start(): Promise<void> {
    this.accepting = true;
    if ((this.opts.networkThreads ?? 1) > 1) {
      await this.startThreads(this.opts.networkThreads!);
      return;
    }
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
    if (this.threads !== undefined) return this.threads.boundPorts();
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
    const listenersClosed = this.threads !== undefined ? this.threads.stopAccepting() : this.closeListeners();
    this.quotas.closeWaiting();
    for (const s of this.handshaking) s.destroy();
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, deadlineMs);
    });
    await Promise.all([...this.connections].map((c) => c.drainAndClose(deadline)));
    clearTimeout(timer);
    await Promise.all([...this.connections].map((c) => c.whenClosed()));
    await listenersClosed;
    await this.threads?.stop();
  }

  /** num.network.threads > 1: connections each network thread accepted since start; [] without threads. */
  networkThreadAccepts(): number[] {
    return this.threads?.acceptedPerThread() ?? [];
  }

  /** num.network.threads > 1: network threads running now (0 once stopped). */
  liveNetworkThreads(): number {
    return this.threads?.live() ?? 0;
  }

  /** Tests: network thread `index` ends as if it crashed (its connections close; it is started again). */
  async crashNetworkThreadForTest(index: number): Promise<void> {
    await this.threads?.crashForTest(index);
  }

  private async startThreads(count: number): Promise<void> {
    const timeoutMs =
      this.opts.tlsHandshakeTimeoutMs ?? (this.limits.requestReceiveTimeoutMs > 0 ? this.limits.requestReceiveTimeoutMs : this.limits.connectionsMaxIdleMs);
    const threads = new NetworkThreads(
      {
        count,
        listeners: this.opts.listeners,
        backlog: this.opts.listenBacklog ?? 50,
        socketRequestMaxBytes: this.limits.socketRequestMaxBytes,
        queuedMaxRequestBytes: this.memory.capacity,
        tlsHandshakeTimeoutMs: timeoutMs,
        requestReceiveTimeoutMs: this.limits.requestReceiveTimeoutMs,
        ...(this.opts.initialFrameLimits ? { initialFrameLimits: this.opts.initialFrameLimits } : {}),
        tlsOf: (name) => {
          const t = this.listenerTls.get(name);
          return t === undefined ? undefined : threadTls(t);
        },
        logger: this.opts.logger,
      },
      {
        opened: (remote, m) => this.onThreadConnection(remote, m),
        refused: (m: RefusedMessage) =>
          this.closeLog.closed(
            m.reason,
            { clientHost: m.clientHost, clientPort: m.clientPort, listener: m.listener },
            `closing connection from ${m.clientHost}:${m.clientPort} on ${m.listener}: ${m.message}`,
          ),
        closedFor: (_remote, m: ClosedMessage) => this.closeLog.closed(m.reason!, { ...m.fields }, `closing connection: ${m.message ?? m.reason!}`),
      },
    );
    try {
      await threads.start();
    } catch (err) {
      this.accepting = false;
      throw err;
    }
    this.threads = threads;
  }

  /** A connection a network thread accepted: the same limits and serving as onConnection's. */
  private onThreadConnection(remote: RemoteSocket, m: OpenMessage): void {
    const spec = this.opts.listeners.find((l) => l.name === m.listener);
    if (spec === undefined || !this.accepting) {
      remote.destroy();
      return;
    }
    const { clientHost, clientPort, localPort } = m;
    const verdict = this.quotas.accept(spec.name, clientHost, () => remote.destroy());
    if ('refused' in verdict) {
      this.closeLog.closed(verdict.refused, { clientHost, clientPort, listener: spec.name }, verdict.message);
      remote.destroy();
      return;
    }
    const ticket = verdict.ticket;
    remote.once('close', () => this.quotas.release(ticket));
    let principal: KafkaPrincipal = ANONYMOUS;
    if (m.tlsPeer !== undefined) {
      try {
        principal = tlsPeerPrincipal(m.tlsPeer, this.listenerTls.get(spec.name)!, spec.securityProtocol);
      } catch (err) {
        this.closeLog.closed(
          'tls-handshake-failed',
          { clientHost, clientPort, listener: spec.name },
          `closing connection from ${clientHost}:${clientPort} on ${spec.name}: ${(err as Error).message}`,
        );
        remote.destroy();
        return;
      }
    }
    const connectionId = `${m.localHost}:${localPort}-${clientHost}:${clientPort}-${this.nextConnectionSeq++}`;
    ticket.whenAdmitted(() => {
      if (!this.accepting) {
        remote.destroy();
        return;
      }
      this.serve(spec, remote, connectionId, clientHost, clientPort, localPort, principal);
      remote.start();
    });
  }

  private listen(spec: ListenerSpec): Promise<net.Server> {
    let server: net.Server;
    if (usesTls(spec.securityProtocol)) {
      const t = this.tlsServer(spec);
      this.tlsServers.set(spec.name, t);
      server = t;
    } else {
      server = net.createServer({ allowHalfOpen: true, noDelay: true }, (socket) => this.onConnection(spec, socket));
    }
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

  private onConnection(spec: ListenerSpec, socket: TrackedSocket): void {
    // Refused here: a TLS listener's tls.Server still wraps it; its failure must not be logged twice.
    const refused = (): void => {
      socket.fjordRefused = true;
      socket.destroy();
    };
    const clientHost = socket.remoteAddress ?? 'unknown';
    const clientPort = socket.remotePort ?? 0;
    if (!this.accepting) {
      refused();
      return;
    }
    const verdict = this.quotas.accept(spec.name, clientHost, () => socket.destroy());
    if ('refused' in verdict) {
      this.closeLog.closed(verdict.refused, { clientHost, clientPort, listener: spec.name }, verdict.message);
      refused();
      return;
    }
    const ticket = verdict.ticket;
    socket.fjordTicket = ticket;
    socket.once('close', () => this.quotas.release(ticket));
    const localPort = socket.localPort ?? spec.port;
    const connectionId = `${socket.localAddress ?? spec.host}:${localPort}-${clientHost}:${clientPort}-${this.nextConnectionSeq++}`;
    if (!usesTls(spec.securityProtocol)) {
      // Served once admitted: now, or when max.connections / the creation rate lets it in.
      ticket.whenAdmitted(() => this.serve(spec, socket, connectionId, clientHost, clientPort, localPort, ANONYMOUS));
      return;
    }
    // TLS: the tls.Server wraps the socket next; until its handshake completes it is only tracked.
    socket.fjordConnectionId = connectionId;
    this.handshaking.add(socket);
    socket.once('close', () => this.handshaking.delete(socket));
  }

  /**
   * TLS listeners: the handshake runs before any Kafka byte is read. A peer that is no TLS client
   * (a plaintext Kafka client, a port scanner) or whose certificate is refused fails it and is
   * closed with one (rate-limited) log line; one that never finishes it is closed at the
   * handshake deadline. The principal comes from the client certificate when one was given.
   */
  private tlsServer(spec: ListenerSpec): tls.Server {
    const settings = this.listenerTls.get(spec.name)!;
    const timeoutMs =
      this.opts.tlsHandshakeTimeoutMs ?? (this.limits.requestReceiveTimeoutMs > 0 ? this.limits.requestReceiveTimeoutMs : this.limits.connectionsMaxIdleMs);
    const server = tls.createServer({
      allowHalfOpen: true,
      noDelay: true,
      ...secureContextOptions(settings),
      requestCert: settings.clientAuth !== 'none',
      // requested: a certificate that is given must still be valid (checked once secure).
      rejectUnauthorized: settings.clientAuth === 'required',
      handshakeTimeout: timeoutMs > 0 ? timeoutMs : 0x7fffffff,
    });
    // Runs before the tls.Server wraps the socket: connection limits apply at accept, as on plaintext.
    server.prependListener('connection', (socket: TrackedSocket) => this.onConnection(spec, socket));
    // The TCP socket under a TLS one (Node keeps it as _parent).
    const rawOf = (socket: tls.TLSSocket): TrackedSocket | undefined => (socket as unknown as { _parent?: TrackedSocket })._parent ?? undefined;
    const peerOf = (socket: tls.TLSSocket): { clientHost: string; clientPort: number } => ({
      clientHost: socket.remoteAddress ?? rawOf(socket)?.remoteAddress ?? 'unknown',
      clientPort: socket.remotePort ?? rawOf(socket)?.remotePort ?? 0,
    });
    const refuse = (socket: tls.TLSSocket, reason: CloseReason, message: string): void => {
      const { clientHost, clientPort } = peerOf(socket);
      this.closeLog.closed(
        reason,
        { clientHost, clientPort, listener: spec.name },
        `closing connection from ${clientHost}:${clientPort} on ${spec.name}: ${message}`,
      );
      socket.destroy();
    };
    server.on('tlsClientError', (err: Error, socket: tls.TLSSocket) => {
      if (rawOf(socket)?.fjordRefused === true) {
        socket.destroy();
        return;
      }
      if ((err as NodeJS.ErrnoException).code === 'ERR_TLS_HANDSHAKE_TIMEOUT')
        refuse(socket, 'tls-handshake-timeout', `TLS handshake not completed within ${timeoutMs} ms`);
      else refuse(socket, 'tls-handshake-failed', `TLS handshake failed: ${tlsFailure(err)}`);
    });
    server.on('secureConnection', (socket: tls.TLSSocket) => {
      const raw = rawOf(socket);
      if (raw !== undefined) this.handshaking.delete(raw);
      if (!this.accepting) {
        socket.destroy();
        return;
      }
      const current = this.listenerTls.get(spec.name)!;
      let principal: KafkaPrincipal;
      try {
        principal = tlsPrincipal(socket, current, spec.securityProtocol);
      } catch (err) {
        refuse(socket, 'tls-handshake-failed', (err as Error).message);
        return;
      }
      const { clientHost, clientPort } = peerOf(socket);
      const localPort = socket.localPort ?? spec.port;
      const connectionId = raw?.fjordConnectionId ?? `${socket.localAddress ?? spec.host}:${localPort}-${clientHost}:${clientPort}-${this.nextConnectionSeq++}`;
      const serve = (): void => {
        if (this.accepting) this.serve(spec, socket, connectionId, clientHost, clientPort, localPort, principal);
        else socket.destroy();
      };
      if (raw?.fjordTicket !== undefined) raw.fjordTicket.whenAdmitted(serve);
      else serve();
    });
    return server;
  }

  /** Kafka's closeExcessConnections: the least recently active connection not on `except`. */
  private closeLeastRecentlyUsed(except: string, message: string): boolean {
    let lru: Connection | undefined;
    for (const c of this.connections) {
      if (c.ctx.listenerName === except) continue;
      if (lru === undefined || c.lastActivityMs < lru.lastActivityMs) lru = c;
    }
    lru?.evict(`${message}: closing the least recently used connection`);
    return lru !== undefined;
  }

  private serve(
    spec: ListenerSpec,
    socket: ConnectionSocket,
    connectionId: string,
    clientHost: string,
    clientPort: number,
    localPort: number,
    principal: KafkaPrincipal,
  ): void {
    const frameLimits = this.opts.initialFrameLimits?.(spec);
    const connection = new Connection(
      socket,
      {
        connectionId,
        clientHost,
        clientPort,
        listenerName: spec.name,
        localPort,
        securityProtocol: spec.securityProtocol,
        principal,
        ...(frameLimits ? { frameLimits } : {}),
      },
      this.opts.dispatcher,
      this.limits,
      this.memory,
      this.closeLog,
      this.opts.onPartsWritten,
    );
    this.connections.add(connection);
    const counted = this.listenerStats.get(spec.name);
    if (counted) counted.created++;
    this.opts.logger.debug({ connectionId, listener: spec.name, principal: `${principal.principalType}:${principal.name}` }, 'connection accepted');
    socket.once('close', () => {
      this.connections.delete(connection);
      if (counted) counted.closed++;
      this.opts.logger.debug({ connectionId }, 'connection closed');
    });
  }
}

/** A TCP socket with what the server notes on it before TLS wraps it. */
type TrackedSocket = net.Socket & { fjordConnectionId?: string; fjordRefused?: boolean; fjordTicket?: Ticket };

/** What a network thread needs of a listener's TLS settings to build its own context. */
function threadTls(t: ListenerTls): ThreadListenerTls {
  return {
    material: t.material,
    minVersion: t.minVersion,
    maxVersion: t.maxVersion,
    clientAuth: t.clientAuth,
    ...(t.ciphers !== undefined ? { ciphers: t.ciphers } : {}),
  };
}

function secureContextOptions(t: ListenerTls): tls.SecureContextOptions {
  return { ...t.material, minVersion: t.minVersion, maxVersion: t.maxVersion, ...(t.ciphers !== undefined ? { ciphers: t.ciphers } : {}) };
}

/** A TLS failure in words an operator recognises, e.g. a plaintext client on a TLS port. */
function tlsFailure(err: Error): string {
  const code = (err as NodeJS.ErrnoException).code ?? '';
  if (
    /WRONG_VERSION_NUMBER|HTTP_REQUEST|UNKNOWN_PROTOCOL|RECORD_LENGTH_MISMATCH|PACKET_LENGTH_TOO_LONG/.test(code) ||
    /wrong version number|http request|unknown protocol/.test(err.message)
  ) {
    return 'the peer does not speak TLS (a PLAINTEXT client on a TLS listener?)';
  }
  if (/PEER_DID_NOT_RETURN_A_CERTIFICATE|CERTIFICATE_REQUIRED/.test(code)) return 'no client certificate (ssl.client.auth=required)';
  return (err.message.split('\n')[0] ?? err.message).trim();
}
