/**
 * What every coordinator over an internal topic shares (the group coordinator over
 * `__consumer_offsets`, the transaction coordinator over `__transaction_state`): the runtime
 * over the topic's partitions, the partition a key lives in, creating the topic on first use
 * (FindCoordinator) as Kafka does, and loading and unloading the partitions as their leadership
 * comes here and moves away. Failures to create the topic or open its logs (a full disk) are
 * logged at most once per interval; the callers answer the retriable COORDINATOR_NOT_AVAILABLE.
 */
import type { Logger } from 'pino';
import type { MetadataStore } from '../../metadata/metadata-store.js';
import type { TopicInfo } from '../../metadata/cluster-model.js';
import { ErrorCode, KafkaError } from '../../protocol/errors.js';
import { FailureLog } from '../../common/failure-log.js';
import { messageOf } from '../../common/errors.js';
import { partitionForGroup } from './partition-for-group.js';
import { CoordinatorRuntime, type RuntimeOptions } from './runtime.js';
import { ReplicaManagerCoordinatorLog, type CoordinatorReplicaAccess } from './partition-log.js';
import type { CoordinatorLog, CoordinatorShard } from './types.js';

/** The broker settings the shell reads (the broker's config fits as it is). */
export interface CoordinatorBrokerConfig {
  readonly brokerId: number;
  /** Set in cluster mode, where the topic waits for enough brokers to have its replication factor. */
  readonly zookeeperConnect: string | null;
}

/** The replica manager as the shell uses it: the coordinator's log, and opening a topic's logs. */
export interface CoordinatorReplicas extends CoordinatorReplicaAccess {
  syncTopic(topic: string): Promise<void>;
}

/** The internal topic a coordinator keeps its state in, and how it is created. */
export interface InternalTopic {
  readonly name: string;
  /** Its partition count when it does not exist yet (once it does, its own count). */
  readonly numPartitions: number;
  readonly replicationFactor: number;
  /** What Kafka's error calls it ("the offsets topic") and the setting that names the factor. */
  readonly description: string;
  readonly replicationFactorSetting: string;
  /** Its topic configs, given the brokers alive when it is created. */
  configs(liveBrokers: number): Record<string, string>;
}

export interface CoordinatorShellOptions<S, R> {
  topic: InternalTopic;
  config: CoordinatorBrokerConfig;
  metadata: MetadataStore;
  replicaManager: CoordinatorReplicas;
  logger: Logger;
  /** Tests may substitute the log. */
  log?: CoordinatorLog | undefined;
  /** The runtime's records and shards; the log and its error reporting are the shell's. */
  runtime: Omit<RuntimeOptions<S, R>, 'log' | 'onError'>;
}

export class CoordinatorShell<S extends CoordinatorShard<R>, R> {
  readonly runtime: CoordinatorRuntime<S, R>;
  readonly numPartitions: number;
  readonly failures: FailureLog;
  private creating: Promise<TopicInfo> | undefined;
  private reopening: Promise<void> | undefined;
  private closed = false;

  constructor(private readonly opts: CoordinatorShellOptions<S, R>) {
    const { topic, logger } = opts;
    this.failures = new FailureLog(logger);
    this.numPartitions = opts.metadata.topic(topic.name)?.partitions.length ?? topic.numPartitions;
    this.runtime = new CoordinatorRuntime<S, R>({
      ...opts.runtime,
      log: opts.log ?? new ReplicaManagerCoordinatorLog(opts.replicaManager, topic.name, (msg) => logger.warn(msg)),
      onError: (msg, err) => logger.error({ err }, msg),
    });
  }

  get isClosed(): boolean {
    return this.closed;
  }

  /** The partition of the topic that holds `key` (a group id, a transactional id), as Kafka computes it. */
  partitionFor(key: string): number {
    return partitionForGroup(key, this.numPartitions);
  }

