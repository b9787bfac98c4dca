/**
 * JoinGroup and SyncGroup of the classic protocol as coordinator operations. A join either
 * answers at once (errors, MEMBER_ID_REQUIRED, a no-op rejoin) or parks the member until the
 * join phase completes; the leader's SyncGroup writes the generation's GroupMetadata record and
 * every member gets its assignment once that record is durable.
 */
import { randomUUID } from 'node:crypto';
import { ErrorCode } from '../../protocol/errors.js';
import type { OperationResult } from '../runtime/types.js';
import { ClassicGroup, joinError, syncError, type ClassicMember, type JoinOutcome, type ProtocolOffer, type SyncOutcome } from './classic-group.js';
import type { GroupShardState } from './group-shard-state.js';
import type { CoordinatorRecord } from './records.js';
import { cancelSyncTimer, prepareRebalance, schedulePendingMemberTimeout, scheduleSessionTimeout, sessionTimerKey, tryCompleteJoin } from './rebalance.js';
import { UNKNOWN_MEMBER_ID, checkMember, protocolsEqual } from './validation.js';

type Result<T> = OperationResult<Promise<T>, CoordinatorRecord>;

export interface JoinRequest {
  groupId: string;
  memberId: string;
  groupInstanceId: string | null;
  sessionTimeoutMs: number;
  rebalanceTimeoutMs: number;
  protocolType: string;
  protocols: ProtocolOffer[];
  apiVersion: number;
  clientId: string;
  clientHost: string;
}

export interface SyncRequest {
  groupId: string;
  generationId: number;
  memberId: string;
  groupInstanceId: string | null;
  protocolType: string | null;
  protocolName: string | null;
  assignments: { memberId: string; assignment: Buffer }[];
}

const now_ = <T>(v: T): Promise<T> => Promise.resolve(v);
const joinNow = (o: JoinOutcome): Result<JoinOutcome> => ({ records: [], response: now_(o) });
const syncNow = (o: SyncOutcome): Result<SyncOutcome> => ({ records: [], response: now_(o) });

/** The answer a member gets when it rejoins a generation that already exists. */
function currentGeneration(g: ClassicGroup, m: ClassicMember, withMembers: boolean, skipAssignment = false): JoinOutcome {
  return {
    errorCode: ErrorCode.NONE,
    generationId: g.generationId,
    protocolType: g.protocolType,
    protocolName: g.protocolName,
    leader: g.leaderId ?? '',
    memberId: m.memberId,
    skipAssignment,
    members: withMembers ? [...g.members.values()].map((x) => ({ memberId: x.memberId, groupInstanceId: x.groupInstanceId, metadata: g.metadataFor(x) })) : [],
  };
}

function parkJoin(m: ClassicMember): Promise<JoinOutcome> {
  m.joinWaiter?.(joinError(ErrorCode.REBALANCE_IN_PROGRESS, m.memberId));
  return new Promise((resolve) => {
    m.joinWaiter = resolve;
  });
}

