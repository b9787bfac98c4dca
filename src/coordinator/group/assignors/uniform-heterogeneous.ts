/**
 * The uniform assignor's heterogeneous path (members subscribe to different topics), after
 * Kafka's: no quota fits every member, so members keep every previous partition they still
 * subscribe to, the partitions nobody has go to their least-loaded subscriber (the topics with
 * the fewest subscribers first: they have the fewest choices), then partitions move from a
 * member to a subscriber with at least two fewer until none can (each move lowers the sum of the
 * squared counts, so the loop ends; a member that joins takes from the most loaded first), and
 * last along chains of members where no single move helps (balance-chains.ts): the counts end as
 * even as the subscriptions allow.
 */
import { shiftAlongChains } from './balance-chains.js';
import { keepPrevious } from './hand-out.js';
import { PartitionSpace, RackMatch, subscribedTopics } from './partition-space.js';
import type { AssignmentSpec, AssignorMember, TargetAssignment } from './types.js';

export function assignHeterogeneous(spec: AssignmentSpec, members: readonly AssignorMember[]): TargetAssignment {
  const space = new PartitionSpace(subscribedTopics(spec, members));
  const owner = new Int32Array(space.size).fill(-1);
  const counts = new Int32Array(members.length);
  const subscribers: number[][] = space.topics.map(() => []);
  const memberTopics: number[][] = members.map(() => []);
  members.forEach((member, m) => {
    for (const id of member.subscribedTopicIds) {
      const t = space.ordinal(id);
      if (t === undefined) continue;
      subscribers[t]!.push(m);
      memberTopics[m]!.push(t);
    }
  });
  const racks = RackMatch.of(space, members);

  members.forEach((member, m) => {
    const previous = space.previousOf(member, (t) => member.subscribedTopicIds.has(space.topics[t]!.topicId));
    keepPrevious(m, previous, previous.length, owner, counts, racks);
  });

  /** The subscriber with the fewest partitions; on a tie one in the partition's rack, then the first. */
  const leastLoaded = (subs: readonly number[], i: number): number => {
    let best = -1;
    let bestInRack = false;
    for (const s of subs) {
      const c = counts[s]!;
      if (best < 0 || c < counts[best]!) {
        best = s;
        bestInRack = racks !== null && racks.matches(s, i);
      } else if (c === counts[best]! && racks !== null && !bestInRack && racks.matches(s, i)) {
        best = s;
        bestInRack = true;
      }
    }
    return best;
  };

  const topicOrder = space.topics.map((_, t) => t).sort((a, b) => subscribers[a]!.length - subscribers[b]!.length || a - b);
  for (const t of topicOrder) {
    for (let i = space.first[t]!; i < space.first[t + 1]!; i++) {
      if (owner[i]! >= 0) continue;
      const s = leastLoaded(subscribers[t]!, i);
      owner[i] = s;
      counts[s]!++;
    }
  }

  for (let moved = true; moved; ) {
    moved = false;
    // No move lowers the fewest partitions a subscriber has: a minimum taken before the pass
    // stays a lower bound through it, and skips the owners no subscriber can relieve.
    let lowest = Number.MAX_SAFE_INTEGER;
    for (let m = 0; m < members.length; m++) if (memberTopics[m]!.length > 0) lowest = Math.min(lowest, counts[m]!);
    for (const t of topicOrder) {
      const subs = subscribers[t]!;
      for (let i = space.first[t]!; i < space.first[t + 1]!; i++) {
        const from = owner[i]!;
        if (counts[from]! - lowest < 2) continue;
        const to = leastLoaded(subs, i);
        if (counts[from]! - counts[to]! < 2) continue;
        owner[i] = to;
        counts[from]!--;
        counts[to]!++;
        moved = true;
      }
    }
  }
  // What single moves cannot reach (a chain through a member of two topics).
  shiftAlongChains({ first: space.first, memberTopics, owner, counts });
  return space.toTarget(members, owner);
}
