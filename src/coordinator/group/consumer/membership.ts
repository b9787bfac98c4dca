/**
 * Members leaving a consumer group: by a heartbeat with epoch -1, by their session timing out
 * (no heartbeat for group.consumer.session.timeout.ms, or a static member not back within it
 * after leaving with -2), or by not revoking partitions within their rebalance timeout. The
 * member's records go, the subscription metadata follows, and the group epoch is bumped so
 * the next heartbeat computes a new target.
 */
import type { OperationResult } from '../../runtime/types.js';
import type { GroupShardState } from '../group-shard-state.js';
import type { CoordinatorRecord } from '../records.js';
import type { ConsumerGroup } from './consumer-group.js';
import { groupEpochRecord, memberRemovalRecords, subscriptionRecord } from './consumer-replay.js';
import { type ConsumerMember, MemberState } from './member.js';
import { downgradeToClassicGroup, shouldDowngrade } from './migration-downgrade.js';
import { groupSessionTimeoutMs } from './settings.js';
import { subscriptionMetadata, subscriptionsEqual } from './target-assignment.js';

const sessionKey = (g: string, m: string): string => `cg-session:${g}:${m}`;
const revocationKey = (g: string, m: string): string => `cg-revoke:${g}:${m}`;
/** A classic member told to rejoin must within its rebalance timeout; one that joined must sync within it. */
export const classicJoinKey = (g: string, m: string): string => `cg-classic-join:${g}:${m}`;
export const classicSyncKey = (g: string, m: string): string => `cg-classic-sync:${g}:${m}`;

/**
 * The records that remove `memberId` from the group and bump its epoch; or, when it was the last
 * member speaking the consumer protocol and the policy allows it, turn the group into a classic one.
 */
export function removeMemberRecords(shard: GroupShardState, g: ConsumerGroup, memberId: string): CoordinatorRecord[] {
  if (shouldDowngrade(shard, g, memberId)) {
    for (const id of g.members.keys()) cancelMemberTimers(shard, g.groupId, id);
    return downgradeToClassicGroup(shard, g, memberId);
  }
  const records: CoordinatorRecord[] = memberRemovalRecords(g.groupId, memberId);
  const rest = [...g.members.values()].filter((m) => m.memberId !== memberId);
  const subscription = subscriptionMetadata(rest, shard.consumerEnv, new Map());
  if (!subscriptionsEqual(subscription, g.subscriptionMetadata)) records.push(subscriptionRecord(g.groupId, subscription));
  records.push(groupEpochRecord(g.groupId, g.groupEpoch + 1));
  cancelMemberTimers(shard, g.groupId, memberId);
  return records;
}

export function cancelMemberTimers(shard: GroupShardState, groupId: string, memberId: string): void {
  shard.ctx.cancelTimer(sessionKey(groupId, memberId));
  shard.ctx.cancelTimer(revocationKey(groupId, memberId));
  shard.ctx.cancelTimer(classicJoinKey(groupId, memberId));
  shard.ctx.cancelTimer(classicSyncKey(groupId, memberId));
}

export function fenceIf(
  shard: GroupShardState,
  groupId: string,
  memberId: string,
  why: string,
  still: (m: ConsumerMember) => boolean,
): OperationResult<void, CoordinatorRecord> {
  const g = shard.consumerGroups.get(groupId);
  const m = g?.members.get(memberId);
  if (!g || !m || !still(m)) return { records: [], response: undefined };
  shard.logger.info(
    { groupId, memberId, instanceId: m.instanceId, memberEpoch: m.memberEpoch },
    `consumer group ${groupId}: member ${memberId} fenced (${why})`,
  );
  return { records: removeMemberRecords(shard, g, memberId), response: undefined };
}

/** (Re)starts the member's session: it is removed unless it heartbeats within `timeoutMs`. */
export function scheduleSession(
  shard: GroupShardState,
  groupId: string,
  memberId: string,
  timeoutMs = groupSessionTimeoutMs(shard.consumerEnv, groupId),
): void {
  shard.ctx.scheduleTimer(sessionKey(groupId, memberId), timeoutMs, () => fenceIf(shard, groupId, memberId, 'session timed out', () => true));
}

/**
 * Keeps the revocation deadline in step with the member's state: started when it must revoke
 * partitions at an epoch, cancelled once it has.
 */
export function syncRevocationTimer(shard: GroupShardState, groupId: string, before: ConsumerMember | undefined, after: ConsumerMember): void {
  const key = revocationKey(groupId, after.memberId);
  if (after.state !== MemberState.UNREVOKED_PARTITIONS) {
    shard.ctx.cancelTimer(key);
    return;
  }
  if (before && before.state === MemberState.UNREVOKED_PARTITIONS && before.memberEpoch === after.memberEpoch && shard.ctx.hasTimer(key)) return;
  const epoch = after.memberEpoch;
  const timeout = Math.max(0, after.rebalanceTimeoutMs);
  shard.ctx.scheduleTimer(key, timeout, () =>
    fenceIf(
      shard,
      groupId,
      after.memberId,
      `partitions not revoked within ${timeout} ms`,
      (m) => m.memberEpoch === epoch && m.state === MemberState.UNREVOKED_PARTITIONS,
    ),
  );
}

/** Once a partition is loaded: every member's session (and revocation deadline) starts anew. */
export function scheduleConsumerGroupTimers(shard: GroupShardState): void {
  for (const g of shard.consumerGroups.values()) {
    for (const m of g.members.values()) {
      scheduleSession(shard, g.groupId, m.memberId, m.classic?.sessionTimeoutMs);
      syncRevocationTimer(shard, g.groupId, undefined, m);
    }
  }
}
