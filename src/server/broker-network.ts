/**
 * The broker's network, wired from its configuration: the socket server (listeners, limits, the
 * SASL gate in front of the request router, TLS per listener) and, once it listens, the dynamic
 * configs it follows (connection limits, renewed certificates).
 */
import type { Logger } from 'pino';
import type { BrokerConfig } from './config/index.js';
import type { BrokerServices } from './broker-services.js';
import type { AdminServices } from './admin/index.js';
import type { ClientEntityConfigStore } from '../metadata/client-entity-configs.js';
import { SocketServer, isLargeAnswerRequest } from './network/index.js';
import { ConnectionQuotaReloader } from './network/connection-quota-config.js';
import { logFdBudget } from './network/fd-headroom.js';
import { saslFrameLimitsFor, withSaslAuthentication } from './network/sasl-gate.js';
import { createRequestRouter } from './request-router.js';
import { defaultOpenFileBudget } from '../storage/segment/segment-file.js';
import { fetchReadBuffers } from '../storage/segment/read-buffer-pool.js';
import { TlsReloader } from '../security/tls/reload.js';
import { SaslAuthenticationStats } from '../security/sasl/authentication-stats.js';

export interface BrokerNetwork {
  /** Not started yet. */
  server: SocketServer;
  /** Connection limits: server.properties now, dynamic configs once registered (followConfigChanges). */
  connectionQuotas: ConnectionQuotaReloader;
  /** SASL authentications per listener (metrics). */
  saslStats: SaslAuthenticationStats;
}

export function createBrokerNetwork(cfg: BrokerConfig, services: BrokerServices, clientEntities: ClientEntityConfigStore, log: Logger): BrokerNetwork {
  const connectionQuotas = new ConnectionQuotaReloader(
    cfg.listeners.map((l) => l.name),
    cfg.raw,
    { setConnectionQuotas: (q) => server.setConnectionQuotas(q) },
  );
  const saslStats = new SaslAuthenticationStats();
  const server = new SocketServer({
    listeners: cfg.listeners,
    connectionQuotas: connectionQuotas.initial(),
    interBrokerListener: cfg.interBrokerListenerName,
    // Client connections leave the segment files' share of the open-file limit (fd-headroom.ts).
    segmentFiles: cfg.logSegmentMaxOpenFiles > 0 ? cfg.logSegmentMaxOpenFiles : defaultOpenFileBudget(),
    rateWindow: { samples: cfg.quotaWindowNum, windowMs: cfg.quotaWindowSizeSeconds * 1000 },
    // SASL listeners authenticate each connection before its requests reach the router.
    dispatcher: withSaslAuthentication(createRequestRouter(services), {
      config: cfg.sasl,
      clientEntities,
      ...(services.delegationTokens ? { delegationTokens: services.delegationTokens } : {}),
      logger: log.child({ component: 'sasl' }),
      stats: saslStats,
    }),
    initialFrameLimits: saslFrameLimitsFor(cfg.sasl),
    // Fetch responses carry pooled read buffers by reference; recycle them once sent.
    onPartsWritten: (parts) => fetchReadBuffers.releaseAll(parts),
    logger: log.child({ component: 'socket-server' }),
    socketRequestMaxBytes: cfg.socketRequestMaxBytes,
    connectionsMaxIdleMs: cfg.connectionsMaxIdleMs,
    maxConnections: cfg.maxConnections,
    maxConnectionsPerIp: cfg.maxConnectionsPerIp,
    maxQueuedRequestsPerConnection: cfg.queuedMaxRequests,
    maxQueuedResponseBytesPerConnection: cfg.values.get('queued.max.response.bytes.per.connection') as number,
    largeAnswerRequest: isLargeAnswerRequest,
    queuedMaxRequestBytes: cfg.queuedMaxRequestBytes,
    requestReceiveTimeoutMs: cfg.socketRequestReceiveTimeoutMs,
    listenBacklog: cfg.socketListenBacklogSize,
    listenerTls: cfg.listenerTls,
    ...(services.requestStats ? { requestTimes: services.requestStats } : {}),
    // Partitions on shard workers (num.io.threads > 1): they read Produce records in place.
    ...((services.shards?.count ?? 1) > 1 ? { sharedProduceFrames: true } : {}),
    // num.network.threads > 1: network threads own the sockets (server/network/threads/).
    ...(cfg.numNetworkThreads > 1 ? { networkThreads: cfg.numNetworkThreads } : {}),
  });
  return { server, connectionQuotas, saslStats };
}

/** Once listening: dynamic connection limits and renewed certificates (kafka-configs.sh) take effect. */
export function followNetworkConfigChanges(cfg: BrokerConfig, network: BrokerNetwork, admin: AdminServices, log: Logger): void {
  const { server } = network;
  admin.configs.addReconfigurable(network.connectionQuotas);
  logFdBudget(log.child({ component: 'socket-server' }), server.fdBudget, cfg.listeners.length > 1 ? cfg.interBrokerListenerName : undefined);
  // Renewed certificates: dynamic listener.name.<l>.ssl.* changes rebuild the TLS contexts.
  if (cfg.listenerTls.size > 0) {
    const tlsLog = log.child({ component: 'tls' });
    const reloader = new TlsReloader(cfg.listeners, cfg.raw, server, (fields, msg) => tlsLog.info(fields, msg));
    admin.configs.addReconfigurable(reloader);
  }
}
