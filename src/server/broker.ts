/**
 * The broker: wires configuration, metadata, storage and the network together, and takes them
 * down in the reverse order.
 */
import type { Logger } from 'pino';
import type { BrokerConfig } from './config/index.js';
import { SocketServer, resolveAdvertisedPorts, type ListenerSpec } from './network/index.js';
import { EmbeddedMetadataStore } from '../metadata/embedded/embedded-store.js';
import type { MetadataStore } from '../metadata/metadata-store.js';
import type { BrokerServices, Endpoint } from './broker-services.js';
import { handlerTable } from './handlers/index.js';
import { createRequestRouter } from './request-router.js';

export class Broker {
  private server: SocketServer | undefined;
  private metadataStore: MetadataStore | undefined;
  private advertised: ListenerSpec[] = [];
  private servicesValue: BrokerServices | undefined;

  constructor(
    readonly config: BrokerConfig,
    private readonly logger: Logger,
  ) {}

  get services(): BrokerServices {
    if (!this.servicesValue) throw new Error('broker not started');
    return this.servicesValue;
  }

  /** The port each listener is bound to (useful when the configuration asked for port 0). */
  boundPorts(): Map<string, number> {
    return this.server?.boundPorts() ?? new Map();
  }

  async start(): Promise<void> {
    const cfg = this.config;
    const log = this.logger;
    this.advertised = cfg.advertisedListeners;
    const firstAdvertised = this.advertised[0]!;
    const self = { id: cfg.brokerId, host: firstAdvertised.host, port: firstAdvertised.port, rack: cfg.brokerRack };
    log.info({ logDirs: cfg.logDirs }, 'loading cluster metadata');
    this.metadataStore = await EmbeddedMetadataStore.open(cfg.logDirs[0]!, self, cfg.clusterId);
    const metadata = this.metadataStore;
    log.info({ clusterId: metadata.clusterId, topics: metadata.topics().length }, 'cluster metadata loaded');

    this.servicesValue = {
      config: cfg,
      metadata,
      logger: log,
      handlers: handlerTable(),
      endpointFor: (brokerId, listenerName) => this.endpointFor(brokerId, listenerName),
    };

    this.server = new SocketServer({
      listeners: cfg.listeners,
      dispatcher: createRequestRouter(this.servicesValue),
      logger: log.child({ name: 'socket-server' }),
      socketRequestMaxBytes: cfg.socketRequestMaxBytes,
      connectionsMaxIdleMs: cfg.connectionsMaxIdleMs,
      maxConnections: cfg.maxConnections,
      maxConnectionsPerIp: cfg.maxConnectionsPerIp,
      maxQueuedRequestsPerConnection: cfg.queuedMaxRequests,
      listenBacklog: cfg.socketListenBacklogSize,
    });
    await this.server.start();
    this.advertised = resolveAdvertisedPorts(this.advertised, this.server.boundPorts());
    for (const l of this.advertised) log.info({ listener: l.name, host: l.host, port: l.port }, 'listening');
    log.info({ brokerId: cfg.brokerId }, 'started');
  }

  private endpointFor(brokerId: number, listenerName: string): Endpoint | undefined {
    if (brokerId !== this.config.brokerId) return undefined;
    const l = this.advertised.find((a) => a.name === listenerName) ?? this.advertised[0];
    return l ? { host: l.host, port: l.port } : undefined;
  }

  async stop(): Promise<void> {
    this.logger.info('shutting down');
    await this.server?.stop();
    await this.metadataStore?.close();
    this.logger.info('shut down');
  }
}
