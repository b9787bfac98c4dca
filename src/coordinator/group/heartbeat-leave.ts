/**
 * Heartbeat and LeaveGroup: liveness of members and their orderly departure.
 */
import { ErrorCode } from '../../protocol/errors.js';
import type { OperationResult } from '../runtime/types.js';
import type { GroupShardState } from './group-shard-state.js';
import type { CoordinatorRecord } from './records.js';
import { removeMemberAndRebalance, scheduleSessionTimeout, sessionTimerKey, tryCompleteJoin } from './rebalance.js';
import { UNKNOWN_MEMBER_ID, checkMember } from './validation.js';

type Result<T> = OperationResult<T, CoordinatorRecord>;

export interface HeartbeatRequest {
  groupId: string;
  generationId: number;
  memberId: string;
  groupInstanceId: string | null;
}

export function heartbeat(shard: GroupShardState, req: HeartbeatRequest): Result<number> {
  const done = (code: number): Result<number> => ({ records: [], response: code });
  const g = shard.groups.get(req.groupId);
  if (!g) return done(ErrorCode.UNKNOWN_MEMBER_ID);
  if (g.is('Dead')) return done(ErrorCode.COORDINATOR_NOT_AVAILABLE);
  const checked = checkMember(g, req.memberId, req.groupInstanceId);
  if (typeof checked === 'number') return done(checked);
  if (g.is('Empty')) return done(ErrorCode.UNKNOWN_MEMBER_ID);
  if (req.generationId !== g.generationId) return done(ErrorCode.ILLEGAL_GENERATION);
  scheduleSessionTimeout(shard, g, checked);
  // Telling members about the rebalance through heartbeats is how they learn to rejoin.
  return done(g.is('PreparingRebalance') ? ErrorCode.REBALANCE_IN_PROGRESS : ErrorCode.NONE);
}

export interface LeavingMember {
  memberId: string;
  groupInstanceId: string | null;
}

export interface LeaveResult {
  errorCode: number;
  members: { memberId: string; groupInstanceId: string | null; errorCode: number }[];
}

export function leaveGroup(shard: GroupShardState, groupId: string, leaving: LeavingMember[], now: number): Result<LeaveResult> {
  const g = shard.groups.get(groupId);
  if (!g) return { records: [], response: { errorCode: ErrorCode.UNKNOWN_MEMBER_ID, members: [] } };
  if (g.is('Dead')) return { records: [], response: { errorCode: ErrorCode.COORDINATOR_NOT_AVAILABLE, members: [] } };
  const out: CoordinatorRecord[] = [];
  const results: LeaveResult['members'] = [];
  for (const l of leaving) {
    const code = leaveOne(shard, g, l, now, out);
    results.push({ memberId: l.memberId, groupInstanceId: l.groupInstanceId, errorCode: code });
  }
  return { records: out, response: { errorCode: ErrorCode.NONE, members: results } };
}

function leaveOne(
  shard: GroupShardState,
  g: NonNullable<ReturnType<GroupShardState['groups']['get']>>,
  l: LeavingMember,
  now: number,
  out: CoordinatorRecord[],
): number {
  if (l.groupInstanceId !== null) {
    // A static member may leave by instance id alone (the admin client's removeMembersFromGroup).
    const registered = g.staticMembers.get(l.groupInstanceId);
    if (registered === undefined) return ErrorCode.UNKNOWN_MEMBER_ID;
    if (l.memberId !== UNKNOWN_MEMBER_ID && l.memberId !== registered) return ErrorCode.FENCED_INSTANCE_ID;
    removeMemberAndRebalance(shard, g, g.members.get(registered)!, now, out, `static member ${registered} left the group`);
    return ErrorCode.NONE;
  }
  if (g.pendingMembers.delete(l.memberId)) {
    shard.ctx.cancelTimer(sessionTimerKey(g.groupId, l.memberId));
    if (g.is('PreparingRebalance')) tryCompleteJoin(shard, g, now, out);
    return ErrorCode.NONE;
  }
  const checked = checkMember(g, l.memberId, null);
  if (typeof checked === 'number') return checked;
  removeMemberAndRebalance(shard, g, checked, now, out, `member ${checked.memberId} left the group`);
  return ErrorCode.NONE;
}
