/**
 * The broker: wires configuration, metadata, storage and the network together, and takes them
 * down in the reverse order.
 */
import type { Logger } from 'pino';
import type { BrokerConfig } from './config/index.js';
import { resolveAdvertisedPorts, type ListenerSpec, type SocketServer } from './network/index.js';
import { createBrokerNetwork, followNetworkConfigChanges } from './broker-network.js';
import { awaitFirstUpdateMetadata, controlledShutdown, interBrokerConnections, registerAndHostController } from './broker-cluster.js';
import { ClientEntityConfigs } from '../metadata/client-entity-configs.js';
import { EmbeddedClientEntities } from '../metadata/embedded/embedded-client-entities.js';
import { EmbeddedMetadataStore } from '../metadata/embedded/embedded-store.js';
import { EmbeddedAcls } from '../metadata/embedded/embedded-acls.js';
import { Authorizer, parseSuperUsers } from '../security/authorizer/authorizer.js';
import type { DelegationTokenManager } from '../security/delegation-tokens/token-manager.js';
import { openDelegationTokens } from './delegation-tokens.js';
import type { MetadataStore } from '../metadata/metadata-store.js';
import type { BrokerServices, ClusterControl, Endpoint } from './broker-services.js';
import { brokerHandlerTable } from './handlers/index.js';
import { QuotaManagers } from './quotas/quota-manager.js';
import { createAdminServices, openGroupConfigStore, type AdminServices, type AdminServicesOptions } from './admin/index.js';
import type { LogManager } from '../storage/manager/log-manager.js';
import type { ReplicaManager } from '../replication/replica-manager.js';
import { openPartitionHosting, type PartitionHosting } from './shard-wiring.js';
import type { RestartTimings } from '../replication/shards/worker/restart-policy.js';
import { openGroupCoordinator, type GroupCoordinator } from './group-coordinator-wiring.js';
import { TxnCoordinator } from '../coordinator/txn/txn-coordinator.js';
import { WireTxnMarkerWriter, type TxnMarkerWriter } from '../coordinator/txn/markers.js';
import { TxnVerification } from '../coordinator/txn/txn-verification.js';
import type { BrokerConnections } from '../client/broker-connections.js';
import { ZkProducerIdBlocks } from '../coordinator/txn/producer-ids.js';
import type { ZkMode } from '../metadata/zk/zk-mode.js';
import type { ZkBrokerMetadata } from '../metadata/zk/zk-broker-metadata.js';
import type { KafkaController } from '../controller/index.js';
import type { LeaderReadiness } from './cluster/leader-readiness.js';
import type { InterBrokerInterceptor } from '../client/inter-broker-interceptor.js';
import type { MetricsRegistry } from './metrics/registry.js';
import { clusterSignals } from './metrics/health.js';
import { BrokerObservability } from './metrics/broker-observability.js';
import { stopWithin } from './stop-within.js';
import { openClientTelemetry } from './telemetry/open-client-telemetry.js';

/** What a broker takes besides its configuration (tests and embedders; never from properties). */
export interface BrokerOptions {
  /** Test seam: consulted before each request to another broker (controller, replica fetchers, transaction verification, leader readiness). */
  interBrokerInterceptor?: InterBrokerInterceptor;
  /** Test seam: how transaction markers are written (default: WriteTxnMarkers to each partition's leader). */
  txnMarkerWriter?: TxnMarkerWriter;
  /** Test seam: the feature flags this broker claims to support (default: Fjord's, none). */
  supportedFeatures?: AdminServicesOptions['supportedFeatures'];
  /** Test seam: when a shard worker that ended is started again (num.io.threads > 1; default: restart-policy.ts's). */
  shardRestart?: RestartTimings;
}

