/**
 * Online upgrade of a classic group to a consumer group (KIP-848), as Kafka 4's
 * convertToConsumerGroup: the first ConsumerGroupHeartbeat joining a classic group with members
 * turns it into a consumer group when group.consumer.migration.policy allows upgrades, the
 * members use the "consumer" protocol type and there are no more than group.consumer.max.size.
 * Every classic member becomes a member speaking the classic protocol, at the generation as its
 * epoch, subscribed to what its JoinGroup subscription names and owning (and targeted with) the
 * partitions of its last SyncGroup assignment, so nothing is revoked by the conversion itself.
 * The records are the classic group's tombstone and then the consumer group's, in Kafka's order.
 */
import { ErrorCode, KafkaError } from '../../../protocol/errors.js';
import { type ClassicGroup, joinError, syncError } from '../classic-group.js';
import type { GroupShardState } from '../group-shard-state.js';
import type { CoordinatorRecord } from '../records.js';
import { CONSUMER_PROTOCOL_TYPE, byTopicId, decodeClassicAssignment, decodeClassicSubscription } from './classic-protocol.js';
import { ConsumerGroup } from './consumer-group.js';
import { currentAssignmentRecord, groupEpochRecord, memberMetadataRecord, targetEpochRecord, targetMemberRecord } from './consumer-replay.js';
import { type ConsumerMember, EMPTY_ASSIGNMENT, MemberState, newMember } from './member.js';
import { scheduleSession } from './membership.js';
import { upgradeEnabled } from './settings.js';

const notConsumerGroup = (groupId: string): never => {
  throw new KafkaError(ErrorCode.GROUP_ID_NOT_FOUND, `Group ${groupId} is not a consumer group.`);
};

/**
 * The consumer group `classic` becomes, with the records that make it so appended to `records`.
 * The returned group is not the shard's: replaying the records makes that one. Throws Kafka's
 * GROUP_ID_NOT_FOUND when the upgrade is not allowed.
 */
export function upgradeClassicGroup(shard: GroupShardState, classic: ClassicGroup, records: CoordinatorRecord[]): ConsumerGroup {
  const groupId = classic.groupId;
  const settings = shard.consumerEnv.settings;
  const refuse = (why: string): never => {
    shard.logger.info({ groupId }, `cannot upgrade classic group ${groupId} to a consumer group: ${why}`);
    return notConsumerGroup(groupId);
  };
  if (!upgradeEnabled(settings)) refuse('the online upgrade is disabled (group.consumer.migration.policy)');
  if (classic.protocolType !== CONSUMER_PROTOCOL_TYPE) refuse(`its members use protocol type ${classic.protocolType ?? ''}, not consumer`);
  if (classic.members.size > settings.maxSize) refuse('it has more members than group.consumer.max.size');

  const generation = classic.generationId;
  const g = new ConsumerGroup(groupId);
  g.groupEpoch = generation;
  g.assignmentEpoch = generation;
  for (const m of classic.members.values()) {
    let member: ConsumerMember;
    try {
      const protocol = classic.protocolName ?? m.protocols[0]?.name ?? null;
      const subscription = decodeClassicSubscription(classic.metadataFor(m, protocol));
      const assigned = byTopicId(decodeClassicAssignment(m.assignment), shard.consumerEnv.topics);
      member = {
        ...newMember(m.memberId),
        instanceId: m.groupInstanceId,
        rackId: subscription.rackId,
        clientId: m.clientId,
        clientHost: m.clientHost,
        subscribedTopicNames: subscription.topics,
        rebalanceTimeoutMs: m.rebalanceTimeoutMs,
        memberEpoch: generation,
        previousMemberEpoch: generation,
        state: MemberState.STABLE,
        assigned,
        pendingRevocation: EMPTY_ASSIGNMENT,
        classic: { sessionTimeoutMs: m.sessionTimeoutMs, supportedProtocols: m.protocols.map((p) => ({ name: p.name, metadata: p.metadata })) },
      };
    } catch {
      throw new KafkaError(
        ErrorCode.GROUP_ID_NOT_FOUND,
        `Cannot upgrade the classic group ${groupId} to consumer group because the embedded consumer protocol is malformed.`,
      );
    }
    g.setMember(member.memberId, member);
    g.targets.set(member.memberId, member.assigned);
  }

  // Members waiting in a rebalance of the classic group are told to rejoin (the consumer group).
  for (const m of classic.members.values()) {
    m.joinWaiter?.(joinError(ErrorCode.REBALANCE_IN_PROGRESS, m.memberId));
    m.syncWaiter?.(syncError(ErrorCode.REBALANCE_IN_PROGRESS));
    m.joinWaiter = null;
    m.syncWaiter = null;
  }
  records.push({ type: 'group', group: groupId, value: null });
  for (const m of g.members.values()) records.push(memberMetadataRecord(groupId, m));
  records.push(groupEpochRecord(groupId, generation));
  for (const m of g.members.values()) records.push(targetMemberRecord(groupId, m.memberId, m.assigned));
  records.push(targetEpochRecord(groupId, generation));
  for (const m of g.members.values()) records.push(currentAssignmentRecord(groupId, m));
  // The classic group's timers find no classic group any more; the members' sessions go on here.
  for (const m of g.members.values()) scheduleSession(shard, groupId, m.memberId, m.classic!.sessionTimeoutMs);
  shard.logger.info(
    { groupId, members: g.members.size, generation },
    `classic group ${groupId} upgraded to a consumer group with ${g.members.size} member(s) at epoch ${generation}`,
  );
  return g;
}
