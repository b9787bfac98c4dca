/**
 * The classic rebalance protocol's transitions, shared by JoinGroup, LeaveGroup and the timers:
 * entering PreparingRebalance, completing the join phase (new generation, protocol vote, join
 * responses), member removal, and the session / join / sync timers.
 */
import { ErrorCode } from '../../protocol/errors.js';
import type { CoordinatorRecord } from './records.js';
import { joinError, syncError, type ClassicGroup, type ClassicMember, type JoinOutcome } from './classic-group.js';
import type { GroupShardState } from './group-shard-state.js';

type Out = CoordinatorRecord[];

const joinTimerKey = (g: ClassicGroup): string => `join:${g.groupId}`;
const syncTimerKey = (g: ClassicGroup): string => `sync:${g.groupId}`;
export const sessionTimerKey = (groupId: string, memberId: string): string => `session:${groupId}:${memberId}`;

/** Restarts a member's session timer (a heartbeat, a join, a commit all count as liveness). */
export function scheduleSessionTimeout(shard: GroupShardState, g: ClassicGroup, m: ClassicMember): void {
  shard.ctx.scheduleTimer(sessionTimerKey(g.groupId, m.memberId), m.sessionTimeoutMs, (now) => {
    const out: Out = [];
    const current = shard.groups.get(g.groupId);
    const member = current?.members.get(m.memberId);
    if (current && member === m) {
      // A member parked in JoinGroup or SyncGroup is alive: the client is waiting on us.
      if (m.joinWaiter !== null || m.syncWaiter !== null) scheduleSessionTimeout(shard, current, m);
      else {
        shard.logger.info(
          { group: g.groupId, memberId: m.memberId, sessionTimeoutMs: m.sessionTimeoutMs, generation: current.generationId },
          `member ${m.memberId} of group ${g.groupId} expired: no heartbeat within its session timeout (${m.sessionTimeoutMs} ms); removing it`,
        );
        removeMemberAndRebalance(shard, current, m, now, out, `member ${m.memberId} expired`);
      }
    }
    return { records: out, response: undefined };
  });
}

/** A member id handed out with MEMBER_ID_REQUIRED must rejoin within its session timeout. */
export function schedulePendingMemberTimeout(shard: GroupShardState, g: ClassicGroup, memberId: string, sessionTimeoutMs: number): void {
  shard.ctx.scheduleTimer(sessionTimerKey(g.groupId, memberId), sessionTimeoutMs, (now) => {
    const out: Out = [];
    if (g.pendingMembers.delete(memberId) && shard.groups.get(g.groupId) === g && g.is('PreparingRebalance')) {
      tryCompleteJoin(shard, g, now, out);
    }
    return { records: out, response: undefined };
  });
}

export function removeMemberAndRebalance(shard: GroupShardState, g: ClassicGroup, m: ClassicMember, now: number, out: Out, reason: string): void {
  shard.ctx.cancelTimer(sessionTimerKey(g.groupId, m.memberId));
  g.removeMember(m.memberId);
  m.joinWaiter?.(joinError(ErrorCode.UNKNOWN_MEMBER_ID, m.memberId));
  m.syncWaiter?.(syncError(ErrorCode.UNKNOWN_MEMBER_ID));
  m.joinWaiter = null;
  m.syncWaiter = null;
  if (g.is('Stable', 'CompletingRebalance')) prepareRebalance(shard, g, now, out, reason);
  else if (g.is('PreparingRebalance')) tryCompleteJoin(shard, g, now, out);
}

/** Fails the members waiting for an assignment and forgets the assignments of the generation. */
function resetAssignments(g: ClassicGroup, errorCode: number): void {
  for (const m of g.members.values()) {
    m.assignment = Buffer.alloc(0);
    m.syncWaiter?.(syncError(errorCode));
    m.syncWaiter = null;
  }
}

export function prepareRebalance(shard: GroupShardState, g: ClassicGroup, now: number, out: Out, reason: string): void {
  shard.logger.info(
    { group: g.groupId, state: g.state, generation: g.generationId, members: g.members.size, reason },
    `preparing to rebalance group ${g.groupId} in state ${g.state} with old generation ${g.generationId} (reason: ${reason})`,
  );
  g.rebalanceStartedAt = now;
  if (g.is('CompletingRebalance')) resetAssignments(g, ErrorCode.REBALANCE_IN_PROGRESS);
  shard.ctx.cancelTimer(syncTimerKey(g));
  g.pendingSync.clear();
  const fromEmpty = g.is('Empty');
  g.transitionTo('PreparingRebalance', now);
  const delay = shard.config.initialRebalanceDelayMs;
  if (fromEmpty && delay > 0) {
    g.initialDelayRemainingMs = Math.max(g.rebalanceTimeoutMs() - delay, 0);
    g.newMemberAdded = false;
    scheduleInitialDelay(shard, g, delay);
    return;
  }
  g.initialDelayRemainingMs = 0;
  shard.ctx.scheduleTimer(joinTimerKey(g), g.rebalanceTimeoutMs(), (t) => {
    const o: Out = [];
    if (shard.groups.get(g.groupId) === g) completeJoin(shard, g, t, o);
    return { records: o, response: undefined };
  });
  tryCompleteJoin(shard, g, now, out);
}

