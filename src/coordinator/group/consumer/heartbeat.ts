/**
 * ConsumerGroupHeartbeat (KIP-848) as a coordinator operation, as Kafka 4's group coordinator
 * serves it: join (epoch 0), heartbeat, leave (-1) and static leave (-2). A heartbeat may
 * change the member's subscription or the subscribed topics' metadata (a group epoch bump), in
 * which case the group's target assignment is recomputed; then the member is reconciled
 * towards its target (member-update.ts, reconcile.ts). A join to a classic group with members
 * upgrades it first (migration-upgrade.ts). Everything it changes is written as records and
 * takes effect by their replay.
 */
import { ErrorCode, KafkaError } from '../../../protocol/errors.js';
import { randomUuid } from '../../../protocol/primitives/index.js';
import type { OperationResult } from '../../runtime/types.js';
import type { GroupShardState } from '../group-shard-state.js';
import type { CoordinatorRecord } from '../records.js';
import { ConsumerGroup } from './consumer-group.js';
import { currentAssignmentRecord } from './consumer-replay.js';
import {
  type Assignment,
  type ConsumerMember,
  EMPTY_ASSIGNMENT,
  JOIN_EPOCH,
  LEAVE_EPOCH,
  MemberState,
  STATIC_LEAVE_EPOCH,
  assignmentFrom,
  assignmentList,
  assignmentsEqual,
  newMember,
} from './member.js';
import { cancelMemberTimers, removeMemberRecords, scheduleSession, syncRevocationTimer } from './membership.js';
import { upgradeClassicGroup } from './migration-upgrade.js';
import { groupHeartbeatIntervalMs } from './settings.js';
import { updateMember } from './member-update.js';

export interface ConsumerHeartbeatRequest {
  groupId: string;
  memberId: string;
  memberEpoch: number;
  instanceId: string | null;
  rackId: string | null;
  rebalanceTimeoutMs: number;
  subscribedTopicNames: string[] | null;
  subscribedTopicRegex: string | null;
  serverAssignor: string | null;
  topicPartitions: { topicId: string; partitions: number[] }[] | null;
  apiVersion: number;
  clientId: string;
  clientHost: string;
}

export interface ConsumerHeartbeatResponse {
  errorCode: number;
  errorMessage: string | null;
  memberId: string | null;
  memberEpoch: number;
  heartbeatIntervalMs: number;
  assignment: { topicPartitions: { topicId: string; partitions: number[] }[] } | null;
}

type Result = OperationResult<ConsumerHeartbeatResponse, CoordinatorRecord>;

const fail = (code: number, message: string): never => {
  throw new KafkaError(code, message);
};

export function consumerGroupHeartbeat(shard: GroupShardState, req: ConsumerHeartbeatRequest, now: number): Result {
  try {
    validate(shard, req);
    if (req.memberEpoch === LEAVE_EPOCH) return leave(shard, req);
    if (req.memberEpoch === STATIC_LEAVE_EPOCH) return staticLeave(shard, req);
    return heartbeat(shard, req, now);
  } catch (err) {
    if (!(err instanceof KafkaError)) throw err;
    return {
      records: [],
      response: { errorCode: err.code, errorMessage: err.message, memberId: null, memberEpoch: 0, heartbeatIntervalMs: 0, assignment: null },
    };
  }
}

function validate(shard: GroupShardState, req: ConsumerHeartbeatRequest): void {
  const invalid = (msg: string) => fail(ErrorCode.INVALID_REQUEST, msg);
  if (req.groupId === '') invalid("GroupId can't be empty.");
  if (req.instanceId === '') invalid("InstanceId can't be empty.");
  if (req.rackId === '') invalid("RackId can't be empty.");
  // From v1 the client makes its member id; v0 clients get one from the coordinator when joining.
  if (req.memberId === '' && (req.apiVersion >= 1 || req.memberEpoch !== JOIN_EPOCH)) invalid("MemberId can't be empty.");
  if (req.memberEpoch < STATIC_LEAVE_EPOCH) invalid('MemberEpoch is invalid.');
  if (req.memberEpoch === STATIC_LEAVE_EPOCH && req.instanceId === null) invalid("InstanceId can't be null.");
  if (req.memberEpoch === JOIN_EPOCH) {
    if (req.rebalanceTimeoutMs === -1) invalid('RebalanceTimeoutMs must be provided in first request.');
    if (req.topicPartitions === null || req.topicPartitions.some((t) => t.partitions.length > 0)) invalid('TopicPartitions must be empty when (re-)joining.');
    if (req.subscribedTopicNames === null && req.subscribedTopicRegex === null)
      invalid('SubscribedTopicNames or SubscribedTopicRegex must be set in first request.');
  }
  if (req.subscribedTopicNames !== null && req.subscribedTopicRegex !== null) invalid('SubscribedTopicNames and SubscribedTopicRegex cannot be used together.');
  const { assignors } = shard.consumerEnv.settings;
  if (req.serverAssignor !== null && !assignors.some((a) => a.name === req.serverAssignor)) {
    fail(
      ErrorCode.UNSUPPORTED_ASSIGNOR,
      `ServerAssignor ${req.serverAssignor} is not supported. Supported assignors: ${assignors.map((a) => a.name).join(', ')}.`,
    );
  }
  if (req.subscribedTopicRegex !== null) {
    const compiled = shard.consumerEnv.compileRegex(req.subscribedTopicRegex);
    if (!compiled.ok) fail(ErrorCode.INVALID_REGULAR_EXPRESSION, compiled.message);
  }
}

