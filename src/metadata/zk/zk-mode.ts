/**
 * What a broker does differently when `zookeeper.connect` is set (cluster mode): connect, agree
 * on the cluster id with ZooKeeper and refuse log dirs from another cluster; build the metadata
 * image the controller feeds (ZkBrokerMetadata) over Kafka's ZooKeeper API; then (once the
 * listeners are bound) register, join the controller election and host the controller.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Logger } from 'pino';
import { readMetaProperties } from '../../storage/index.js';
import { randomUuid } from '../../protocol/primitives/index.js';
import { METADATA_FILE } from '../embedded/embedded-store.js';
import { ZkSession } from './zk-session.js';
import type { KafkaZkApi } from './zk-client-types.js';
import { ZkBrokerMetadata } from './zk-broker-metadata.js';
import type { ReplicaAssigner } from './zk-topic-writes.js';
import { ConfigChangeListener } from './zk-config-changes.js';
import type { AclStorage } from '../acl-storage.js';
import { ZkClientEntities } from './zk-client-entities.js';
import { ClientEntityConfigs } from '../client-entity-configs.js';
import { KafkaZkClient } from './kafka-zk-client.js';
import { assignAddedPartitions, assignReplicas } from '../replica-assignment.js';
import { ZkMembership } from './zk-membership.js';
import type { BrokerEndpoint } from './zk-data.js';
import { DEFAULT_CONFIG_ENTITY } from './zk-paths.js';

export interface ZkModeOptions {
  connect: string;
  sessionTimeoutMs: number;
  connectionTimeoutMs: number;
  brokerId: number;
  rack: string | null;
  logDirs: readonly string[];
  /** `cluster.id` from the configuration, when set. */
  configuredClusterId: string | null;
  logger: Logger;
}

export class ClusterIdMismatchError extends Error {
  override readonly name = 'ClusterIdMismatchError';
}

/** The cluster ids recorded locally: meta.properties of each log dir and the embedded store. */
async function localClusterIds(logDirs: readonly string[]): Promise<{ where: string; id: string }[]> {
  const found: { where: string; id: string }[] = [];
  for (const dir of logDirs) {
    const meta = await readMetaProperties(dir).catch(() => undefined);
    const id = meta?.['cluster.id'];
    if (id) found.push({ where: join(dir, 'meta.properties'), id });
  }
  const storeFile = join(logDirs[0]!, METADATA_FILE);
  try {
    const state = JSON.parse(await readFile(storeFile, 'utf8')) as { clusterId?: unknown };
    if (typeof state.clusterId === 'string') found.push({ where: storeFile, id: state.clusterId });
  } catch {
    // absent or unreadable: the embedded store reports unreadable files itself when it opens
  }
  return found;
}

async function checkBrokerIds(logDirs: readonly string[], brokerId: number): Promise<void> {
  for (const dir of logDirs) {
    const meta = await readMetaProperties(dir).catch(() => undefined);
    const recorded = meta?.['broker.id'];
    if (recorded !== undefined && Number(recorded) !== brokerId) {
      throw new ClusterIdMismatchError(
        `${join(dir, 'meta.properties')} records broker.id ${recorded}, but this broker is configured with broker.id ${brokerId}`,
      );
    }
  }
}

export class ZkMode {
  private registered = false;
  private zkApi: KafkaZkApi | undefined;
  private brokerEpochValue = -1n;
  private configChanges: ConfigChangeListener | undefined;
  private brokerConfigListener: ((scope: string) => void) | undefined;
  private topicConfigListener: ((topic: string) => void) | undefined;
  private clientMetricsListener: ((name: string) => void | Promise<void>) | undefined;
  private groupConfigListener: ((name: string) => void | Promise<void>) | undefined;
  private clientEntities: ClientEntityConfigs | undefined;

  private constructor(
    readonly session: ZkSession,
    readonly membership: ZkMembership,
    private readonly brokerId: number,
    private readonly connectionTimeoutMs: number,
  ) {}

