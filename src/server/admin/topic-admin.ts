/**
 * Topic lifecycle for CreateTopics, DeleteTopics and CreatePartitions: request validation with
 * Kafka's error codes and messages, then the change through the metadata store. The data plane
 * follows the metadata store's onChange events (creating or dropping the logs).
 */
import type { Logger } from 'pino';
import type { TopicInfo } from '../../metadata/cluster-model.js';
import { INTERNAL_TOPICS } from '../../metadata/cluster-model.js';
import type { MetadataStore } from '../../metadata/metadata-store.js';
import { collisionIndex, collisionKey, topicNameError } from '../../metadata/topic-names.js';
import { ErrorCode, KafkaError } from '../../protocol/errors.js';
import type { BrokerConfig } from '../config/index.js';
import { validateTopicConfigs } from '../../config/topic-configs.js';
import type { PartitionAccess } from './partition-access.js';
import { Mutex } from '../../common/mutex.js';
import { messageOf } from '../../common/errors.js';

export interface CreateTopicSpec {
  name: string;
  /** -1: broker default (num.partitions). */
  numPartitions: number;
  /** -1: broker default (default.replication.factor). */
  replicationFactor: number;
  /** Explicit replicas per partition index; empty when none. */
  assignments: { partitionIndex: number; brokerIds: number[] }[];
  configs: { name: string; value: string | null }[];
}

export interface CreatedTopic {
  topicId: string | null;
  numPartitions: number;
  replicationFactor: number;
  configs: Record<string, string>;
}

/**
 * Partitions a request plans to create, counted as Kafka's controller counts them for its
 * per-request limit: numPartitions (the broker default for -1) or the number of assignments.
 */
export function plannedPartitions(spec: Pick<CreateTopicSpec, 'numPartitions' | 'assignments'>, defaultPartitions: number): number {
  if (spec.assignments.length > 0) return spec.assignments.length;
  if (spec.numPartitions === -1) return defaultPartitions;
  return Math.max(0, spec.numPartitions);
}

/**
 * One CreateTopics or CreatePartitions request: partitions that its validateOnly topics would
 * have added, so a dry run meets the per-broker cap exactly where the real request would.
 */
export interface CreationRequest {
  validatedPartitions: number;
}

export class TopicAdmin {
  /** Cap check and creation run one request topic at a time, so two requests cannot both pass the cap. */
  private readonly creation = new Mutex();

  /** Existing names by collision key; dropped at every metadata change. */
  private collisions: Map<string, string> | undefined;

  constructor(
    private readonly config: BrokerConfig,
    private readonly metadata: MetadataStore,
    private readonly logger: Logger,
    private readonly partitions: () => PartitionAccess | undefined,
  ) {
    metadata.onChange(() => {
      this.collisions = undefined;
    });
  }

  /**
   * Refuses a request whose topics plan more new partitions in total than
   * max.partitions.per.request (Kafka's controller does the same with its fixed 10000).
   */
  checkRequestPartitions(total: number): void {
    const limit = this.config.maxPartitionsPerRequest;
    if (total > limit) {
      throw new KafkaError(
        ErrorCode.POLICY_VIOLATION,
        `Excessively large number of partitions per request: ${total} requested, max.partitions.per.request is ${limit}.`,
      );
    }
  }

  /** Partitions now hosted by this broker and in the whole cluster. */
  partitionCounts(): { broker: number; cluster: number } {
    const self = this.config.brokerId;
    let broker = 0;
    let cluster = 0;
    for (const t of this.metadata.topics()) {
      cluster += t.partitions.length;
      for (const p of t.partitions) if (p.replicas.includes(self)) broker++;
    }
    return { broker, cluster };
  }