export class Broker {
  private server: SocketServer | undefined;
  private metadataStore: MetadataStore | undefined;
  private advertised: ListenerSpec[] = [];
  private servicesValue: BrokerServices | undefined;
  private admin: AdminServices | undefined;
  private logManager: LogManager | undefined;
  private replicaManager: ReplicaManager | undefined;
  /** Where the partitions live: this thread, or shard workers (num.io.threads > 1). */
  private partitionHosting: PartitionHosting | undefined;
  private groupCoordinator: GroupCoordinator | undefined;
  private txnCoordinator: TxnCoordinator | undefined;
  /** Cluster mode: connections to the other brokers for requests made on a client's behalf. */
  private brokerConnections: BrokerConnections | undefined;
  private zk: ZkMode | undefined;
  private authorizer: Authorizer | undefined;
  private delegationTokens: DelegationTokenManager | undefined;
  /** Cluster mode: the controller this broker hosts (active only while elected). */
  private controller: KafkaController | undefined;
  /** Cluster mode's metadata image (also this.metadataStore). */
  private image: ZkBrokerMetadata | undefined;
  /** Metrics, health and their listener (src/server/metrics/broker-observability.ts). */
  readonly observability: BrokerObservability;

  constructor(
    readonly config: BrokerConfig,
    private readonly logger: Logger,
    private readonly options: BrokerOptions = {},
  ) {
    this.observability = new BrokerObservability(config, logger);
  }

  /** What `/metrics` serves: every area registers its metrics on it. */
  get metrics(): MetricsRegistry {
    return this.observability.metrics;
  }

  get services(): BrokerServices {
    if (!this.servicesValue) throw new Error('broker not started');
    return this.servicesValue;
  }

  /** The port each listener is bound to (useful when the configuration asked for port 0). */
  boundPorts(): Map<string, number> {
    return this.server?.boundPorts() ?? new Map();
  }

  /** The socket server once started (tests: network thread stats and faults). */
  get socketServer(): SocketServer | undefined {
    return this.server;
  }