export function joinGroup(shard: GroupShardState, req: JoinRequest, now: number): Result<JoinOutcome> {
  const cfg = shard.config;
  if (req.groupId === '') return joinNow(joinError(ErrorCode.INVALID_GROUP_ID, req.memberId));
  if (req.sessionTimeoutMs < cfg.minSessionTimeoutMs || req.sessionTimeoutMs > cfg.maxSessionTimeoutMs) {
    return joinNow(joinError(ErrorCode.INVALID_SESSION_TIMEOUT, req.memberId));
  }
  const isUnknown = req.memberId === UNKNOWN_MEMBER_ID;
  let g = shard.groups.get(req.groupId);
  if (!g) {
    if (!isUnknown) return joinNow(joinError(ErrorCode.UNKNOWN_MEMBER_ID, req.memberId));
    g = new ClassicGroup(req.groupId, now);
    shard.groups.set(req.groupId, g);
  }
  if (g.is('Dead')) return joinNow(joinError(ErrorCode.COORDINATOR_NOT_AVAILABLE, req.memberId));
  if (!g.supportsProtocols(req.protocolType, req.protocols)) return joinNow(joinError(ErrorCode.INCONSISTENT_GROUP_PROTOCOL, req.memberId));
  const out: CoordinatorRecord[] = [];

  if (isUnknown) {
    const staticId = req.groupInstanceId !== null ? g.staticMembers.get(req.groupInstanceId) : undefined;
    if (staticId !== undefined) return replaceStaticMember(shard, g, g.members.get(staticId)!, req, now);
    if (g.members.size >= cfg.maxGroupSize) return joinNow(joinError(ErrorCode.GROUP_MAX_SIZE_REACHED, req.memberId));
    const memberId = `${req.clientId}-${randomUUID()}`;
    if (req.groupInstanceId === null && req.apiVersion >= 4) {
      // KIP-394: a new dynamic member first learns its id, then joins with it.
      g.pendingMembers.add(memberId);
      schedulePendingMemberTimeout(shard, g, memberId, req.sessionTimeoutMs);
      return joinNow(joinError(ErrorCode.MEMBER_ID_REQUIRED, memberId));
    }
    const response = addMemberAndRebalance(shard, g, req, memberId, now, out);
    return { records: out, response };
  }

  if (g.pendingMembers.has(req.memberId)) {
    if (g.members.size >= cfg.maxGroupSize) {
      g.pendingMembers.delete(req.memberId);
      return joinNow(joinError(ErrorCode.GROUP_MAX_SIZE_REACHED, req.memberId));
    }
    g.pendingMembers.delete(req.memberId);
    shard.ctx.cancelTimer(sessionTimerKey(g.groupId, req.memberId));
    const response = addMemberAndRebalance(shard, g, req, req.memberId, now, out);
    return { records: out, response };
  }

  const checked = checkMember(g, req.memberId, req.groupInstanceId);
  if (typeof checked === 'number') return joinNow(joinError(checked, req.memberId));
  const m = checked;
  const changed = !protocolsEqual(m.protocols, req.protocols);
  switch (g.state) {
    case 'PreparingRebalance': {
      updateMember(m, req);
      const response = parkJoin(m);
      scheduleSessionTimeout(shard, g, m);
      tryCompleteJoin(shard, g, now, out);
      return { records: out, response };
    }
    case 'CompletingRebalance':
    case 'Stable': {
      // A follower that lost its join response, or rejoins without changes, gets the generation back.
      const noop = g.is('CompletingRebalance') ? !changed : !changed && g.leaderId !== m.memberId;
      if (noop) {
        scheduleSessionTimeout(shard, g, m);
        return joinNow(currentGeneration(g, m, g.leaderId === m.memberId));
      }
      updateMember(m, req);
      const response = parkJoin(m);
      scheduleSessionTimeout(shard, g, m);
      prepareRebalance(shard, g, now, out, `member ${m.memberId} rejoined with new metadata`);
      return { records: out, response };
    }
    default:
      return joinNow(joinError(ErrorCode.UNKNOWN_MEMBER_ID, req.memberId));
  }
}

function updateMember(m: ClassicMember, req: JoinRequest): void {
  m.protocols = req.protocols;
  m.sessionTimeoutMs = req.sessionTimeoutMs;
  m.rebalanceTimeoutMs = req.rebalanceTimeoutMs;
  m.clientId = req.clientId;
  m.clientHost = req.clientHost;
}

function addMemberAndRebalance(
  shard: GroupShardState,
  g: ClassicGroup,
  req: JoinRequest,
  memberId: string,
  now: number,
  out: CoordinatorRecord[],
): Promise<JoinOutcome> {
  const m: ClassicMember = {
    memberId,
    groupInstanceId: req.groupInstanceId,
    clientId: req.clientId,
    clientHost: req.clientHost,
    rebalanceTimeoutMs: req.rebalanceTimeoutMs,
    sessionTimeoutMs: req.sessionTimeoutMs,
    protocolType: req.protocolType,
    protocols: req.protocols,
    assignment: Buffer.alloc(0),
    joinWaiter: null,
    syncWaiter: null,
    isNew: true,
  };
  g.addMember(m);
  const response = parkJoin(m);
  if (g.initialDelayActive) g.newMemberAdded = true;
  scheduleSessionTimeout(shard, g, m);
  if (g.is('PreparingRebalance')) tryCompleteJoin(shard, g, now, out);
  else prepareRebalance(shard, g, now, out, `new member ${memberId} joined`);
  return response;
}

/**
 * A static member came back with a new process (unknown member id, known instance id): it takes
 * over the old member's place and assignment. In a stable group nothing is rebalanced (KIP-345);
 * the new member id is persisted so a restarted coordinator knows it.
 */