  /**
   * Refuses adding `adding` partitions (plus `pending` a dry run already counted) when it would
   * take this broker past max.broker.partitions or the cluster past max.partitions (KIP-578).
   */
  checkPartitionCaps(adding: number, pending = 0, counts = this.partitionCounts()): void {
    const { broker, cluster } = counts;
    // Every new partition counts against this broker: the embedded single broker hosts them all.
    const hostedHere = adding;
    if (broker + pending + hostedHere > this.config.maxBrokerPartitions) {
      throw new KafkaError(
        ErrorCode.POLICY_VIOLATION,
        `Creating ${adding} partition(s) would take broker ${this.config.brokerId} to ${broker + pending + hostedHere} partitions, above max.broker.partitions ${this.config.maxBrokerPartitions} (it hosts ${broker + pending}).`,
      );
    }
    if (cluster + pending + adding > this.config.maxPartitions) {
      throw new KafkaError(
        ErrorCode.POLICY_VIOLATION,
        `Creating ${adding} partition(s) would take the cluster to ${cluster + pending + adding} partitions, above max.partitions ${this.config.maxPartitions} (it has ${cluster + pending}).`,
      );
    }
  }

  /** Waits until the data plane has caught up with a change (logs created or removed). */
  private async synced(topic: string): Promise<void> {
    // The sync applies the topic's effective log config too (ReplicaManager asks ConfigAdmin).
    await this.partitions()?.syncTopic(topic);
  }

  /**
   * Validates and (unless validateOnly) creates one topic; throws KafkaError on refusal. All or
   * nothing: when a log cannot be created (EMFILE, ENOSPC...), the topic is removed again, from
   * metadata and disk, before the error is reported.
   */
  createTopic(spec: CreateTopicSpec, validateOnly: boolean, request: CreationRequest = { validatedPartitions: 0 }): Promise<CreatedTopic> {
    return this.creation.run(() => this.createTopicNow(spec, validateOnly, request));
  }

  private async createTopicNow(spec: CreateTopicSpec, validateOnly: boolean, request: CreationRequest): Promise<CreatedTopic> {
    this.checkNewName(spec.name);
    const configs = this.checkConfigs(spec.configs);
    const brokers = this.metadata.brokers().map((b) => b.id);
    let numPartitions: number;
    let replicationFactor: number;
    let assignment: number[][] | undefined;
    if (spec.assignments.length > 0) {
      if (spec.numPartitions !== -1 || spec.replicationFactor !== -1) {
        throw new KafkaError(
          ErrorCode.INVALID_REQUEST,
          'Both numPartitions or replicationFactor and replicasAssignments were set. Both cannot be used at the same time.',
        );
      }
      assignment = orderedAssignment(spec.assignments);
      checkAssignment(assignment, brokers);
      numPartitions = assignment.length;
      replicationFactor = assignment[0]!.length;
    } else {
      numPartitions = spec.numPartitions === -1 ? this.config.numPartitions : spec.numPartitions;
      replicationFactor = spec.replicationFactor === -1 ? this.config.defaultReplicationFactor : spec.replicationFactor;
      if (numPartitions <= 0) {
        throw new KafkaError(ErrorCode.INVALID_PARTITIONS, 'Number of partitions was set to an invalid non-positive value.');
      }
      if (replicationFactor <= 0) {
        throw new KafkaError(ErrorCode.INVALID_REPLICATION_FACTOR, 'Replication factor must be larger than 0, or -1 to use the default value.');
      }
      if (replicationFactor > brokers.length) {
        throw new KafkaError(
          ErrorCode.INVALID_REPLICATION_FACTOR,
          `Unable to replicate the partition ${replicationFactor} time(s): The target replication factor of ${replicationFactor} cannot be reached because only ${brokers.length} broker(s) are registered.`,
        );
      }
    }
    this.checkPartitionCaps(numPartitions, request.validatedPartitions);
    if (validateOnly) {
      request.validatedPartitions += numPartitions;
      return { topicId: null, numPartitions, replicationFactor, configs };
    }
    const t = await this.metadata.createTopic({
      name: spec.name,
      numPartitions,
      replicationFactor,
      configs,
      ...(assignment ? { assignment } : {}),
    });
    try {
      await this.synced(t.name);
      this.checkAllOpen(t.name, 0, numPartitions);
    } catch (err) {
      await this.undo(t.name, `creating topic ${t.name}`, err, () => this.metadata.deleteTopic(t.name));
      throw new KafkaError(ErrorCode.UNKNOWN_SERVER_ERROR, `Topic '${t.name}' was not created: ${messageOf(err)}`);
    }
    this.logger.info(
      { topic: t.name, topicId: t.topicId, partitions: numPartitions, replicationFactor, configs },
      `created topic ${t.name} with ${numPartitions} partition(s), replication factor ${replicationFactor}`,
    );
    return { topicId: t.topicId, numPartitions, replicationFactor, configs: t.configs };
  }