  async start(): Promise<void> {
    const cfg = this.config;
    const log = this.logger;
    await this.observability.startListener();
    this.advertised = cfg.advertisedListeners;
    const firstAdvertised = this.advertised[0]!;
    const self = { id: cfg.brokerId, host: firstAdvertised.host, port: firstAdvertised.port, rack: cfg.brokerRack };
    let clusterId = cfg.clusterId;
    if (cfg.zookeeperConnect !== null) {
      // Cluster mode: ZooKeeper settles the cluster id, holds topics and elects the controller
      // (loaded lazily: embedded mode never loads it).
      const { ZkMode } = await import('../metadata/zk/zk-mode.js');
      this.zk = await ZkMode.start({
        connect: cfg.zookeeperConnect,
        sessionTimeoutMs: cfg.zookeeperSessionTimeoutMs,
        connectionTimeoutMs: cfg.zookeeperConnectionTimeoutMs,
        brokerId: cfg.brokerId,
        rack: cfg.brokerRack,
        logDirs: cfg.logDirs,
        configuredClusterId: cfg.clusterId,
        logger: log.child({ component: 'zookeeper' }),
      });
      clusterId = this.zk.clusterId;
    }
    log.info({ logDirs: cfg.logDirs }, 'loading cluster metadata');
    // Cluster mode serves from the image the controller feeds (ZooKeeper holds the truth); the
    // embedded store's file, if any, stays untouched on disk.
    if (this.zk) {
      this.image = await this.zk.createMetadataImage(log.child({ component: 'metadata' }), cfg.requestTimeoutMs);
      this.metadataStore = this.image;
    } else {
      this.metadataStore = await EmbeddedMetadataStore.open(cfg.logDirs[0]!, self, clusterId);
    }
    const metadata: MetadataStore = this.metadataStore;
    log.info({ clusterId: metadata.clusterId, topics: metadata.topics().length }, 'cluster metadata loaded');
    // Admin first: it knows each topic's effective log config (topic overrides over dynamic and
    // static broker configs), which storage takes for the logs it finds at start-up and the
    // replica manager whenever it syncs a topic. Admin's view of the partitions is resolved
    // lazily, once the log and replica managers exist.
    this.admin = await createAdminServices({
      config: cfg,
      metadata,
      logger: log.child({ component: 'admin' }),
      stateDir: cfg.logDirs[0]!,
      ...(this.zk ? { sharedConfigs: await this.zk.brokerConfigStore() } : {}),
      ...(this.zk ? { featureStore: await (await import('../metadata/zk/zk-feature-store.js')).ZkFeatureStore.open(this.zk.session, log) } : {}),
      ...(this.options.supportedFeatures ? { supportedFeatures: this.options.supportedFeatures } : {}),
      partitions: () => this.partitionHosting?.access,
    });
    const admin = this.admin;
    this.zk?.onBrokerConfigChange((scope) => {
      admin.configs
        .onSharedBrokerConfigChange(scope)
        .catch((err: unknown) => log.warn({ scope, err: String(err) }, 'cannot re-read dynamic broker configs from ZooKeeper'));
    });
    const hosting = await openPartitionHosting({
      config: cfg,
      metadata,
      admin,
      logger: log,
      zk: this.zk,
      image: this.image,
      interBrokerInterceptor: this.options.interBrokerInterceptor,
      shardRestart: this.options.shardRestart,
    });
    this.partitionHosting = hosting;
    ({ logManager: this.logManager, replicaManager: this.replicaManager } = hosting);
    const { replicaManager, shards } = hosting;
    this.observability.health.logsRecovered = true;
    const configsOf = (await openGroupConfigStore(cfg.logDirs[0]!, this.zk, admin.configs, log)).lookup;
    this.groupCoordinator = openGroupCoordinator(cfg, metadata, replicaManager, log, () => this.brokerConnections, configsOf);
    this.groupCoordinator.start();
    // Markers go to each partition's leader over the inter-broker listener, this broker included.
    const markers =
      this.options.txnMarkerWriter ??
      new WireTxnMarkerWriter({
        brokerId: cfg.brokerId,
        metadata,
        endpoint: (id) => this.endpointFor(id, cfg.interBrokerListenerName),
        clientId: `txn-marker-sender-${cfg.brokerId}`,
        requestTimeoutMs: cfg.requestTimeoutMs,
        ...(cfg.interBrokerSecurity ? { security: cfg.interBrokerSecurity } : {}),
      });
    this.txnCoordinator = new TxnCoordinator({
      config: cfg,
      metadata,
      replicaManager,
      logger: log.child({ component: 'txn-coordinator' }),
      // Cluster mode: blocks from /latest_producer_id_block, unique across brokers (as Kafka).
      producerIds: this.zk ? new ZkProducerIdBlocks(await this.zk.zkClient(), cfg.brokerId) : replicaManager.producerIds,
      markers,
    });
    this.txnCoordinator.start();
    if (this.zk)
      this.brokerConnections = interBrokerConnections(cfg, (id) => this.endpointFor(id, cfg.interBrokerListenerName), this.options.interBrokerInterceptor);
    const txnVerification = new TxnVerification({
      brokerId: cfg.brokerId,
      metadata,
      coordinator: this.txnCoordinator,
      ...(this.brokerConnections ? { connections: this.brokerConnections } : {}),
      logger: log.child({ component: 'txn-verification' }),
    });

    let clusterControl: ClusterControl | undefined;
    let leaderReadiness: LeaderReadiness | undefined;
    if (this.zk && this.image && this.brokerConnections) {
      const { ControlRequests } = await import('./cluster/control-requests.js');
      const zk = this.zk;
      // On shard workers (num.io.threads > 1) the role changes go to the owning shards, and readiness reads their ledger.
      const roles = hosting.roles;
      const control = new ControlRequests({
        brokerId: cfg.brokerId,
        image: this.image,
        roles: roles ?? replicaManager,
        ...(roles ? { liveBrokersChanged: () => roles.brokersChanged() } : {}),
        brokerEpoch: () => zk.brokerEpoch,
        logger: log.child({ component: 'control-requests' }),
      });
      clusterControl = control;
      const hostedEpoch = roles ? (t: string, p: number) => roles.hostedEpoch(t, p) : (t: string, p: number) => replicaManager.getPartition(t, p)?.leaderEpoch;
      this.observability.health.followCluster(clusterSignals(cfg.brokerId, zk, this.image, hostedEpoch, control));
      // New topics and partitions are answered once their leaders serve them (topic-creation.ts).
      leaderReadiness = new (await import('./cluster/leader-readiness.js')).LeaderReadiness({
        brokerId: cfg.brokerId,
        metadata,
        leadsHere: (topic, partition, epoch) => {
          if (roles) return roles.leadsHere(topic, partition, epoch);
          const p = replicaManager.getPartition(topic, partition);
          return p !== undefined && p.isLeader && p.leaderEpoch >= epoch;
        },
        connections: this.brokerConnections,
        logger: log.child({ component: 'leader-readiness' }),
      });
    }
    const zkMode = this.zk;
    // OffsetCommit/OffsetFetch v0's store; each ZooKeeper call bounded as Kafka's ZooKeeperClient bounds its wait for a connection.
    const zkConsumerOffsets = zkMode
      ? new (await import('../metadata/zk/zk-consumer-offsets.js')).ZkConsumerOffsets(zkMode.session, cfg.zookeeperConnectionTimeoutMs)
      : undefined;
    // SCRAM credentials and quotas: ZooKeeper's /config/users and /config/clients in cluster mode.
    const clientEntities = zkMode ? await zkMode.clientEntityConfigs() : await ClientEntityConfigs.open(new EmbeddedClientEntities(cfg.logDirs[0]!));
    // ACLs (authorizer.class.name; empty = none): a JSON file embedded, Kafka's znodes in cluster mode.
    const authorizer = await this.openAuthorizer(zkMode);
    // Delegation tokens: ZooKeeper's /delegation_token in cluster mode, a file beside the metadata embedded.
    const delegationTokens = await openDelegationTokens(cfg, zkMode, log.child({ component: 'delegation-tokens' }));
    this.delegationTokens = delegationTokens;
    const broker = this;
    this.servicesValue = {
      config: cfg,
      metadata,
      logger: log,
      handlers: brokerHandlerTable(zkMode !== undefined, cfg.groupCoordinatorRebalanceProtocols),
      ...(clusterControl ? { clusterControl } : {}),
      ...(leaderReadiness ? { leaderReadiness } : {}),
      ...(zkMode ? { isActiveController: () => this.controller?.isActive ?? false } : {}),
      ...(zkConsumerOffsets ? { zkConsumerOffsets } : {}),
      // Created once registered (after the services): read through.
      get controller() {
        return broker.controller;
      },
      logManager: this.logManager,
      replicaManager: this.replicaManager,
      shards,
      groupCoordinator: this.groupCoordinator,
      txnCoordinator: this.txnCoordinator,
      txnVerification,
      clientEntities,
      ...(authorizer ? { authorizer } : {}),
      delegationTokens,
      quotas: new QuotaManagers(clientEntities, { samples: cfg.quotaWindowNum, windowMs: cfg.quotaWindowSizeSeconds * 1000 }),
      admin: this.admin,
      endpointFor: (brokerId, listenerName) => this.endpointFor(brokerId, listenerName),
      // metrics.recording.enable=false: no stats, so the hot paths skip every metric step.
      ...(cfg.metricsRecordingEnable ? { requestStats: this.observability.requestStats, topicStats: this.observability.topicStats } : {}),
      telemetry: await openClientTelemetry(cfg, zkMode, this.observability.metrics, this.admin.configs, log),
    };

    const network = createBrokerNetwork(cfg, this.servicesValue, clientEntities, log);
    const zookeeper = this.zk && { session: this.zk.session.stats, controller: () => this.controller };
    this.observability.registerAreas({
      brokerState: { metadata, replicaManager, groups: this.groupCoordinator, txns: this.txnCoordinator, zookeeper },
      traffic: { services: this.servicesValue, network },
      kafkaExporter: {
        metadata,
        replicaManager,
        groupCoordinator: this.groupCoordinator,
        connections: this.brokerConnections,
        isActiveController: () => !zkMode || (this.controller?.isActive ?? false),
        ...(zkConsumerOffsets ? { zkGroups: zkConsumerOffsets } : {}),
        logger: log.child({ component: 'consumer-lag' }),
      },
    });
    this.server = network.server;
    await this.server.start();
    followNetworkConfigChanges(cfg, network, this.admin, log);
    this.advertised = resolveAdvertisedPorts(this.advertised, this.server.boundPorts());
    for (const l of this.advertised) log.info({ listener: l.name, host: l.host, port: l.port }, 'listening');
    this.observability.serveConsoleThrough(this.advertised);
    // Registered last, as Kafka does: other brokers and tools see it once it can serve.
    if (this.zk && this.image) {
      this.controller = await registerAndHostController(this.zk, this.image, cfg, this.advertised, this.logger, this.options.interBrokerInterceptor);
      await awaitFirstUpdateMetadata(this.image, cfg, this.logger);
    }
    this.observability.health.started = true;
    log.info({ brokerId: cfg.brokerId }, 'started');
  }