function existingGroup(shard: GroupShardState, groupId: string): ConsumerGroup {
  const g = shard.consumerGroups.get(groupId);
  if (g) return g;
  if (shard.groups.has(groupId)) return fail(ErrorCode.GROUP_ID_NOT_FOUND, `Group ${groupId} is not a consumer group.`);
  return fail(ErrorCode.GROUP_ID_NOT_FOUND, `Consumer group ${groupId} not found.`);
}

function existingMember(g: ConsumerGroup, memberId: string): ConsumerMember {
  return g.members.get(memberId) ?? fail(ErrorCode.UNKNOWN_MEMBER_ID, `Member ${memberId} is not a member of group ${g.groupId}.`);
}

function reply(shard: GroupShardState, groupId: string, memberId: string, memberEpoch: number, assignment: Assignment | null): ConsumerHeartbeatResponse {
  return {
    errorCode: ErrorCode.NONE,
    errorMessage: null,
    memberId,
    memberEpoch,
    heartbeatIntervalMs: groupHeartbeatIntervalMs(shard.consumerEnv, groupId),
    assignment: assignment === null ? null : { topicPartitions: assignmentList(assignment) },
  };
}

function leave(shard: GroupShardState, req: ConsumerHeartbeatRequest): Result {
  const g = existingGroup(shard, req.groupId);
  const m = req.instanceId !== null ? g.memberByInstance(req.instanceId) : g.members.get(req.memberId);
  if (!m) return fail(ErrorCode.UNKNOWN_MEMBER_ID, `Member ${req.memberId} is not a member of group ${g.groupId}.`);
  if (m.memberId !== req.memberId) fail(ErrorCode.FENCED_INSTANCE_ID, `Static member ${req.instanceId} is known under another member id.`);
  shard.logger.info({ groupId: g.groupId, memberId: m.memberId }, `consumer group ${g.groupId}: member ${m.memberId} left`);
  return { records: removeMemberRecords(shard, g, m.memberId), response: reply(shard, g.groupId, m.memberId, LEAVE_EPOCH, null) };
}

/** A static member leaving for now (-2): it keeps its partitions for its session timeout. */
function staticLeave(shard: GroupShardState, req: ConsumerHeartbeatRequest): Result {
  const g = existingGroup(shard, req.groupId);
  const m = g.memberByInstance(req.instanceId!) ?? fail(ErrorCode.UNKNOWN_MEMBER_ID, `Instance id ${req.instanceId} is unknown in group ${g.groupId}.`);
  if (m.memberId !== req.memberId) fail(ErrorCode.FENCED_INSTANCE_ID, `Static member ${req.instanceId} is known under another member id.`);
  const left: ConsumerMember = { ...m, memberEpoch: STATIC_LEAVE_EPOCH, pendingRevocation: EMPTY_ASSIGNMENT };
  cancelMemberTimers(shard, g.groupId, m.memberId);
  scheduleSession(shard, g.groupId, m.memberId);
  return { records: [currentAssignmentRecord(g.groupId, left)], response: reply(shard, g.groupId, m.memberId, STATIC_LEAVE_EPOCH, null) };
}

