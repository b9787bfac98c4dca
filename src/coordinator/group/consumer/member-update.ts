/**
 * The group-wide work of a member joining or changing (ConsumerGroupHeartbeat, or a classic
 * member's JoinGroup inside a consumer group), as Kafka 4's group coordinator does it: the
 * member's metadata record, the subscribed topics' metadata and a group epoch bump when either
 * changed, the target assignment of the new epoch, then the member reconciled towards its target
 * (reconcile.ts). Records are appended to `records`; the group changes when they are replayed.
 */
import type { GroupShardState } from '../group-shard-state.js';
import type { CoordinatorRecord } from '../records.js';
import type { ConsumerGroup } from './consumer-group.js';
import {
  currentAssignmentRecord,
  groupEpochRecord,
  memberMetadataRecord,
  memberRemovalRecords,
  subscriptionRecord,
  targetMemberRecord,
} from './consumer-replay.js';
import { type Assignment, type ConsumerMember, EMPTY_ASSIGNMENT, assignmentChanged, metadataChanged, subscriptionChanged } from './member.js';
import { cancelMemberTimers } from './membership.js';
import { reconcile } from './reconcile.js';
import { computeTarget, subscriptionMetadata, subscriptionsEqual } from './target-assignment.js';

export interface MemberUpdate {
  readonly group: ConsumerGroup;
  /** The member as the group knows it (a new member: as newMember made it). */
  readonly base: ConsumerMember;
  /** The member with what this request changes. */
  readonly updated: ConsumerMember;
  /** A static member this one replaces (same instance id, new member id). */
  readonly replaced: ConsumerMember | undefined;
  readonly isNew: boolean;
  /** What the member says it owns; null: not said. */
  readonly owned: Assignment | null;
}

/** Writes the update's records into `records` and returns the member as reconciled. */
export function updateMember(shard: GroupShardState, u: MemberUpdate, records: CoordinatorRecord[], now: number): ConsumerMember {
  const env = shard.consumerEnv;
  const { group: g, base, updated, replaced, isNew, owned } = u;
  const memberId = updated.memberId;
  if (replaced) {
    records.push(...memberRemovalRecords(g.groupId, replaced.memberId));
    cancelMemberTimers(shard, g.groupId, replaced.memberId);
  }
  let bump = isNew || subscriptionChanged(base, updated);
  if (isNew || replaced || metadataChanged(base, updated)) records.push(memberMetadataRecord(g.groupId, updated));

  const members = new Map(g.members);
  if (replaced) members.delete(replaced.memberId);
  members.set(memberId, updated);
  const regexCache = new Map<string, string[]>();
  const generation = env.topics.generation();
  let subscription = g.subscriptionMetadata;
  // Resolved again only when a subscription or the cluster's topics changed since it was current.
  if (bump || replaced || metadataChanged(base, updated) || g.checkedTopicsGeneration !== generation) {
    subscription = subscriptionMetadata(members.values(), env, regexCache);
    if (!subscriptionsEqual(subscription, g.subscriptionMetadata)) {
      records.push(subscriptionRecord(g.groupId, subscription));
      bump = true;
    } else if (!bump && !replaced) g.checkedTopicsGeneration = generation;
  }
  const groupEpoch = bump ? g.groupEpoch + 1 : g.groupEpoch;
  if (bump || !shard.consumerGroups.has(g.groupId)) records.push(groupEpochRecord(g.groupId, groupEpoch));

  let targetEpoch = g.assignmentEpoch;
  let target = g.targets.get(memberId) ?? (replaced ? g.targets.get(replaced.memberId) : undefined) ?? EMPTY_ASSIGNMENT;
  const computed =
    groupEpoch > g.assignmentEpoch ? computeTarget(g, members, subscription, groupEpoch, env, regexCache, inheritance(memberId, replaced)) : null;
  if (computed) {
    records.push(...computed.records);
    targetEpoch = groupEpoch;
    target = computed.targets.get(memberId) ?? EMPTY_ASSIGNMENT;
  } else if (replaced) records.push(targetMemberRecord(g.groupId, memberId, target));

  const group = g;
  const reconciled = reconcile({ member: updated, targetEpoch, target, owned, partitionEpoch: (t, p) => group.partitionEpoch(t, p) });
  if (isNew || replaced || assignmentChanged(updated, reconciled)) records.push(currentAssignmentRecord(g.groupId, reconciled));
  if (reconciled.memberEpoch !== base.memberEpoch || isNew) {
    shard.logger.info(
      { groupId: g.groupId, memberId, memberEpoch: reconciled.memberEpoch, groupEpoch, state: reconciled.state, at: now },
      `consumer group ${g.groupId}: member ${memberId} at epoch ${reconciled.memberEpoch}`,
    );
  }
  return reconciled;
}

const inheritance = (memberId: string, replaced: ConsumerMember | undefined): Map<string, string> =>
  replaced ? new Map([[memberId, replaced.memberId]]) : new Map();
