/**
 * Members speaking the classic protocol inside a consumer group (KIP-848 migration), as Kafka
 * 4's classicGroup*ToConsumerGroup serve them. JoinGroup updates the member from its embedded
 * subscription and reconciles it like a heartbeat would, answering at once with its member epoch
 * as the generation and no leader work; SyncGroup returns its current assignment as a consumer
 * protocol assignment; Heartbeat says REBALANCE_IN_PROGRESS whenever its assignment must move
 * (a new group epoch, partitions to revoke, or partitions it waits for now free), so it rejoins;
 * LeaveGroup removes it. A member told to rejoin must do so within its rebalance timeout, and
 * one that joined must sync within it, or it is removed; its session is its JoinGroup's.
 */
import { ErrorCode } from '../../../protocol/errors.js';
import { randomUuid } from '../../../protocol/primitives/index.js';
import type { OperationResult } from '../../runtime/types.js';
import { type JoinOutcome, type ProtocolOffer, type SyncOutcome, joinError, syncError } from '../classic-group.js';
import type { GroupShardState } from '../group-shard-state.js';
import type { CoordinatorRecord } from '../records.js';
import { CONSUMER_PROTOCOL_TYPE, byTopicId, decodeClassicSubscription, embeddedVersion, encodeClassicAssignment } from './classic-protocol.js';
import type { ConsumerGroup } from './consumer-group.js';
import { groupEpochRecord, memberRemovalRecords, subscriptionRecord } from './consumer-replay.js';
import { type ConsumerMember, EMPTY_ASSIGNMENT, MemberState, newMember } from './member.js';
import { updateMember } from './member-update.js';
import { cancelMemberTimers, classicJoinKey, classicSyncKey, fenceIf, scheduleSession } from './membership.js';
import { subscriptionMetadata, subscriptionsEqual } from './target-assignment.js';
import type { JoinRequest } from '../join-sync.js';

/** A JoinGroup request, as the classic coordinator takes it (join-sync.ts). */
export type ClassicJoin = JoinRequest;

/** A classic Heartbeat's identity (heartbeat-leave.ts's HeartbeatRequest fits). */
export interface ClassicHeartbeat {
  generationId: number;
  memberId: string;
  groupInstanceId: string | null;
}

/** A SyncGroup's (join-sync.ts's SyncRequest fits). */
export interface ClassicSync extends ClassicHeartbeat {
  protocolType: string | null;
  protocolName: string | null;
}

type Result<T> = OperationResult<T, CoordinatorRecord>;

/** The member a classic request names (by instance id when it has one), or the error it gets. */
function classicMember(g: ConsumerGroup, memberId: string, instanceId: string | null): ConsumerMember | number {
  let m: ConsumerMember | undefined;
  if (instanceId === null) m = g.members.get(memberId);
  else {
    m = g.memberByInstance(instanceId);
    if (m && m.memberId !== memberId) return ErrorCode.FENCED_INSTANCE_ID;
  }
  // A member speaking the consumer protocol is not known to the classic APIs.
  if (!m || m.classic === null) return ErrorCode.UNKNOWN_MEMBER_ID;
  return m;
}

/** Whether one of `offers` is supported by every classic member (any, when there is none). */
function supportsProtocols(g: ConsumerGroup, protocolType: string, offers: readonly ProtocolOffer[]): boolean {
  if (protocolType !== CONSUMER_PROTOCOL_TYPE || offers.length === 0) return false;
  const classic = [...g.members.values()].filter((m) => m.classic !== null);
  return offers.some((o) => classic.every((m) => m.classic!.supportedProtocols.some((p) => p.name === o.name)));
}

const protocolName = (m: ConsumerMember): string => m.classic?.supportedProtocols[0]?.name ?? '';

function scheduleClassicTimer(shard: GroupShardState, key: string, g: ConsumerGroup, m: ConsumerMember, why: string, ifAbsent: boolean): void {
  if (ifAbsent && shard.ctx.hasTimer(key)) return;
  const timeout = Math.max(0, m.rebalanceTimeoutMs);
  shard.ctx.scheduleTimer(key, timeout, () => fenceIf(shard, g.groupId, m.memberId, `${why} within ${timeout} ms`, () => true));
}

