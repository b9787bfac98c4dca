/**
 * Online downgrade of a consumer group to a classic group (KIP-848), as Kafka 4's
 * convertToClassicGroup: when the last member speaking the consumer protocol leaves (or is
 * fenced) and the members left all speak the classic protocol, the group becomes a classic
 * group again if group.consumer.migration.policy allows downgrades and the members fit
 * group.max.size. The classic group starts Stable at the group epoch as its generation, every
 * member with its target assignment (in its subscription's version), and rebalances at once so
 * the members rejoin it. The records are the consumer group's tombstones, in Kafka's order, then
 * the classic group's GroupMetadata; committed offsets stay.
 */
import { ClassicGroup, type ClassicMember } from '../classic-group.js';
import type { GroupShardState } from '../group-shard-state.js';
import type { CoordinatorRecord } from '../records.js';
import { prepareRebalance, scheduleSessionTimeout } from '../rebalance.js';
import { CONSUMER_PROTOCOL_TYPE, embeddedVersion, encodeClassicAssignment } from './classic-protocol.js';
import type { ConsumerGroup } from './consumer-group.js';
import type { ConsumerGroupRecord } from './consumer-records.js';
import { EMPTY_ASSIGNMENT } from './member.js';
import { downgradeEnabled } from './settings.js';

/** Whether the group downgrades when `leavingMemberId` (a consumer-protocol member) goes. */
export function shouldDowngrade(shard: GroupShardState, g: ConsumerGroup, leavingMemberId: string): boolean {
  const leaving = g.members.get(leavingMemberId);
  if (!leaving || leaving.classic !== null || g.members.size <= 1) return false;
  for (const m of g.members.values()) if (m.memberId !== leavingMemberId && m.classic === null) return false;
  const why = !downgradeEnabled(shard.consumerEnv.settings)
    ? 'the online downgrade is disabled (group.consumer.migration.policy)'
    : g.members.size - 1 > shard.config.maxGroupSize
      ? 'it has more members than group.max.size'
      : null;
  if (why === null) return true;
  shard.logger.info({ groupId: g.groupId }, `cannot downgrade consumer group ${g.groupId} to a classic group: ${why}`);
  return false;
}

/** Every record of the consumer group as a tombstone, in the order Kafka writes them. */
export function consumerGroupTombstones(g: ConsumerGroup): ConsumerGroupRecord[] {
  const group = g.groupId;
  const ids = [...g.members.keys()];
  return [
    ...ids.map((memberId): ConsumerGroupRecord => ({ type: 'cg-current-assignment', group, memberId, value: null })),
    ...ids.map((memberId): ConsumerGroupRecord => ({ type: 'cg-target-member', group, memberId, value: null })),
    { type: 'cg-target-metadata', group, value: null },
    ...ids.map((memberId): ConsumerGroupRecord => ({ type: 'cg-member', group, memberId, value: null })),
    { type: 'cg-partition-metadata', group, value: null },
    { type: 'cg-metadata', group, value: null },
  ];
}

/**
 * Turns `g` into a classic group without `leavingMemberId`: the classic group takes the
 * consumer group's place in the shard now (as Kafka, not by replay: the rebalance needs it),
 * and the returned records make it durable.
 */
export function downgradeToClassicGroup(shard: GroupShardState, g: ConsumerGroup, leavingMemberId: string): CoordinatorRecord[] {
  const now = shard.ctx.now();
  const classic = new ClassicGroup(g.groupId, now);
  classic.state = 'Stable';
  classic.generationId = g.groupEpoch;
  classic.protocolType = CONSUMER_PROTOCOL_TYPE;
  for (const m of g.members.values()) {
    if (m.memberId === leavingMemberId || m.classic === null) continue;
    const member: ClassicMember = {
      memberId: m.memberId,
      groupInstanceId: m.instanceId,
      clientId: m.clientId,
      clientHost: m.clientHost,
      rebalanceTimeoutMs: m.rebalanceTimeoutMs,
      sessionTimeoutMs: m.classic.sessionTimeoutMs,
      protocolType: CONSUMER_PROTOCOL_TYPE,
      protocols: m.classic.supportedProtocols.map((p) => ({ name: p.name, metadata: p.metadata })),
      assignment: Buffer.alloc(0),
      joinWaiter: null,
      syncWaiter: null,
      isNew: false,
    };
    classic.addMember(member);
  }
  classic.protocolName = classic.selectProtocol();
  const names = new Map([...g.subscriptionMetadata.values()].map((t) => [t.topicId, t.name]));
  for (const m of classic.members.values()) {
    const target = g.targets.get(m.memberId) ?? EMPTY_ASSIGNMENT;
    m.assignment = encodeClassicAssignment(target, embeddedVersion(classic.metadataFor(m)), (id) => names.get(id));
  }
  const records: CoordinatorRecord[] = [...consumerGroupTombstones(g), shard.groupRecord(classic)];
  shard.groups.set(g.groupId, classic);
  for (const m of classic.members.values()) scheduleSessionTimeout(shard, classic, m);
  shard.logger.info(
    { groupId: g.groupId, members: classic.members.size, generation: classic.generationId },
    `consumer group ${g.groupId} downgraded to a classic group with ${classic.members.size} member(s) at generation ${classic.generationId}`,
  );
  prepareRebalance(shard, classic, now, records, `downgrade of group ${g.groupId} from consumer to classic`);
  return records;
}