  private checkNewName(name: string): void {
    const nameError = topicNameError(name);
    if (nameError) throw new KafkaError(ErrorCode.INVALID_TOPIC_EXCEPTION, nameError);
    if (this.metadata.topic(name)) throw new KafkaError(ErrorCode.TOPIC_ALREADY_EXISTS, `Topic '${name}' already exists.`);
    // Built once per metadata change, not per name: one CreateTopics may name 50,000 topics.
    this.collisions ??= collisionIndex(this.metadata.topics().map((t) => t.name));
    const other = this.collisions.get(collisionKey(name));
    if (other !== undefined && other !== name) {
      throw new KafkaError(ErrorCode.INVALID_TOPIC_EXCEPTION, `Topic '${name}' collides with existing topic: ${other}`);
    }
  }

  private checkConfigs(entries: readonly { name: string; value: string | null }[]): Record<string, string> {
    const out: Record<string, string | null> = {};
    for (const e of entries) {
      if (e.name in out) throw new KafkaError(ErrorCode.INVALID_REQUEST, `Duplicate config key: ${e.name}`);
      out[e.name] = e.value;
    }
    validateTopicConfigs(out);
    return out as Record<string, string>;
  }

  /** Deletes one topic found by name or id (exactly one of them). */
  async deleteTopic(ref: { name: string | null; topicId: string | null }): Promise<TopicInfo> {
    if (!this.config.deleteTopicEnable) throw new KafkaError(ErrorCode.TOPIC_DELETION_DISABLED, 'Topic deletion is disabled.');
    let t: TopicInfo | undefined;
    if (ref.topicId !== null) {
      t = this.metadata.topicById(ref.topicId);
      if (!t) throw new KafkaError(ErrorCode.UNKNOWN_TOPIC_ID, 'This server does not host this topic ID.');
    } else {
      t = ref.name === null ? undefined : this.metadata.topic(ref.name);
      if (!t) throw new KafkaError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, 'This server does not host this topic-partition.');
    }
    if (t.internal || INTERNAL_TOPICS.has(t.name)) {
      throw new KafkaError(ErrorCode.INVALID_TOPIC_EXCEPTION, `Topic ${t.name} is a kafka internal topic and is not allowed to be marked for deletion.`);
    }
    await this.metadata.deleteTopic(t.name);
    await this.synced(t.name);
    this.logger.info({ topic: t.name, topicId: t.topicId, partitions: t.partitions.length }, `deleted topic ${t.name}`);
    return t;
  }

  /**
   * Grows a topic to `count` partitions (explicit replicas per new partition optional). All or
   * nothing, like createTopic: a failure part-way removes the new partitions again.
   */
  createPartitions(
    name: string,
    count: number,
    assignments: number[][] | null,
    validateOnly: boolean,
    request: CreationRequest = { validatedPartitions: 0 },
  ): Promise<void> {
    return this.creation.run(() => this.createPartitionsNow(name, count, assignments, validateOnly, request));
  }

  private async createPartitionsNow(
    name: string,
    count: number,
    assignments: number[][] | null,
    validateOnly: boolean,
    request: CreationRequest,
  ): Promise<void> {
    const t = this.metadata.topic(name);
    if (!t) throw new KafkaError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, `The topic '${name}' does not exist.`);
    const current = t.partitions.length;
    if (count < current) {
      throw new KafkaError(ErrorCode.INVALID_PARTITIONS, `Topic currently has ${current} partitions, which is higher than the requested ${count}.`);
    }
    if (count === current) throw new KafkaError(ErrorCode.INVALID_PARTITIONS, `Topic already has ${current} partitions.`);
    if (assignments !== null) {
      const added = count - current;
      if (assignments.length !== added) {
        throw new KafkaError(
          ErrorCode.INVALID_REPLICA_ASSIGNMENT,
          `Attempted to add ${added} additional partition(s), but only ${assignments.length} assignment(s) were specified.`,
        );
      }
      checkAssignment(
        assignments,
        this.metadata.brokers().map((b) => b.id),
      );
      const rf = t.partitions[0]?.replicas.length ?? 1;
      const odd = assignments.findIndex((a) => a.length !== rf);
      if (odd >= 0) {
        throw new KafkaError(
          ErrorCode.INVALID_REPLICA_ASSIGNMENT,
          `Inconsistent replication factor between partitions, partition 0 has ${rf} while partition ${current + odd} has replication factor ${assignments[odd]!.length}.`,
        );
      }
    }
    this.checkPartitionCaps(count - current, request.validatedPartitions);
    if (validateOnly) {
      request.validatedPartitions += count - current;
      return;
    }
    await this.metadata.createPartitions(name, count, assignments ?? undefined);
    try {
      await this.synced(name);
      this.checkAllOpen(name, current, count);
    } catch (err) {
      await this.undo(name, `adding partitions ${current}..${count - 1} to ${name}`, err, () => this.metadata.truncatePartitions(name, current));
      throw new KafkaError(ErrorCode.UNKNOWN_SERVER_ERROR, `No partitions were added to '${name}': ${messageOf(err)}`);
    }
    this.logger.info({ topic: name, from: current, to: count }, `added partitions to topic ${name}: ${current} -> ${count}`);
  }

  /** Throws unless every partition in [from, to) of `topic` that this broker leads has its log open. */
  private checkAllOpen(topic: string, from: number, to: number): void {
    const access = this.partitions();
    const info = this.metadata.topic(topic);
    if (!access || !info) return;
    for (const ps of info.partitions) {
      if (ps.partition < from || ps.partition >= to || ps.leader !== this.config.brokerId) continue;
      if (!access.localPartition(topic, ps.partition) && !access.onWorker?.(topic, ps.partition))
        throw new Error(`the log of partition ${topic}-${ps.partition} could not be opened`);
    }
  }

  /** Reverts a creation that failed part-way: metadata first, then the logs follow it away. */
  private async undo(topic: string, what: string, cause: unknown, revert: () => Promise<unknown>): Promise<void> {
    this.logger.error({ topic, err: messageOf(cause) }, `${what} failed part-way; removing what was created`);
    try {
      await revert();
      await this.synced(topic);
    } catch (err) {
      this.logger.error({ topic, err: messageOf(err) }, `could not fully remove what ${what} created`);
    }
  }
}