export function classicJoinToConsumerGroup(shard: GroupShardState, g: ConsumerGroup, req: ClassicJoin, now: number): Result<Promise<JoinOutcome>> {
  const fail = (code: number, memberId = req.memberId): Result<Promise<JoinOutcome>> => ({ records: [], response: Promise.resolve(joinError(code, memberId)) });
  const isUnknown = req.memberId === '';
  const memberId = isUnknown ? randomUuid() : req.memberId;
  const holder = req.groupInstanceId !== null ? g.memberByInstance(req.groupInstanceId) : undefined;
  const existing = isUnknown ? undefined : g.members.get(memberId);
  if (!existing && !holder && g.members.size >= shard.consumerEnv.settings.maxSize) return fail(ErrorCode.GROUP_MAX_SIZE_REACHED, memberId);
  if (!supportsProtocols(g, req.protocolType, req.protocols)) return fail(ErrorCode.INCONSISTENT_GROUP_PROTOCOL, memberId);
  // KIP-394: a new dynamic member first learns its id, then joins with it.
  if (isUnknown && req.groupInstanceId === null && req.apiVersion >= 4) return fail(ErrorCode.MEMBER_ID_REQUIRED, memberId);
  if (existing && existing.classic === null) return fail(ErrorCode.UNKNOWN_MEMBER_ID);

  let replaced: ConsumerMember | undefined;
  let base: ConsumerMember;
  if (holder && holder.memberId !== memberId) {
    // A static member back with a new process takes its predecessor's place and partitions.
    if (!isUnknown) return fail(ErrorCode.FENCED_INSTANCE_ID);
    replaced = holder;
    base = { ...holder, memberId, memberEpoch: 0, previousMemberEpoch: 0, state: MemberState.STABLE, pendingRevocation: EMPTY_ASSIGNMENT };
  } else base = existing ?? holder ?? newMember(memberId);
  const isNew = !existing && !holder;

  let subscription: ReturnType<typeof decodeClassicSubscription>;
  try {
    subscription = decodeClassicSubscription(req.protocols[0]!.metadata);
  } catch {
    return fail(ErrorCode.INCONSISTENT_GROUP_PROTOCOL, memberId);
  }
  const updated: ConsumerMember = {
    ...base,
    instanceId: req.groupInstanceId ?? base.instanceId,
    rackId: subscription.rackId ?? base.rackId,
    clientId: req.clientId,
    clientHost: req.clientHost,
    rebalanceTimeoutMs: req.rebalanceTimeoutMs,
    subscribedTopicNames: subscription.topics,
    subscribedTopicRegex: null,
    classic: { sessionTimeoutMs: req.sessionTimeoutMs, supportedProtocols: req.protocols.map((p) => ({ name: p.name, metadata: p.metadata })) },
  };
  const records: CoordinatorRecord[] = [];
  const owned = byTopicId(subscription.owned, shard.consumerEnv.topics);
  const reconciled = updateMember(shard, { group: g, base, updated, replaced, isNew, owned }, records, now);

  shard.ctx.cancelTimer(classicJoinKey(g.groupId, memberId));
  scheduleSession(shard, g.groupId, memberId, req.sessionTimeoutMs);
  scheduleClassicTimer(shard, classicSyncKey(g.groupId, memberId), g, reconciled, 'no SyncGroup', false);
  const outcome: JoinOutcome = {
    errorCode: ErrorCode.NONE,
    generationId: reconciled.memberEpoch,
    protocolType: CONSUMER_PROTOCOL_TYPE,
    protocolName: protocolName(updated),
    leader: '',
    memberId,
    skipAssignment: false,
    members: [],
  };
  return { records, response: Promise.resolve(outcome) };
}

export function classicSyncToConsumerGroup(shard: GroupShardState, g: ConsumerGroup, req: ClassicSync): Result<Promise<SyncOutcome>> {
  const fail = (code: number): Result<Promise<SyncOutcome>> => ({ records: [], response: Promise.resolve(syncError(code)) });
  const m = classicMember(g, req.memberId, req.groupInstanceId);
  if (typeof m === 'number') return fail(m);
  if (req.generationId !== m.memberEpoch) return fail(ErrorCode.ILLEGAL_GENERATION);
  if ((req.protocolType !== null && req.protocolType !== CONSUMER_PROTOCOL_TYPE) || (req.protocolName !== null && req.protocolName !== protocolName(m))) {
    return fail(ErrorCode.INCONSISTENT_GROUP_PROTOCOL);
  }
  // A new group epoch: rejoin first, unless partitions are still to be revoked (the next join does).
  if (g.groupEpoch > m.memberEpoch && m.state !== MemberState.UNREVOKED_PARTITIONS) {
    scheduleClassicTimer(shard, classicJoinKey(g.groupId, m.memberId), g, m, 'no JoinGroup after a rebalance', true);
    return fail(ErrorCode.REBALANCE_IN_PROGRESS);
  }
  shard.ctx.cancelTimer(classicSyncKey(g.groupId, m.memberId));
  scheduleSession(shard, g.groupId, m.memberId, m.classic!.sessionTimeoutMs);
  const names = new Map([...g.subscriptionMetadata.values()].map((t) => [t.topicId, t.name]));
  const assignment = encodeClassicAssignment(m.assigned, embeddedVersion(m.classic!.supportedProtocols[0]?.metadata ?? Buffer.alloc(0)), (id) => names.get(id));
  return { records: [], response: Promise.resolve({ errorCode: ErrorCode.NONE, protocolType: req.protocolType, protocolName: req.protocolName, assignment }) };
}

