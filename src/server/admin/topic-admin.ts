/**
 * Topic lifecycle for CreateTopics, DeleteTopics and CreatePartitions: request validation with
 * Kafka's error codes and messages, then the change through the metadata store. The data plane
 * follows the metadata store's onChange events (creating or dropping the logs).
 */
import type { Logger } from 'pino';
import type { TopicInfo } from '../../metadata/cluster-model.js';
import { INTERNAL_TOPICS } from '../../metadata/cluster-model.js';
import type { MetadataStore } from '../../metadata/metadata-store.js';
import { collisionKey, topicNameError } from '../../metadata/topic-names.js';
import { ErrorCode, KafkaError } from '../../protocol/errors.js';
import type { BrokerConfig } from '../config/index.js';
import { validateTopicConfigs } from '../config/topic-configs.js';
import type { PartitionAccess } from './partition-access.js';

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

export class TopicAdmin {
  constructor(
    private readonly config: BrokerConfig,
    private readonly metadata: MetadataStore,
    private readonly logger: Logger,
    private readonly partitions: () => PartitionAccess | undefined,
  ) {}

  /** Waits until the data plane has caught up with a change (logs created or removed). */
  private async synced(topic: string): Promise<void> {
    // The sync applies the topic's effective log config too (ReplicaManager asks ConfigAdmin).
    await this.partitions()?.syncTopic(topic);
  }

  /** Validates and (unless validateOnly) creates one topic; throws KafkaError on refusal. */
  async createTopic(spec: CreateTopicSpec, validateOnly: boolean): Promise<CreatedTopic> {
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
        throw new KafkaError(
          ErrorCode.INVALID_REPLICATION_FACTOR,
          'Replication factor must be larger than 0, or -1 to use the default value.',
        );
      }
      if (replicationFactor > brokers.length) {
        throw new KafkaError(
          ErrorCode.INVALID_REPLICATION_FACTOR,
          `Unable to replicate the partition ${replicationFactor} time(s): The target replication factor of ${replicationFactor} cannot be reached because only ${brokers.length} broker(s) are registered.`,
        );
      }
    }
    if (validateOnly) return { topicId: null, numPartitions, replicationFactor, configs };
    const t = await this.metadata.createTopic({
      name: spec.name, numPartitions, replicationFactor, configs, ...(assignment ? { assignment } : {}),
    });
    await this.synced(t.name);
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
    const key = collisionKey(name);
    for (const other of this.metadata.topics()) {
      if (collisionKey(other.name) === key) {
        throw new KafkaError(ErrorCode.INVALID_TOPIC_EXCEPTION, `Topic '${name}' collides with existing topic: ${other.name}`);
      }
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
      throw new KafkaError(
        ErrorCode.INVALID_TOPIC_EXCEPTION,
        `Topic ${t.name} is a kafka internal topic and is not allowed to be marked for deletion.`,
      );
    }
    await this.metadata.deleteTopic(t.name);
    await this.synced(t.name);
    this.logger.info({ topic: t.name, topicId: t.topicId, partitions: t.partitions.length }, `deleted topic ${t.name}`);
    return t;
  }

  /** Grows a topic to `count` partitions (explicit replicas per new partition optional). */
  async createPartitions(name: string, count: number, assignments: number[][] | null, validateOnly: boolean): Promise<void> {
    const t = this.metadata.topic(name);
    if (!t) throw new KafkaError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, `The topic '${name}' does not exist.`);
    const current = t.partitions.length;
    if (count < current) {
      throw new KafkaError(
        ErrorCode.INVALID_PARTITIONS,
        `Topic currently has ${current} partitions, which is higher than the requested ${count}.`,
      );
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
      checkAssignment(assignments, this.metadata.brokers().map((b) => b.id));
      const rf = t.partitions[0]?.replicas.length ?? 1;
      const odd = assignments.findIndex((a) => a.length !== rf);
      if (odd >= 0) {
        throw new KafkaError(
          ErrorCode.INVALID_REPLICA_ASSIGNMENT,
          `Inconsistent replication factor between partitions, partition 0 has ${rf} while partition ${current + odd} has replication factor ${assignments[odd]!.length}.`,
        );
      }
    }
    if (validateOnly) return;
    await this.metadata.createPartitions(name, count, assignments ?? undefined);
    await this.synced(name);
    this.logger.info({ topic: name, from: current, to: count }, `added partitions to topic ${name}: ${current} -> ${count}`);
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
      throw new KafkaError(ErrorCode.INVALID_REPLICA_ASSIGNMENT, `The manual partition assignment includes the broker ${replicas.find((b, j) => replicas.indexOf(b) !== j)} more than once.`);
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
