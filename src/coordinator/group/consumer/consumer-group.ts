/**
 * A consumer group (KIP-848) as the coordinator keeps it in memory: the group epoch, the target
 * assignment and its epoch, the subscribed topics' metadata the target was computed from, and
 * the members. It also indexes who holds each partition (assigned or still being revoked) with
 * the holder's epoch, which is what keeps a partition from being given to a new owner before
 * the old one has let it go. Only replay (consumer-replay.ts) changes it.
 */
import { type Assignment, type ConsumerMember, MemberState } from './member.js';

/** A subscribed topic as the PartitionMetadata record keeps it. */
export interface SubscribedTopic {
  readonly topicId: string;
  readonly name: string;
  readonly numPartitions: number;
  /** partition -> racks of its replicas; empty when no broker has a rack. */
  readonly racks: ReadonlyMap<number, readonly string[]>;
}

/** The states ConsumerGroupDescribe and ListGroups report, in Kafka's words. */
export type ConsumerGroupState = 'Empty' | 'Assigning' | 'Reconciling' | 'Stable';

export class ConsumerGroup {
  groupEpoch = 0;
  assignmentEpoch = 0;
  /** topic name -> metadata, as of the last group epoch bump. */
  subscriptionMetadata: ReadonlyMap<string, SubscribedTopic> = new Map();
  readonly members = new Map<string, ConsumerMember>();
  /** member id -> target assignment (members that have one). */
  readonly targets = new Map<string, Assignment>();
  /** topic id -> partition -> epoch of the member holding it (assigned or pending revocation). */
  private readonly holders = new Map<string, Map<number, number>>();
  private readonly staticMembers = new Map<string, string>();
  /**
   * The topics generation (ClusterTopics.generation) `subscriptionMetadata` was last found
   * current at, for the members' subscriptions as they are: heartbeats skip resolving the
   * subscriptions again until either changes. A cache, not state: never written as a record.
   */
  checkedTopicsGeneration = -1;

  constructor(readonly groupId: string) {}

  /** Replaces (or with undefined removes) a member, keeping the indexes; returns the previous one. */
  setMember(memberId: string, m: ConsumerMember | undefined): ConsumerMember | undefined {
    const before = this.members.get(memberId);
    if (before) {
      this.index(before, false);
      if (before.instanceId !== null && this.staticMembers.get(before.instanceId) === memberId) this.staticMembers.delete(before.instanceId);
    }
    if (m) {
      this.members.set(memberId, m);
      this.index(m, true);
      if (m.instanceId !== null) this.staticMembers.set(m.instanceId, memberId);
    } else this.members.delete(memberId);
    return before;
  }

  private index(m: ConsumerMember, add: boolean): void {
    for (const a of [m.assigned, m.pendingRevocation]) {
      for (const [topicId, ps] of a) {
        let byPartition = this.holders.get(topicId);
        if (!byPartition) {
          if (!add) continue;
          byPartition = new Map();
          this.holders.set(topicId, byPartition);
        }
        for (const p of ps) {
          if (add) byPartition.set(p, m.memberEpoch);
          else byPartition.delete(p);
        }
        if (byPartition.size === 0) this.holders.delete(topicId);
      }
    }
  }

  /** The epoch of the member holding the partition, or -1 when it is free. */
  partitionEpoch(topicId: string, partition: number): number {
    return this.holders.get(topicId)?.get(partition) ?? -1;
  }

  memberByInstance(instanceId: string): ConsumerMember | undefined {
    const id = this.staticMembers.get(instanceId);
    return id === undefined ? undefined : this.members.get(id);
  }

  get state(): ConsumerGroupState {
    if (this.members.size === 0) return 'Empty';
    if (this.groupEpoch > this.assignmentEpoch) return 'Assigning';
    for (const m of this.members.values()) {
      if (m.memberEpoch !== this.assignmentEpoch || m.state !== MemberState.STABLE) return 'Reconciling';
    }
    return 'Stable';
  }

  /** Every topic name the members subscribe to by name. */
  subscribedTopicNames(): Set<string> {
    const out = new Set<string>();
    for (const m of this.members.values()) for (const n of m.subscribedTopicNames) out.add(n);
    return out;
  }
}