  get clusterId(): string {
    return this.membership.clusterId;
  }

  /** Connects and settles the cluster id; throws one-line errors for a foreign log dir. */
  static async start(opts: ZkModeOptions): Promise<ZkMode> {
    const log = opts.logger;
    log.info({ zookeeperConnect: opts.connect }, 'connecting to ZooKeeper');
    const session = await ZkSession.open({
      connect: opts.connect,
      sessionTimeoutMs: opts.sessionTimeoutMs,
      connectionTimeoutMs: opts.connectionTimeoutMs,
      logger: log,
    });
    try {
      await checkBrokerIds(opts.logDirs, opts.brokerId);
      const local = await localClusterIds(opts.logDirs);
      const membership = await ZkMembership.prepare({
        session,
        brokerId: opts.brokerId,
        rack: opts.rack,
        logger: log,
        // A fresh ZooKeeper takes the id this broker already has, so an embedded broker's data
        // survives its move to cluster mode; other brokers must then agree with it.
        proposedClusterId: () => opts.configuredClusterId ?? local[0]?.id ?? randomUuid(),
      });
      const zkId = membership.clusterId;
      if (opts.configuredClusterId !== null && opts.configuredClusterId !== zkId) {
        throw new ClusterIdMismatchError(
          `cluster.id ${opts.configuredClusterId} does not match the cluster id ${zkId} in ZooKeeper (${opts.connect}/cluster/id)`,
        );
      }
      const foreign = local.find((l) => l.id !== zkId);
      if (foreign) {
        throw new ClusterIdMismatchError(
          `The cluster id ${zkId} in ZooKeeper (${opts.connect}/cluster/id) does not match the cluster id ${foreign.id} in ${foreign.where}: this log dir belongs to another cluster`,
        );
      }
      log.info({ clusterId: zkId, sessionId: session.sessionId() }, 'connected to ZooKeeper');
      return new ZkMode(session, membership, opts.brokerId, opts.connectionTimeoutMs);
    } catch (err) {
      await session.close();
      throw err;
    }
  }

  /** meta.properties for each log dir, as Kafka writes it in ZooKeeper mode. */
  metaProperties(): Record<string, string> {
    return { version: '0', 'broker.id': String(this.brokerId), 'cluster.id': this.clusterId };
  }

  /** Kafka's ZooKeeper API over this session (KafkaZkClient). */
  async zkClient(): Promise<KafkaZkApi> {
    this.zkApi ??= new KafkaZkClient(this.session);
    return this.zkApi;
  }

  /** The metadata image this broker serves from in cluster mode, fed by the controller's requests. */
  async createMetadataImage(logger: Logger, writeTimeoutMs: number): Promise<ZkBrokerMetadata> {
    const zk = await this.zkClient();
    const assigner: ReplicaAssigner = { assignReplicas, assignAddedPartitions };
    const image = new ZkBrokerMetadata({
      brokerId: this.brokerId,
      clusterId: this.clusterId,
      zk,
      assigner,
      logger,
      writeTimeoutMs,
      controllerIdHint: () => this.membership.controllerId,
    });
    // Topic configs changed by any broker or tool are announced under /config/changes: re-read.
    this.configChanges = new ConfigChangeListener({
      zk,
      session: this.session,
      logger,
      onChange: (type, name) => {
        if (type === 'topics') {
          this.topicConfigListener?.(name);
          return image.refreshTopicConfigs(name);
        }
        if (type === 'brokers') this.brokerConfigListener?.(name === DEFAULT_CONFIG_ENTITY ? '' : name);
        if (type === 'users' || type === 'clients') return this.clientEntities?.reload(`${type}/${name}`);
        if (type === 'client-metrics') return this.clientMetricsListener?.(name);
        if (type === 'groups') return this.groupConfigListener?.(name);
        return undefined;
      },
    });
    await this.configChanges.start();
    return image;
  }

