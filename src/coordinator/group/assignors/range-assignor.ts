/**
 * Kafka 4's `range` server-side assignor (RangeAssignor for KIP-848), topic by topic: the
 * topic's subscribers in member-id order share its partitions, floor(P/n) each and one more for
 * the first P mod n, in contiguous ranges. Topics with the same partition count and the same
 * subscribers come out alike (member k gets the same partition numbers of each: co-partitioning,
 * for joins), because each topic's result depends only on those and on the previous targets.
 * Sticky: a member keeps its previous partitions of the topic up to its quota (the lowest
 * numbers first, so co-partitioned topics stay aligned). Rack-aware where members and replicas
 * have racks: a member short of its quota first takes partitions with a replica in its rack.
 */
import { handOut, keepPrevious, stillFree } from './hand-out.js';
import { PartitionSpace, RackMatch, ascendingUnique, membersInOrder, subscribedTopics } from './partition-space.js';
import type { AssignmentSpec, ServerAssignor, TargetAssignment } from './types.js';

export const RANGE_ASSIGNOR_NAME = 'range';

export class RangeAssignor implements ServerAssignor {
  readonly name = RANGE_ASSIGNOR_NAME;

  assign(spec: AssignmentSpec): TargetAssignment {
    const members = membersInOrder(spec);
    const space = new PartitionSpace(subscribedTopics(spec, members));
    const n = members.length;
    const owner = new Int32Array(space.size).fill(-1);
    const racks = RackMatch.of(space, members);
    const counts = new Int32Array(n);
    const need = new Int32Array(n);
    const tookExtra = new Uint8Array(n);
    space.topics.forEach((topic, t) => {
      const first = space.first[t]!;
      const size = space.first[t + 1]! - first;
      const subs: number[] = [];
      members.forEach((m, ordinal) => m.subscribedTopicIds.has(topic.topicId) && subs.push(ordinal));
      if (subs.length === 0) return;
      counts.fill(0);
      need.fill(0);
      tookExtra.fill(0);
      const quota = Math.floor(size / subs.length);
      let extras = size % subs.length;
      for (const m of subs) {
        const previous = previousPartitions(members[m]!.currentTarget.get(topic.topicId), first, size);
        let limit = quota;
        if (extras > 0 && stillFree(previous, owner) > quota) {
          limit++;
          extras--;
          tookExtra[m] = 1;
        }
        keepPrevious(m, previous, limit, owner, counts, racks);
      }
      for (const m of subs) need[m] = Math.max(0, quota - counts[m]!);
      for (const m of subs) {
        if (extras === 0) break;
        if (tookExtra[m]) continue;
        need[m]!++;
        extras--;
      }
      const pool: number[] = [];
      for (let i = first; i < first + size; i++) if (owner[i]! < 0) pool.push(i);
      handOut(pool, need, owner, counts, racks);
    });
    return space.toTarget(members, owner);
  }
}

/** A member's previous partitions of one topic as flat indices, ascending, once each, those that still exist. */
function previousPartitions(partitions: readonly number[] | undefined, first: number, size: number): number[] {
  if (!partitions) return [];
  const out: number[] = [];
  for (const p of partitions) if (Number.isInteger(p) && p >= 0 && p < size) out.push(first + p);
  return ascendingUnique(out);
}