/** Whether a partition of the member's target is still held by another member. */
function waitingOnUnreleased(g: ConsumerGroup, m: ConsumerMember): boolean {
  for (const [topicId, ps] of g.targets.get(m.memberId) ?? EMPTY_ASSIGNMENT) {
    const mine = m.assigned.get(topicId) ?? [];
    if (ps.some((p) => !mine.includes(p) && g.partitionEpoch(topicId, p) !== -1)) return true;
  }
  return false;
}

export function classicHeartbeatToConsumerGroup(shard: GroupShardState, g: ConsumerGroup, req: ClassicHeartbeat): Result<number> {
  const done = (code: number): Result<number> => ({ records: [], response: code });
  const m = classicMember(g, req.memberId, req.groupInstanceId);
  if (typeof m === 'number') return done(m);
  if (req.generationId !== m.memberEpoch) return done(ErrorCode.ILLEGAL_GENERATION);
  scheduleSession(shard, g.groupId, m.memberId, m.classic!.sessionTimeoutMs);
  const mustRejoin =
    m.memberEpoch < g.groupEpoch ||
    m.state === MemberState.UNREVOKED_PARTITIONS ||
    (m.state === MemberState.UNRELEASED_PARTITIONS && !waitingOnUnreleased(g, m));
  if (!mustRejoin) return done(ErrorCode.NONE);
  scheduleClassicTimer(shard, classicJoinKey(g.groupId, m.memberId), g, m, 'no JoinGroup after a rebalance', true);
  return done(ErrorCode.REBALANCE_IN_PROGRESS);
}

export interface ClassicLeaveResult {
  errorCode: number;
  members: { memberId: string; groupInstanceId: string | null; errorCode: number }[];
}

export function classicLeaveFromConsumerGroup(
  shard: GroupShardState,
  g: ConsumerGroup,
  leaving: readonly { memberId: string; groupInstanceId: string | null }[],
): Result<ClassicLeaveResult> {
  const records: CoordinatorRecord[] = [];
  const removed = new Set<string>();
  const members: ClassicLeaveResult['members'] = [];
  for (const l of leaving) {
    let m: ConsumerMember | number;
    if (l.groupInstanceId === null) m = classicMember(g, l.memberId, null);
    else {
      // By instance id alone (an admin removing a static member) or with its member id.
      const s = g.memberByInstance(l.groupInstanceId);
      m = !s ? ErrorCode.UNKNOWN_MEMBER_ID : l.memberId !== '' && s.memberId !== l.memberId ? ErrorCode.FENCED_INSTANCE_ID : classicMember(g, s.memberId, null);
    }
    if (typeof m === 'number') {
      members.push({ memberId: l.memberId, groupInstanceId: l.groupInstanceId, errorCode: m });
      continue;
    }
    shard.logger.info({ groupId: g.groupId, memberId: m.memberId }, `consumer group ${g.groupId}: classic member ${m.memberId} left`);
    if (!removed.has(m.memberId)) records.push(...memberRemovalRecords(g.groupId, m.memberId));
    removed.add(m.memberId);
    cancelMemberTimers(shard, g.groupId, m.memberId);
    members.push({ memberId: m.memberId, groupInstanceId: l.groupInstanceId, errorCode: ErrorCode.NONE });
  }
  if (removed.size > 0) {
    const rest = [...g.members.values()].filter((m) => !removed.has(m.memberId));
    const subscription = subscriptionMetadata(rest, shard.consumerEnv, new Map());
    if (!subscriptionsEqual(subscription, g.subscriptionMetadata)) records.push(subscriptionRecord(g.groupId, subscription));
    records.push(groupEpochRecord(g.groupId, g.groupEpoch + 1));
  }
  return { records, response: { errorCode: ErrorCode.NONE, members } };
}