  /**
   * Dynamic broker configs as Kafka keeps them in ZooKeeper mode: /config/brokers/<id> and
   * /config/brokers/<default> (scope ""), written with a /config/changes notification.
   */
  async brokerConfigStore(): Promise<{
    read(scope: string): Promise<Record<string, string>>;
    write(scope: string, entries: Record<string, string>): Promise<void>;
  }> {
    const zk = await this.zkClient();
    const entity = (scope: string): string => (scope === '' ? DEFAULT_CONFIG_ENTITY : scope);
    return {
      read: (scope) => zk.getEntityConfigs('brokers', entity(scope)),
      write: (scope, entries) => zk.setEntityConfigs('brokers', entity(scope), entries),
    };
  }

  /**
   * Users' and client ids' configs (SCRAM credentials, quotas) as Kafka keeps them in ZooKeeper;
   * kept up to date from /config/changes once createMetadataImage has started the listener.
   */
  async clientEntityConfigs(): Promise<ClientEntityConfigs> {
    this.clientEntities ??= await ClientEntityConfigs.open(new ZkClientEntities(await this.zkClient()));
    return this.clientEntities;
  }

  /** ACLs in Kafka's znodes (/kafka-acl, /kafka-acl-extended), followed through their change notifications. */
  async aclStorage(logger?: Logger): Promise<AclStorage> {
    const { ZkAcls } = await import('./zk-acls.js');
    return new ZkAcls(this.session, logger);
  }

  /** Called with the scope ("" or a broker id) whenever a broker config change is announced. */
  onBrokerConfigChange(listener: (scope: string) => void): void {
    this.brokerConfigListener = listener;
  }

  /** Called with the znode name under /config/client-metrics whenever a KIP-714 subscription change is announced. */
  onClientMetricsChange(listener: (name: string) => void | Promise<void>): void {
    this.clientMetricsListener = listener;
  }

  /** Called with the znode name under /config/groups whenever a group config change is announced. */
  onGroupConfigChange(listener: (name: string) => void | Promise<void>): void {
    this.groupConfigListener = listener;
  }

  /** Called with the topic whenever a topic config change is announced (the controller elects on unclean.leader.election.enable). */
  onTopicConfigChange(listener: (topic: string) => void): void {
    this.topicConfigListener = listener;
  }

  /** Kafka's broker epoch: the czxid of this broker's registration (-1 until registered). */
  get brokerEpoch(): bigint {
    return this.brokerEpochValue;
  }

  /** Registers at /brokers/ids/<id> with the bound listeners and joins the controller election. */
  async register(endpoints: BrokerEndpoint[]): Promise<void> {
    this.membership.setEndpoints(endpoints);
    await this.membership.register();
    this.registered = true;
    await this.readBrokerEpoch();
    // A new session re-registers (a new czxid): the controller fences requests meant for the old one.
    this.membership.on('brokersChange', (ids) => {
      if (ids.includes(this.brokerId)) void this.readBrokerEpoch();
    });
  }

  private async readBrokerEpoch(): Promise<void> {
    const zk = this.zkApi;
    if (!zk) return;
    const me = await zk.getBroker(this.brokerId).catch(() => undefined);
    if (me) this.brokerEpochValue = me.brokerEpoch;
  }

  /**
   * Removes the registration and closes the session (ZooKeeper drops our ephemeral nodes). With
   * ZooKeeper unreachable the client would queue the delete forever: give up after a bound, the
   * session's expiry removes the node anyway.
   */
  async stop(): Promise<void> {
    this.configChanges?.close();
    if (this.registered) {
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([
        this.membership.deregister().catch(() => undefined),
        new Promise<void>((resolve) => (timer = setTimeout(resolve, Math.min(this.connectionTimeoutMs, 5000)))),
      ]);
      clearTimeout(timer);
    }
    await this.session.close();
  }
}
