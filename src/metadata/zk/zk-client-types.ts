/**
 * What the controller, the brokers and the `--zookeeper` tools ask of ZooKeeper, in Kafka's terms
 * (after Kafka's KafkaZkClient): typed reads and writes of the znodes in `zk-data.ts` (their
 * paths in `zk-paths.ts`). The implementation is `KafkaZkClient` (kafka-zk-client.ts); tests of
 * the layers above use fakes.
 */
import type { ZkWatcher } from './zk-session.js';
import type { BrokerRegistration } from './zk-data.js';

/** `/brokers/topics/<t>/partitions/<p>/state`. */
export interface LeaderIsrState {
  leader: number;
  leaderEpoch: number;
  isr: number[];
  controllerEpoch: number;
}

export interface VersionedState {
  state: LeaderIsrState;
  zkVersion: number;
}

/** `/brokers/topics/<t>`. */
export interface TopicAssignment {
  topic: string;
  /** Kafka's printable (base64url) uuid; '' for a topic written before Kafka 2.8 (the controller assigns one). */
  topicId: string;
  /** partition -> replicas, preferred replica first. */
  partitions: Map<number, number[]>;
  addingReplicas: Map<number, number[]>;
  removingReplicas: Map<number, number[]>;
  /** Version of the topic znode, for conditional sets. */
  zkVersion: number;
}

/** Every controller write also checks `/controller_epoch`'s znode version (a deposed controller fails). */
export interface ControllerFence {
  controllerEpoch: number;
  epochZkVersion: number;
}

export type ConfigEntityType = 'topics' | 'brokers' | 'clients' | 'users' | 'ips' | 'client-metrics' | 'groups';

export interface TopicPartitionRef {
  topic: string;
  partition: number;
}

export interface PartitionReassignment extends TopicPartitionRef {
  replicas: number[];
}

/** Thrown by fenced writes when `/controller_epoch` moved on: this broker is no longer controller. */
export class ControllerMovedError extends Error {
  override readonly name = 'ControllerMovedError';
}

export interface KafkaZkApi {
  // brokers
  getBrokerIds(watch?: ZkWatcher): Promise<number[]>;
  /** With the registration znode's czxid: Kafka's broker epoch. */
  getBroker(id: number): Promise<(BrokerRegistration & { brokerEpoch: bigint }) | undefined>;
  getAllBrokers(watch?: ZkWatcher): Promise<(BrokerRegistration & { brokerEpoch: bigint })[]>;

  // topics
  getAllTopics(watch?: ZkWatcher): Promise<string[]>;
  getTopicAssignment(topic: string, watch?: ZkWatcher): Promise<TopicAssignment | undefined>;
  /** `/config/topics/<t>` then `/brokers/topics/<t>` in one multi; KafkaError TOPIC_ALREADY_EXISTS if it exists or is marked for deletion. */
  createTopic(topic: string, topicId: string, assignment: Map<number, number[]>, configs: Record<string, string>): Promise<void>;
  /** Conditional set of `/brokers/topics/<t>`; returns the new zkVersion; ZkError BAD_VERSION on a race. */
  setTopicAssignment(a: Omit<TopicAssignment, 'zkVersion'>, expectedZkVersion: number, fence?: ControllerFence): Promise<number>;

  // partition states (controller writes, fenced)
  getPartitionStates(topic: string, partitions?: number[]): Promise<Map<number, VersionedState>>;
  createPartitionStates(topic: string, states: Map<number, LeaderIsrState>, fence: ControllerFence): Promise<Map<number, 'ok' | 'exists'>>;
  /** Per partition the new zkVersion, or 'BAD_VERSION' (also when the state znode is gone: re-read); ControllerMovedError when the fence fails. */
  updatePartitionStates(
    topic: string,
    updates: { partition: number; state: LeaderIsrState; expectedZkVersion: number }[],
    fence: ControllerFence,
  ): Promise<Map<number, number | 'BAD_VERSION'>>;
  /**
   * A partition leader's own ISR change (Kafka 2.6's ReplicationUtils.updateLeaderAndIsr): a
   * conditional set of one state znode, not fenced by the controller epoch. The new zkVersion,
   * or 'BAD_VERSION' when the znode moved on (or is gone); a write whose earlier attempt already
   * landed (same content) counts as done. Optional so fakes may omit it.
   */
  updateLeaderAndIsr?(topic: string, partition: number, state: LeaderIsrState, expectedZkVersion: number): Promise<number | 'BAD_VERSION'>;

