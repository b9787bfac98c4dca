/**
 * Incremental reconciliation of one member towards its target assignment (KIP-848), as Kafka
 * 4's CurrentAssignmentBuilder: partitions leaving the member are revoked first, and the member
 * stays at its epoch (UNREVOKED_PARTITIONS) until it says it no longer owns them; partitions
 * joining it are given only once no other member holds them (else UNRELEASED_PARTITIONS), so a
 * partition is never owned by two members. A member reaches the target epoch once nothing is
 * left to revoke.
 */
import { type Assignment, type ConsumerMember, MemberState } from './member.js';

export interface ReconcileInput {
  readonly member: ConsumerMember;
  readonly targetEpoch: number;
  readonly target: Assignment;
  /** The epoch of the member holding a partition, -1 when free. */
  readonly partitionEpoch: (topicId: string, partition: number) => number;
  /** What the member says it owns in this heartbeat; null: not said (unchanged). */
  readonly owned: Assignment | null;
}

export function reconcile(input: ReconcileInput): ConsumerMember {
  const { member, targetEpoch } = input;
  switch (member.state) {
    case MemberState.STABLE:
      return member.memberEpoch === targetEpoch ? member : nextAssignment(input, member.memberEpoch);
    case MemberState.UNREVOKED_PARTITIONS:
      if (ownsAnyOf(input.owned, member.pendingRevocation)) return member;
      // Revoked: it moves to the next epoch (not past the target) and on towards the target.
      return nextAssignment(input, Math.min(member.memberEpoch + 1, targetEpoch));
    case MemberState.UNRELEASED_PARTITIONS:
      return nextAssignment(input, member.memberEpoch);
    default:
      return member;
  }
}

/** Whether the member may still own one of `partitions`: it did not say, or says it does. */
function ownsAnyOf(owned: Assignment | null, partitions: Assignment): boolean {
  if (owned === null) return true;
  for (const [topicId, ps] of partitions) {
    const o = owned.get(topicId);
    if (o && ps.some((p) => o.includes(p))) return true;
  }
  return false;
}

function nextAssignment(input: ReconcileInput, memberEpoch: number): ConsumerMember {
  const { member, target, targetEpoch } = input;
  const current = member.assigned;
  const keep = new Map<string, number[]>();
  const revoke = new Map<string, number[]>();
  const gain = new Map<string, number[]>();
  let unreleased = false;
  for (const topicId of new Set([...target.keys(), ...current.keys()])) {
    const t = new Set(target.get(topicId) ?? []);
    const c = current.get(topicId) ?? [];
    const kept = c.filter((p) => t.has(p));
    const revoked = c.filter((p) => !t.has(p));
    const keptSet = new Set(kept);
    const wanted: number[] = [];
    for (const p of t) {
      if (keptSet.has(p)) continue;
      // Still held by another member (assigned, or being revoked): it must let it go first.
      if (input.partitionEpoch(topicId, p) !== -1) unreleased = true;
      else wanted.push(p);
    }
    if (kept.length > 0) keep.set(topicId, kept);
    if (revoked.length > 0) revoke.set(topicId, revoked);
    if (wanted.length > 0) gain.set(topicId, wanted);
  }
  if (revoke.size > 0 && ownsAnyOf(input.owned, revoke)) {
    return withAssignment(member, MemberState.UNREVOKED_PARTITIONS, memberEpoch, keep, revoke);
  }
  for (const [topicId, ps] of gain) keep.set(topicId, [...(keep.get(topicId) ?? []), ...ps]);
  return withAssignment(member, unreleased ? MemberState.UNRELEASED_PARTITIONS : MemberState.STABLE, targetEpoch, keep, new Map());
}

function withAssignment(
  m: ConsumerMember,
  state: ConsumerMember['state'],
  epoch: number,
  assigned: Map<string, number[]>,
  pendingRevocation: Map<string, number[]>,
): ConsumerMember {
  for (const a of [assigned, pendingRevocation])
    for (const [t, ps] of a)
      a.set(
        t,
        ps.sort((x, y) => x - y),
      );
  return {
    ...m,
    state,
    previousMemberEpoch: epoch === m.memberEpoch ? m.previousMemberEpoch : m.memberEpoch,
    memberEpoch: epoch,
    assigned,
    pendingRevocation,
  };
}
