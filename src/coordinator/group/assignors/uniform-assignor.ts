/**
 * Kafka 4's `uniform` server-side assignor (UniformAssignor): every member gets as many
 * partitions as the others, within one, across all the topics it subscribes to; a member keeps
 * what it had as far as balance allows (the coordinator revokes only what must move); where
 * members and partitions' replicas have racks, a moving partition prefers a member in one of its
 * replicas' racks, never at the cost of balance. Two paths, as Kafka's: homogeneous
 * subscriptions (quotas known up front: linear in partitions plus members) and heterogeneous
 * ones (uniform-heterogeneous.ts).
 */
import { handOut, keepPrevious, stillFree } from './hand-out.js';
import { PartitionSpace, RackMatch, isHomogeneous, membersInOrder, subscribedTopics } from './partition-space.js';
import type { AssignmentSpec, AssignorMember, ServerAssignor, TargetAssignment } from './types.js';
import { assignHeterogeneous } from './uniform-heterogeneous.js';

export const UNIFORM_ASSIGNOR_NAME = 'uniform';

export class UniformAssignor implements ServerAssignor {
  readonly name = UNIFORM_ASSIGNOR_NAME;

  assign(spec: AssignmentSpec): TargetAssignment {
    const members = membersInOrder(spec);
    // The spec's flag is a hint; a wrong one must not hand a partition to a non-subscriber.
    return isHomogeneous(members) ? assignHomogeneous(spec, members) : assignHeterogeneous(spec, members);
  }
}

/**
 * Every member subscribes to the same P partitions: each gets floor(P/N), and P mod N of them one
 * more. Members keep their previous partitions up to that quota (those with more than it take
 * the extra ones first, in member order), then the rest are handed to whoever is short.
 */
function assignHomogeneous(spec: AssignmentSpec, members: readonly AssignorMember[]): TargetAssignment {
  const space = new PartitionSpace(members.length === 0 ? [] : subscribedTopics(spec, [members[0]!]));
  const n = members.length;
  const owner = new Int32Array(space.size).fill(-1);
  const counts = new Int32Array(n);
  if (n === 0) return space.toTarget(members, owner);
  const quota = Math.floor(space.size / n);
  let extras = space.size % n;
  const racks = RackMatch.of(space, members);
  const tookExtra = new Uint8Array(n);
  for (let m = 0; m < n; m++) {
    const previous = space.previousOf(members[m]!, () => true);
    let limit = quota;
    if (extras > 0 && stillFree(previous, owner) > quota) {
      limit++;
      extras--;
      tookExtra[m] = 1;
    }
    keepPrevious(m, previous, limit, owner, counts, racks);
  }
  const need = new Int32Array(n);
  for (let m = 0; m < n; m++) need[m] = Math.max(0, quota - counts[m]!);
  for (let m = 0; m < n && extras > 0; m++) {
    if (tookExtra[m]) continue;
    need[m]!++;
    extras--;
  }
  const pool: number[] = [];
  for (let i = 0; i < space.size; i++) if (owner[i]! < 0) pool.push(i);
  handOut(pool, need, owner, counts, racks);
  return space.toTarget(members, owner);
}