/** Orders an explicit assignment by partition index; indexes must be 0..n-1 without gaps. */
function orderedAssignment(assignments: readonly { partitionIndex: number; brokerIds: number[] }[]): number[][] {
  const sorted = [...assignments].sort((a, b) => a.partitionIndex - b.partitionIndex);
  sorted.forEach((a, i) => {
    if (a.partitionIndex !== i) {
      throw new KafkaError(ErrorCode.INVALID_REPLICA_ASSIGNMENT, 'Partitions should be a consecutive 0-based integer sequence');
    }
  });
  return sorted.map((a) => a.brokerIds);
}

function checkAssignment(assignment: readonly number[][], brokers: readonly number[]): void {
  const rf = assignment[0]?.length ?? 0;
  for (const replicas of assignment) {
    if (replicas.length === 0) {
      throw new KafkaError(ErrorCode.INVALID_REPLICA_ASSIGNMENT, `The manual partition assignment includes an empty replica list.`);
    }
    if (new Set(replicas).size !== replicas.length) {
      throw new KafkaError(
        ErrorCode.INVALID_REPLICA_ASSIGNMENT,
        `The manual partition assignment includes the broker ${replicas.find((b, j) => replicas.indexOf(b) !== j)} more than once.`,
      );
    }
    const unknown = replicas.find((b) => !brokers.includes(b));
    if (unknown !== undefined) {
      throw new KafkaError(
        ErrorCode.INVALID_REPLICA_ASSIGNMENT,
        `The manual partition assignment includes broker ${unknown}, but no such broker is registered.`,
      );
    }
    if (replicas.length !== rf) {
      throw new KafkaError(
        ErrorCode.INVALID_REPLICA_ASSIGNMENT,
        `The manual partition assignment includes a partition with ${replicas.length} replica(s), but this is not consistent with previous partitions, which have ${rf} replica(s).`,
      );
    }
  }
}