  /** Loads the partitions led here and follows leadership changes; other topics' changes go to `onOtherTopic`. */
  start(onOtherTopic?: (topic: string) => void): void {
    // A failed sync (its logs cannot be opened: a full disk) must not become an unhandled
    // rejection, which would end the process; FindCoordinator retries it.
    const sync = (): void => void this.syncLeadership().catch((err: unknown) => this.logOpenFailure(err));
    this.opts.metadata.onChange((topic) => {
      if (topic === this.opts.topic.name) sync();
      else onOtherTopic?.(topic);
    });
    sync();
  }

  close(): void {
    this.closed = true;
    this.runtime.close();
  }

  /** Loads partitions that became led here, unloads the ones that moved away. */
  async syncLeadership(): Promise<void> {
    if (this.closed) return;
    const name = this.opts.topic.name;
    const info = this.opts.metadata.topic(name);
    const me = this.opts.config.brokerId;
    const led = new Set((info?.partitions ?? []).filter((p) => p.leader === me).map((p) => p.partition));
    // Loading ones too: a load finishing after leadership moved would serve (and later, when
    // leadership returns, keep) a state without the new leader's writes.
    for (const p of this.runtime.hostedPartitions()) if (!led.has(p)) this.runtime.unload(p);
    if (led.size === 0) return;
    await this.opts.replicaManager.syncTopic(name);
    await Promise.all([...led].map((p) => this.runtime.load(p).catch(() => undefined)));
  }

  /**
   * Creates the topic on first use (FindCoordinator), as Kafka does. Rejects when it cannot be
   * created or its logs cannot be opened (a full disk): the failure is logged at most once per
   * interval, and FindCoordinator answers the retriable COORDINATOR_NOT_AVAILABLE.
   */
  async ensureTopic(): Promise<TopicInfo> {
    const { topic, metadata, config } = this.opts;
    const existing = metadata.topic(topic.name);
    if (existing) return existing;
    this.creating ??= (async () => {
      const live = metadata.brokers().length;
      // Cluster mode follows Kafka: the topic waits until enough brokers are up for its full
      // replication factor (a cluster starting up would otherwise be stuck with fewer replicas
      // forever). A single embedded broker takes what it has.
      if (config.zookeeperConnect !== null && live < topic.replicationFactor) {
        throw new KafkaError(
          ErrorCode.COORDINATOR_NOT_AVAILABLE,
          `Number of alive brokers '${live}' does not meet the required replication factor '${topic.replicationFactor}' for ${topic.description} (configured via '${topic.replicationFactorSetting}')`,
        );
      }
      try {
        await metadata.createTopic({
          name: topic.name,
          numPartitions: this.numPartitions,
          replicationFactor: Math.max(1, Math.min(topic.replicationFactor, live)),
          internal: true,
          configs: topic.configs(live),
        });
      } catch (err) {
        if (!(err instanceof KafkaError && err.code === ErrorCode.TOPIC_ALREADY_EXISTS)) throw err;
      }
      await this.syncLeadership();
      return metadata.topic(topic.name)!;
    })()
      .catch((err: unknown) => {
        this.failures.failed(topic.name, 'creations', 'warn', () => `cannot create ${topic.name} or open its logs: ${messageOf(err)}`);
        throw err;
      })
      .finally(() => {
        this.creating = undefined;
      });
    return this.creating;
  }

  /**
   * Whether `partition`, when led here, has its log open. It may not, when the log could not be
   * created (a full disk): then the opening is retried now (once at a time), so a client retrying
   * FindCoordinator gets its coordinator once there is room again.
   */
  async partitionOpen(partition: number): Promise<boolean> {
    const name = this.opts.topic.name;
    const ps = this.opts.metadata.topic(name)?.partitions[partition];
    const isOpen = (): boolean => this.opts.replicaManager.getPartition(name, partition) !== undefined;
    if (!ps || ps.leader !== this.opts.config.brokerId || isOpen()) return true;
    this.reopening ??= this.syncLeadership()
      .catch((err: unknown) => this.logOpenFailure(err))
      .finally(() => {
        this.reopening = undefined;
      });
    await this.reopening;
    return isOpen();
  }

  private logOpenFailure(err: unknown): void {
    const name = this.opts.topic.name;
    this.failures.failed(name, 'log openings', 'warn', () => `cannot open the logs of ${name}: ${messageOf(err)}`);
  }
}
