/**
 * The controller's picture of the cluster (Kafka's ControllerContext): pure data, no I/O. Loaded
 * from ZooKeeper on failover and kept in step by the events; the state machines and elections
 * read and change it, and the request batch reads it when it builds requests. Keeping it plain
 * lets the unit tests build one by hand.
 */
import { tpKey } from '../common/partition-keys.js';
import type { BrokerEndpoint } from '../metadata/zk/zk-data.js';
import type { LeaderIsrState } from '../metadata/zk/zk-client-types.js';
import type { PartitionState } from './partition-state-machine.js';
import type { ReplicaState } from './replica-state-machine.js';

export interface LiveBroker {
  id: number;
  endpoints: BrokerEndpoint[];
  rack: string | null;
  /** czxid of `/brokers/ids/<id>`: tells a restarted broker from its previous incarnation. */
  brokerEpoch: bigint;
}

export interface ControllerTopic {
  name: string;
  topicId: string;
  /** partition -> replicas, preferred replica first. */
  assignment: Map<number, number[]>;
  addingReplicas: Map<number, number[]>;
  removingReplicas: Map<number, number[]>;
  /** Version of `/brokers/topics/<t>`, for the conditional write that ends a reassignment. */
  zkVersion: number;
}

/** Leader and ISR as written in the partition's state znode, with that znode's version. */
export interface LeaderIsrAndZkVersion {
  state: LeaderIsrState;
  zkVersion: number;
}

export interface TopicPartition {
  topic: string;
  partition: number;
}

/** The inverse of tpKey: the partition is a number, so the last '-' separates. */
export function parseTpKey(key: string): TopicPartition {
  const i = key.lastIndexOf('-');
  return { topic: key.slice(0, i), partition: Number(key.slice(i + 1)) };
}
export const replicaKey = (tp: TopicPartition, brokerId: number): string => `${tpKey(tp.topic, tp.partition)}@${brokerId}`;

/** The leader value UpdateMetadata carries for a partition whose topic is being deleted. */
export const LEADER_DURING_DELETE = -2;
export const NO_LEADER = -1;

export class ControllerContext {
  readonly liveBrokers = new Map<number, LiveBroker>();
  /** Brokers that asked for a controlled shutdown and are still registered. */
  readonly shuttingDownBrokerIds = new Set<number>();
  readonly topics = new Map<string, ControllerTopic>();
  /** tpKey -> leader/ISR; absent for a partition that never had a state znode. */
  readonly leadership = new Map<string, LeaderIsrAndZkVersion>();
  readonly partitionStates = new Map<string, PartitionState>();
  /** replicaKey -> state. */
  readonly replicaStates = new Map<string, ReplicaState>();
  readonly topicsToBeDeleted = new Set<string>();
  /** Queued for deletion but waiting (a replica's broker is down). */
  readonly topicsIneligibleForDeletion = new Set<string>();
  /** tpKey -> target replicas (TRS) of a reassignment not yet completed (Kafka's partitionsBeingReassigned). */
  readonly pendingReassignments = new Map<string, number[]>();
  /** tpKey of partitions whose state znode watch (for a reassignment's ISR) is armed in ZooKeeper. */
  readonly reassignmentIsrWatches = new Set<string>();
  epoch = 0;
  epochZkVersion = 0;

  isLive(brokerId: number): boolean {
    return this.liveBrokers.has(brokerId) && !this.shuttingDownBrokerIds.has(brokerId);
  }
  /** Brokers that still take requests (a shutting-down broker keeps serving until it is gone). */
  liveOrShuttingDownBrokerIds(): number[] {
    return [...this.liveBrokers.keys()].sort((a, b) => a - b);
  }
  replicasFor(tp: TopicPartition): number[] {
    return this.topics.get(tp.topic)?.assignment.get(tp.partition) ?? [];
  }
  allPartitions(): TopicPartition[] {
    const out: TopicPartition[] = [];
    for (const t of this.topics.values()) for (const p of [...t.assignment.keys()].sort((a, b) => a - b)) out.push({ topic: t.name, partition: p });
    return out;
  }
  partitionsForTopic(topic: string): TopicPartition[] {
    const t = this.topics.get(topic);
    return t ? [...t.assignment.keys()].sort((a, b) => a - b).map((partition) => ({ topic, partition })) : [];
  }
  /** Partitions with a replica on `brokerId`. */
  partitionsOnBroker(brokerId: number): TopicPartition[] {
    return this.allPartitions().filter((tp) => this.replicasFor(tp).includes(brokerId));
  }
  partitionsLedBy(brokerId: number): TopicPartition[] {
    return this.allPartitions().filter((tp) => this.leadership.get(tpKey(tp.topic, tp.partition))?.state.leader === brokerId);
  }
  leaderOf(tp: TopicPartition): number {
    return this.leadership.get(tpKey(tp.topic, tp.partition))?.state.leader ?? NO_LEADER;
  }
  /** Replicas of the partition whose broker is not live (UpdateMetadata's offlineReplicas). */
  offlineReplicas(tp: TopicPartition): number[] {
    return this.replicasFor(tp).filter((r) => !this.liveBrokers.has(r));
  }
  isTopicQueuedForDeletion(topic: string): boolean {
    return this.topicsToBeDeleted.has(topic);
  }
  removeTopic(topic: string): void {
    const t = this.topics.get(topic);
    if (!t) return;
    for (const [p, replicas] of t.assignment) {
      const k = tpKey(topic, p);
      this.leadership.delete(k);
      this.partitionStates.delete(k);
      this.pendingReassignments.delete(k);
      for (const r of replicas) this.replicaStates.delete(replicaKey({ topic, partition: p }, r));
    }
    this.topics.delete(topic);
    this.topicsToBeDeleted.delete(topic);
    this.topicsIneligibleForDeletion.delete(topic);
  }
}
