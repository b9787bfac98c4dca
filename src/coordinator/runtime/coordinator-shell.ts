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

/** Kafka's default replication factor of the internal topics (offsets.topic.replication.factor). */
export const DEFAULT_INTERNAL_REPLICATION_FACTOR = 3;

/**
 * min.insync.replicas of an internal topic created with `replicationFactor` replicas: 2 from 3
 * replicas on (an acknowledged commit survives one broker failure and the topic stays
 * writable through it), 1 below.
 */
export function internalTopicMinIsr(replicationFactor: number): number {
  return Math.max(1, Math.min(2, replicationFactor - 1));
}

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
  /** Its topic configs, given the replication factor it is created with. */
  configs(replicationFactor: number): Record<string, string>;
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
  private lastReplicationWarning = '';

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
      if (topic === this.opts.topic.name) {
        sync();
        this.warnIfUnderReplicated();
      } else onOtherTopic?.(topic);
    });
    sync();
    this.warnIfUnderReplicated();
  }

  /**
   * Warns (once per distinct situation) when the topic exists with fewer replicas than the
   * cluster could give it, min(its configured factor, live brokers): Kafka never changes an
   * existing topic's factor, so a topic created under a factor of 1 keeps every group or
   * transaction on one broker, and a failure of that broker makes them unreachable. Also warns
   * in cluster mode when the configured factor itself is below what the live brokers allow (up
   * to Kafka's default of 3). Runs at start and on every change of the topic's metadata (in
   * cluster mode the controller's first update after start, and leaders or ISR moving as brokers
   * leave and join).
   */
  warnIfUnderReplicated(): void {
    const { topic, metadata, config, logger } = this.opts;
    const live = metadata.brokers().length;
    if (live === 0) return;
    const setting = `${topic.replicationFactorSetting}=${topic.replicationFactor}`;
    const warnings: string[] = [];
    if (config.zookeeperConnect !== null && topic.replicationFactor < Math.min(live, DEFAULT_INTERNAL_REPLICATION_FACTOR)) {
      warnings.push(
        `${setting} is below the ${live} live brokers: ${topic.name} gets ${topic.replicationFactor} replica(s) per partition, so one broker failure makes part of it unavailable (Kafka's default is ${DEFAULT_INTERNAL_REPLICATION_FACTOR})`,
      );
    }
    const existing = metadata.topic(topic.name);
    if (existing && existing.partitions.length > 0) {
      const rf = Math.min(...existing.partitions.map((p) => p.replicas.length));
      const could = Math.min(topic.replicationFactor, live);
      if (rf < could) {
        warnings.push(
          `${topic.name} has replication factor ${rf}, below the ${could} this cluster could give it (${setting}, ${live} live brokers): an existing topic keeps its factor; raise it with kafka-reassign-partitions.sh`,
        );
      }
    }
    const key = warnings.join('\n');
    if (key === this.lastReplicationWarning) return;
    this.lastReplicationWarning = key;
    for (const w of warnings) logger.warn({ topic: topic.name, setting: topic.replicationFactorSetting }, w);
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
      const replicationFactor = Math.max(1, Math.min(topic.replicationFactor, live));
      try {
        await metadata.createTopic({
          name: topic.name,
          numPartitions: this.numPartitions,
          replicationFactor,
          internal: true,
          configs: topic.configs(replicationFactor),
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