function heartbeat(shard: GroupShardState, req: ConsumerHeartbeatRequest, now: number): Result {
  const env = shard.consumerEnv;
  const records: CoordinatorRecord[] = [];
  const joining = req.memberEpoch === JOIN_EPOCH;
  let g = shard.consumerGroups.get(req.groupId);
  if (!g) {
    if (!joining) return fail(ErrorCode.GROUP_ID_NOT_FOUND, `Consumer group ${req.groupId} not found.`);
    const classic = shard.groups.get(req.groupId);
    // A classic group with members is upgraded (migration-upgrade.ts); an empty one (or only
    // committed offsets) becomes a consumer group. Its offsets stay either way.
    if (classic && !(classic.is('Empty') && classic.isEmpty)) g = upgradeClassicGroup(shard, classic, records);
    else {
      if (classic) records.push({ type: 'group', group: req.groupId, value: null });
      g = new ConsumerGroup(req.groupId);
    }
  }

  const memberId = req.memberId === '' ? randomUuid() : req.memberId;
  let base: ConsumerMember;
  let replaced: ConsumerMember | undefined;
  let isNew = false;
  const existing = g.members.get(memberId);
  if (joining) {
    const holder = req.instanceId !== null ? g.memberByInstance(req.instanceId) : undefined;
    if (holder && holder.memberId !== memberId) {
      if (holder.memberEpoch !== STATIC_LEAVE_EPOCH)
        fail(ErrorCode.UNRELEASED_INSTANCE_ID, `Static member with instance id ${req.instanceId} is not released yet.`);
      replaced = holder;
    }
    if (!existing && !replaced && g.members.size >= env.settings.maxSize) {
      fail(ErrorCode.GROUP_MAX_SIZE_REACHED, `The consumer group has reached its maximum capacity of ${env.settings.maxSize} members.`);
    }
    isNew = !existing && !replaced;
    // A static member back under a new id takes over its predecessor's partitions.
    base =
      existing ??
      (replaced
        ? { ...replaced, memberId, memberEpoch: 0, previousMemberEpoch: 0, state: MemberState.STABLE, pendingRevocation: EMPTY_ASSIGNMENT }
        : newMember(memberId));
  } else {
    base = existingMember(g, memberId);
    if (base.classic !== null) fail(ErrorCode.UNKNOWN_MEMBER_ID, `Member ${memberId} uses the classic protocol.`);
    checkEpoch(base, req);
    if (base.instanceId !== null && req.instanceId !== null && base.instanceId !== req.instanceId) {
      fail(ErrorCode.FENCED_INSTANCE_ID, `Member ${memberId} is static member ${base.instanceId}, not ${req.instanceId}.`);
    }
  }

  const names = req.subscribedTopicNames;
  const regex = req.subscribedTopicRegex;
  const updated: ConsumerMember = {
    ...base,
    instanceId: req.instanceId ?? base.instanceId,
    rackId: req.rackId ?? base.rackId,
    clientId: req.clientId,
    clientHost: req.clientHost,
    rebalanceTimeoutMs: req.rebalanceTimeoutMs !== -1 ? req.rebalanceTimeoutMs : base.rebalanceTimeoutMs,
    subscribedTopicNames: names ?? (regex !== null ? [] : base.subscribedTopicNames),
    subscribedTopicRegex: regex ?? (names !== null ? null : base.subscribedTopicRegex),
    serverAssignor: req.serverAssignor ?? base.serverAssignor,
    // A classic member joining with ConsumerGroupHeartbeat now speaks the consumer protocol.
    classic: null,
  };

  const owned = req.topicPartitions === null ? null : assignmentFrom(req.topicPartitions);
  const reconciled = updateMember(shard, { group: g, base, updated, replaced, isNew, owned }, records, now);

  scheduleSession(shard, g.groupId, memberId);
  syncRevocationTimer(shard, g.groupId, base, reconciled);
  const full = req.rebalanceTimeoutMs !== -1 && (names !== null || regex !== null) && req.topicPartitions !== null;
  const send = joining || full || !assignmentsEqual(base.assigned, reconciled.assigned);
  return { records, response: reply(shard, g.groupId, memberId, reconciled.memberEpoch, send ? reconciled.assigned : null) };
}

/**
 * A heartbeat's epoch must be the member's, or its previous one when the response that moved
 * it on was lost (then the member owns no more than it is assigned).
 */
function checkEpoch(m: ConsumerMember, req: ConsumerHeartbeatRequest): void {
  const fenced = (msg: string) =>
    fail(
      ErrorCode.FENCED_MEMBER_EPOCH,
      `The consumer group member has a ${msg} member epoch (${req.memberEpoch}) than the one known by the group coordinator (${m.memberEpoch}). The member must abandon all its partitions and rejoin.`,
    );
  if (req.memberEpoch > m.memberEpoch) fenced('greater');
  if (req.memberEpoch < m.memberEpoch) {
    const owned = req.topicPartitions === null ? null : assignmentFrom(req.topicPartitions);
    if (req.memberEpoch !== m.previousMemberEpoch || owned === null || !isSubset(owned, m.assigned)) fenced('smaller');
  }
  if (m.state === MemberState.UNKNOWN) fenced('different');
}

function isSubset(a: Assignment, b: Assignment): boolean {
  for (const [t, ps] of a) {
    const q = b.get(t);
    if (!q || ps.some((p) => !q.includes(p))) return false;
  }
  return true;
}