function replaceStaticMember(shard: GroupShardState, g: ClassicGroup, old: ClassicMember, req: JoinRequest, now: number): Result<JoinOutcome> {
  const out: CoordinatorRecord[] = [];
  shard.ctx.cancelTimer(sessionTimerKey(g.groupId, old.memberId));
  old.joinWaiter?.(joinError(ErrorCode.FENCED_INSTANCE_ID, old.memberId));
  old.syncWaiter?.(syncError(ErrorCode.FENCED_INSTANCE_ID));
  const wasLeader = g.leaderId === old.memberId;
  const selectedBefore = g.metadataFor(old);
  g.removeMember(old.memberId);
  const m: ClassicMember = { ...old, memberId: `${req.clientId}-${randomUUID()}`, joinWaiter: null, syncWaiter: null };
  updateMember(m, req);
  g.addMember(m);
  if (wasLeader) g.leaderId = m.memberId;
  if (g.pendingSync.delete(old.memberId)) g.pendingSync.add(m.memberId);
  scheduleSessionTimeout(shard, g, m);
  const sameSubscription = g.protocolName !== null && g.metadataFor(m).equals(selectedBefore);
  if (g.is('Stable') && sameSubscription) {
    out.push(shard.groupRecord(g));
    // v9+ leaders are told to skip the assignment (KIP-814): the group keeps the old one.
    return { records: out, response: now_(currentGeneration(g, m, wasLeader, wasLeader && req.apiVersion >= 9)) };
  }
  const response = parkJoin(m);
  if (g.is('PreparingRebalance')) tryCompleteJoin(shard, g, now, out);
  else prepareRebalance(shard, g, now, out, `static member ${req.groupInstanceId ?? ''} rejoined with a new subscription`);
  return { records: out, response };
}

export function syncGroup(shard: GroupShardState, req: SyncRequest, _now: number): Result<SyncOutcome> {
  const g = shard.groups.get(req.groupId);
  if (!g) return syncNow(syncError(ErrorCode.UNKNOWN_MEMBER_ID));
  if (g.is('Dead')) return syncNow(syncError(ErrorCode.COORDINATOR_NOT_AVAILABLE));
  const checked = checkMember(g, req.memberId, req.groupInstanceId);
  if (typeof checked === 'number') return syncNow(syncError(checked));
  const m = checked;
  if (req.generationId !== g.generationId) return syncNow(syncError(ErrorCode.ILLEGAL_GENERATION));
  if ((req.protocolType !== null && req.protocolType !== g.protocolType) || (req.protocolName !== null && req.protocolName !== g.protocolName)) {
    return syncNow(syncError(ErrorCode.INCONSISTENT_GROUP_PROTOCOL));
  }
  scheduleSessionTimeout(shard, g, m);
  const ok = (assignment: Buffer): SyncOutcome => ({ errorCode: ErrorCode.NONE, protocolType: g.protocolType, protocolName: g.protocolName, assignment });
  switch (g.state) {
    case 'Empty':
      return syncNow(syncError(ErrorCode.UNKNOWN_MEMBER_ID));
    case 'PreparingRebalance':
      return syncNow(syncError(ErrorCode.REBALANCE_IN_PROGRESS));
    case 'Stable':
      return syncNow(ok(m.assignment));
    case 'CompletingRebalance':
      break;
    default:
      return syncNow(syncError(ErrorCode.UNKNOWN_MEMBER_ID));
  }
  m.syncWaiter?.(syncError(ErrorCode.REBALANCE_IN_PROGRESS));
  const response = new Promise<SyncOutcome>((resolve) => {
    m.syncWaiter = resolve;
  });
  g.pendingSync.delete(m.memberId);
  if (g.leaderId !== m.memberId) return { records: [], response };

  const given = new Map(req.assignments.map((a) => [a.memberId, a.assignment]));
  for (const member of g.members.values()) member.assignment = given.get(member.memberId) ?? Buffer.alloc(0);
  const generation = g.generationId;
  return {
    records: [shard.groupRecord(g)],
    response,
    onDurable: () => {
      if (shard.groups.get(g.groupId) !== g || g.generationId !== generation || !g.is('CompletingRebalance')) return;
      cancelSyncTimer(shard, g);
      g.transitionTo('Stable', shard.ctx.now());
      for (const member of g.members.values()) {
        const waiter = member.syncWaiter;
        member.syncWaiter = null;
        waiter?.(ok(member.assignment));
      }
    },
    onFailed: () => {
      if (shard.groups.get(g.groupId) !== g || g.generationId !== generation) return;
      for (const member of g.members.values()) {
        member.assignment = Buffer.alloc(0);
        member.syncWaiter?.(syncError(ErrorCode.COORDINATOR_NOT_AVAILABLE));
        member.syncWaiter = null;
      }
      if (g.is('CompletingRebalance')) prepareRebalance(shard, g, shard.ctx.now(), [], 'writing the assignment failed');
    },
  };
}