  private async openAuthorizer(zkMode: ZkMode | undefined): Promise<Authorizer | undefined> {
    const cfg = this.config;
    const className = cfg.values.get('authorizer.class.name');
    if (typeof className !== 'string' || className === '') return undefined;
    const logger = this.logger.child({ component: 'authorizer' });
    const storage = zkMode ? await zkMode.aclStorage(logger) : new EmbeddedAcls(cfg.logDirs[0]!);
    const superUsers = parseSuperUsers(cfg.values.get('super.users') as string | null);
    const allowEveryoneIfNoAclFound = cfg.values.get('allow.everyone.if.no.acl.found') === true;
    this.authorizer = await Authorizer.open({ storage, superUsers, allowEveryoneIfNoAclFound, logger });
    this.logger.info({ authorizer: className, superUsers, allowEveryoneIfNoAclFound }, 'ACL authorizer enabled');
    return this.authorizer;
  }

  /** ZooKeeper mode's view of the controller election (undefined in embedded mode). */
  get zookeeper(): ZkMode | undefined {
    return this.zk;
  }

  private endpointFor(brokerId: number, listenerName: string): Endpoint | undefined {
    // Cluster mode: any live broker, by the listener the client came through (Kafka omits a
    // broker that has no listener of that name).
    if (this.image) return this.image.endpoint(brokerId, listenerName);
    if (brokerId !== this.config.brokerId) return undefined;
    const l = this.advertised.find((a) => a.name === listenerName) ?? this.advertised[0];
    return l ? { host: l.host, port: l.port } : undefined;
  }