/** group.initial.rebalance.delay.ms: wait for more members, extending while they keep coming. */
function scheduleInitialDelay(shard: GroupShardState, g: ClassicGroup, delayMs: number): void {
  g.initialDelayActive = true;
  shard.ctx.scheduleTimer(joinTimerKey(g), delayMs, (t) => {
    const o: Out = [];
    if (shard.groups.get(g.groupId) !== g || !g.is('PreparingRebalance')) return { records: o, response: undefined };
    if (g.newMemberAdded && g.initialDelayRemainingMs > 0) {
      const next = Math.min(shard.config.initialRebalanceDelayMs, g.initialDelayRemainingMs);
      g.initialDelayRemainingMs -= next;
      g.newMemberAdded = false;
      scheduleInitialDelay(shard, g, next);
    } else {
      g.initialDelayActive = false;
      completeJoin(shard, g, t, o);
    }
    return { records: o, response: undefined };
  });
}

export function tryCompleteJoin(shard: GroupShardState, g: ClassicGroup, now: number, out: Out): void {
  if (!g.is('PreparingRebalance') || g.initialDelayActive) return;
  if (!g.hasAllMembersJoined()) return;
  shard.ctx.cancelTimer(joinTimerKey(g));
  completeJoin(shard, g, now, out);
}

/** Ends the join phase: drops members that did not rejoin, starts the next generation, answers joins. */
export function completeJoin(shard: GroupShardState, g: ClassicGroup, now: number, out: Out): void {
  if (!g.is('PreparingRebalance')) return;
  shard.ctx.cancelTimer(joinTimerKey(g));
  for (const m of [...g.members.values()]) {
    if (m.joinWaiter === null) {
      shard.ctx.cancelTimer(sessionTimerKey(g.groupId, m.memberId));
      g.removeMember(m.memberId);
    }
  }
  for (const id of g.pendingMembers) shard.ctx.cancelTimer(sessionTimerKey(g.groupId, id));
  g.pendingMembers.clear();
  g.generationId += 1;
  const durationMs = g.rebalanceStartedAt === null ? 0 : Math.max(0, now - g.rebalanceStartedAt);
  g.rebalanceStartedAt = null;
  if (g.isEmpty) {
    g.protocolName = null;
    g.leaderId = null;
    g.transitionTo('Empty', now);
    out.push(shard.groupRecord(g));
    shard.logger.info(
      { group: g.groupId, generation: g.generationId, members: 0, durationMs },
      `rebalance of group ${g.groupId} completed in ${durationMs} ms: generation ${g.generationId} is Empty (no members left)`,
    );
    return;
  }
  g.protocolName = g.selectProtocol();
  g.transitionTo('CompletingRebalance', now);
  shard.logger.info(
    { group: g.groupId, generation: g.generationId, members: g.members.size, protocol: g.protocolName, durationMs },
    `rebalance of group ${g.groupId} completed in ${durationMs} ms: generation ${g.generationId} with ${g.members.size} member(s), protocol ${g.protocolName}`,
  );
  const leader = g.leaderId ?? g.members.keys().next().value!;
  g.leaderId = leader;
  const allMembers = [...g.members.values()].map((m) => ({ memberId: m.memberId, groupInstanceId: m.groupInstanceId, metadata: g.metadataFor(m) }));
  for (const m of g.members.values()) {
    g.pendingSync.add(m.memberId);
    const outcome: JoinOutcome = {
      errorCode: ErrorCode.NONE,
      generationId: g.generationId,
      protocolType: g.protocolType,
      protocolName: g.protocolName,
      leader,
      memberId: m.memberId,
      skipAssignment: false,
      members: m.memberId === leader ? allMembers : [],
    };
    m.isNew = false;
    const waiter = m.joinWaiter;
    m.joinWaiter = null;
    waiter?.(outcome);
    scheduleSessionTimeout(shard, g, m);
  }
  const generation = g.generationId;
  // Members that never send SyncGroup are removed after the rebalance timeout, so one dead
  // member cannot hold the group in CompletingRebalance forever.
  shard.ctx.scheduleTimer(syncTimerKey(g), g.rebalanceTimeoutMs(), (t) => {
    const o: Out = [];
    if (shard.groups.get(g.groupId) === g && g.is('CompletingRebalance') && g.generationId === generation) {
      for (const id of [...g.pendingSync]) {
        const m = g.members.get(id);
        if (m) {
          shard.ctx.cancelTimer(sessionTimerKey(g.groupId, id));
          g.removeMember(id);
          m.syncWaiter?.(syncError(ErrorCode.UNKNOWN_MEMBER_ID));
        }
      }
      prepareRebalance(shard, g, t, o, 'members did not send SyncGroup within the rebalance timeout');
    }
    return { records: o, response: undefined };
  });
}

export function cancelSyncTimer(shard: GroupShardState, g: ClassicGroup): void {
  shard.ctx.cancelTimer(syncTimerKey(g));
}
