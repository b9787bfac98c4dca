/**
 * `KafkaZkApi` over a `ZkSession`: Kafka's KafkaZkClient in TypeScript. Reads and writes the
 * znodes of `zk-data.ts`; controller writes are fenced (each is a multi whose first op checks
 * `/controller_epoch`'s znode version, so a deposed controller's write fails as a whole and
 * surfaces as ControllerMovedError); ZooKeeper's errors become Kafka's where the interface says so.
 *
 * This class is the one entry point; the work is done in two parts, by the znodes they own:
 * kafka-zk-topics.ts (`/brokers`: brokers, topics, partition states; deleting topics) and
 * kafka-zk-admin.ts (configs and their change notifications, admin intents, ISR change
 * notifications, producer id blocks, `/feature`). The fence and child listings both use are
 * in kafka-zk-ops.ts.
 */
import type { ZkSession, ZkWatcher } from './zk-session.js';
import { KafkaZkAdmin } from './kafka-zk-admin.js';
import { KafkaZkTopics, type BrokerWithEpoch } from './kafka-zk-topics.js';
import type {
  ConfigEntityType,
  ControllerFence,
  KafkaZkApi,
  LeaderIsrState,
  PartitionReassignment,
  TopicAssignment,
  TopicPartitionRef,
  VersionedState,
} from './zk-client-types.js';

export class KafkaZkClient implements KafkaZkApi {
  private readonly topics: KafkaZkTopics;
  private readonly admin: KafkaZkAdmin;

  constructor(readonly session: ZkSession) {
    this.topics = new KafkaZkTopics(session);
    this.admin = new KafkaZkAdmin(session);
  }

  // ---- brokers, topics, partition states, topic deletion: kafka-zk-topics.ts ------------------

  getBrokerIds(watch?: ZkWatcher): Promise<number[]> {
    return this.topics.getBrokerIds(watch);
  }
  getBroker(id: number): Promise<BrokerWithEpoch | undefined> {
    return this.topics.getBroker(id);
  }
  getAllBrokers(watch?: ZkWatcher): Promise<BrokerWithEpoch[]> {
    return this.topics.getAllBrokers(watch);
  }

  getAllTopics(watch?: ZkWatcher): Promise<string[]> {
    return this.topics.getAllTopics(watch);
  }
  getTopicAssignment(topic: string, watch?: ZkWatcher): Promise<TopicAssignment | undefined> {
    return this.topics.getTopicAssignment(topic, watch);
  }
  createTopic(topic: string, topicId: string, assignment: Map<number, number[]>, configs: Record<string, string>): Promise<void> {
    return this.topics.createTopic(topic, topicId, assignment, configs);
  }
  setTopicAssignment(a: Omit<TopicAssignment, 'zkVersion'>, expectedZkVersion: number, fence?: ControllerFence): Promise<number> {
    return this.topics.setTopicAssignment(a, expectedZkVersion, fence);
  }

  getPartitionStates(topic: string, partitions?: number[]): Promise<Map<number, VersionedState>> {
    return this.topics.getPartitionStates(topic, partitions);
  }
  watchPartitionState(topic: string, partition: number, watch: ZkWatcher): Promise<VersionedState | undefined> {
    return this.topics.watchPartitionState(topic, partition, watch);
  }
  createPartitionStates(topic: string, states: Map<number, LeaderIsrState>, fence: ControllerFence): Promise<Map<number, 'ok' | 'exists'>> {
    return this.topics.createPartitionStates(topic, states, fence);
  }
  updatePartitionStates(
    topic: string,
    updates: { partition: number; state: LeaderIsrState; expectedZkVersion: number }[],
    fence: ControllerFence,
  ): Promise<Map<number, number | 'BAD_VERSION'>> {
    return this.topics.updatePartitionStates(topic, updates, fence);
  }
  updateLeaderAndIsr(topic: string, partition: number, state: LeaderIsrState, expectedZkVersion: number): Promise<number | 'BAD_VERSION'> {
    return this.topics.updateLeaderAndIsr(topic, partition, state, expectedZkVersion);
  }

  markTopicForDeletion(topic: string): Promise<void> {
    return this.topics.markTopicForDeletion(topic);
  }
  getTopicDeletions(watch?: ZkWatcher): Promise<string[]> {
    return this.topics.getTopicDeletions(watch);
  }
  deleteTopicDeletionMarker(topic: string, fence: ControllerFence): Promise<void> {
    return this.topics.deleteTopicDeletionMarker(topic, fence);
  }
  deleteTopicZNodes(topic: string, fence: ControllerFence): Promise<void> {
    return this.topics.deleteTopicZNodes(topic, fence);
  }

  // ---- configs, admin intents, notifications, producer ids, feature: kafka-zk-admin.ts --------

  getEntityConfigs(type: ConfigEntityType, name: string): Promise<Record<string, string>> {
    return this.admin.getEntityConfigs(type, name);
  }
  setEntityConfigs(type: ConfigEntityType, name: string, configs: Record<string, string>): Promise<void> {
    return this.admin.setEntityConfigs(type, name, configs);
  }
  getConfigChildren(subPath: string): Promise<string[]> {
    return this.admin.getConfigChildren(subPath);
  }
  getConfigChangeNames(watch?: ZkWatcher): Promise<string[]> {
    return this.admin.getConfigChangeNames(watch);
  }
  getConfigChange(name: string): Promise<{ entityType: ConfigEntityType; entityName: string } | undefined> {
    return this.admin.getConfigChange(name);
  }
  purgeConfigChanges(olderThanMs: number): Promise<number> {
    return this.admin.purgeConfigChanges(olderThanMs);
  }

  getPartitionReassignment(watch?: ZkWatcher): Promise<PartitionReassignment[] | undefined> {
    return this.admin.getPartitionReassignment(watch);
  }
  setPartitionReassignment(r: PartitionReassignment[], fence: ControllerFence): Promise<void> {
    return this.admin.setPartitionReassignment(r, fence);
  }
  createPartitionReassignment(r: PartitionReassignment[]): Promise<void> {
    return this.admin.createPartitionReassignment(r);
  }
  deletePartitionReassignment(fence: ControllerFence): Promise<void> {
    return this.admin.deletePartitionReassignment(fence);
  }
  getPreferredReplicaElection(watch?: ZkWatcher): Promise<TopicPartitionRef[] | undefined> {
    return this.admin.getPreferredReplicaElection(watch);
  }
  createPreferredReplicaElection(ps: TopicPartitionRef[]): Promise<void> {
    return this.admin.createPreferredReplicaElection(ps);
  }
  deletePreferredReplicaElection(fence: ControllerFence): Promise<void> {
    return this.admin.deletePreferredReplicaElection(fence);
  }

  getIsrChangeNotifications(watch?: ZkWatcher): Promise<string[]> {
    return this.admin.getIsrChangeNotifications(watch);
  }
  getIsrChangeNotification(name: string): Promise<TopicPartitionRef[]> {
    return this.admin.getIsrChangeNotification(name);
  }
  createIsrChangeNotification(ps: TopicPartitionRef[]): Promise<void> {
    return this.admin.createIsrChangeNotification(ps);
  }
  deleteIsrChangeNotifications(names: string[], fence: ControllerFence): Promise<void> {
    return this.admin.deleteIsrChangeNotifications(names, fence);
  }

  allocateProducerIdBlock(brokerId: number, blockSize: number): Promise<{ start: bigint; end: bigint }> {
    return this.admin.allocateProducerIdBlock(brokerId, blockSize);
  }
  ensureFeatureZNode(): Promise<void> {
    return this.admin.ensureFeatureZNode();
  }
}