  /**
   * Stops the broker. `abrupt` (the in-process test harness's kill): no controlled shutdown, and
   * connections are closed without waiting for requests in flight, as close to a crash as one
   * process allows (the logs are still closed cleanly).
   */
  async stop(opts: { abrupt?: boolean } = {}): Promise<void> {
    this.logger.info('shutting down');
    this.observability.health.started = false; // not ready while stopping
    // With no other live broker there is nowhere to move leadership: skip the round trips (and
    // the controller's ZooKeeper writes, which would wait for a ZooKeeper that may be gone).
    const others = this.image?.brokers().some((b) => b.id !== this.config.brokerId) ?? false;
    if (!opts.abrupt && this.zk && this.image && this.server && this.config.controlledShutdownEnable && others)
      await controlledShutdown(this.config, this.zk, this.image, this.logger);
    await (opts.abrupt ? this.server?.stop(0) : this.server?.stop());
    this.observability.stopAreas();
    this.brokerConnections?.close();
    this.txnCoordinator?.shutdown();
    this.groupCoordinator?.shutdown();
    if (this.partitionHosting?.workers) await this.partitionHosting.workers.shutdown();
    else {
      await this.replicaManager?.shutdown();
      await this.logManager?.shutdown();
    }
    await this.admin?.close();
    await this.metadataStore?.close();
    // An event in flight may be waiting on ZooKeeper, which queues operations while it is
    // unreachable: stopping must not wait for it without end (the session's expiry fences it).
    if (this.controller) await stopWithin(this.controller.stop(), 5000, 'stopping the controller', this.logger);
    this.authorizer?.close();
    this.delegationTokens?.close();
    await this.zk?.stop();
    await this.observability.closeListener();
    this.logger.info('shut down');
  }
}