  // deletion
  /** Creates `/admin/delete_topics/<t>` (already marked is fine); KafkaError UNKNOWN_TOPIC_OR_PARTITION when the topic does not exist. */
  markTopicForDeletion(topic: string): Promise<void>;
  getTopicDeletions(watch?: ZkWatcher): Promise<string[]>;
  deleteTopicDeletionMarker(topic: string, fence: ControllerFence): Promise<void>;
  /** Recursively deletes `/brokers/topics/<t>` and `/config/topics/<t>`. */
  deleteTopicZNodes(topic: string, fence: ControllerFence): Promise<void>;

  // configs
  /** `{}` when the entity has no znode. */
  getEntityConfigs(type: ConfigEntityType, name: string): Promise<Record<string, string>>;
  /** Sets `/config/<type>/<name>` and announces it with a sequential `/config/changes/config_change_` node. */
  setEntityConfigs(type: ConfigEntityType, name: string, configs: Record<string, string>): Promise<void>;
  /** Children of `/config/<subPath>` (e.g. "users", "users/alice/clients"); [] when absent. Optional: fakes may omit it. */
  getConfigChildren?(subPath: string): Promise<string[]>;
  /** Sorted by sequence number. */
  getConfigChangeNames(watch?: ZkWatcher): Promise<string[]>;
  getConfigChange(name: string): Promise<{ entityType: ConfigEntityType; entityName: string } | undefined>;
  /** Deletes change notifications created more than `olderThanMs` ago (Kafka: 15 min); returns how many. Optional: fakes may omit it. */
  purgeConfigChanges?(olderThanMs: number): Promise<number>;

  // admin intents
  getPartitionReassignment(watch?: ZkWatcher): Promise<PartitionReassignment[] | undefined>;
  /** KafkaError REASSIGNMENT_IN_PROGRESS when one is pending. */
  createPartitionReassignment(r: PartitionReassignment[]): Promise<void>;
  deletePartitionReassignment(fence: ControllerFence): Promise<void>;
  /** Fenced set of an existing `/admin/reassign_partitions` (the controller dropping completed or superseded partitions); absent node is fine. Optional: without it the controller deletes the node only when every partition is done. */
  setPartitionReassignment?(r: PartitionReassignment[], fence: ControllerFence): Promise<void>;
  /** One partition's state, watching its znode (data change, creation, deletion): Kafka's PartitionReassignmentIsrChangeHandler. Optional: without it a reassignment completes on ISR change notifications only. */
  watchPartitionState?(topic: string, partition: number, watch: ZkWatcher): Promise<VersionedState | undefined>;
  getPreferredReplicaElection(watch?: ZkWatcher): Promise<TopicPartitionRef[] | undefined>;
  /** ZkError NODE_EXISTS while one is pending. */
  createPreferredReplicaElection(ps: TopicPartitionRef[]): Promise<void>;
  deletePreferredReplicaElection(fence: ControllerFence): Promise<void>;
  getIsrChangeNotifications(watch?: ZkWatcher): Promise<string[]>;
  getIsrChangeNotification(name: string): Promise<TopicPartitionRef[]>;
  createIsrChangeNotification(ps: TopicPartitionRef[]): Promise<void>;
  deleteIsrChangeNotifications(names: string[], fence: ControllerFence): Promise<void>;

  /** Conditional read-modify-write of `/latest_producer_id_block`; the block [start, end] now owned by `brokerId`. */
  allocateProducerIdBlock(brokerId: number, blockSize: number): Promise<{ start: bigint; end: bigint }>;
  /** Ensures `/feature` exists as Kafka writes it. */
  ensureFeatureZNode(): Promise<void>;
}
