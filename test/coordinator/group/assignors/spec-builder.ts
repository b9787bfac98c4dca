/** Builds AssignmentSpecs for the assignor tests, and checks the invariants every target must keep. */
import assert from 'node:assert/strict';
import type { AssignmentSpec, AssignorMember, AssignorTopic, TargetAssignment } from '../../../../src/coordinator/group/assignors/types.js';

export interface MemberInput {
  id: string;
  topics: string[];
  rack?: string | null;
  current?: Record<string, number[]>;
}

export function topic(topicId: string, partitionCount: number, racks?: (p: number) => string[]): AssignorTopic {
  return { topicId, name: `name-${topicId}`, partitionCount, partitionRacks: (p) => (racks ? racks(p) : []) };
}

export function member(input: MemberInput): AssignorMember {
  return {
    memberId: input.id,
    instanceId: null,
    rackId: input.rack ?? null,
    subscribedTopicIds: new Set(input.topics),
    currentTarget: new Map(Object.entries(input.current ?? {})),
  };
}

export function spec(members: AssignorMember[], topics: AssignorTopic[]): AssignmentSpec {
  const first = members[0];
  const homogeneous = members.every(
    (m) => m.subscribedTopicIds.size === first!.subscribedTopicIds.size && [...m.subscribedTopicIds].every((t) => first!.subscribedTopicIds.has(t)),
  );
  return {
    members: new Map(members.map((m) => [m.memberId, m])),
    topics: new Map(topics.map((t) => [t.topicId, t])),
    subscriptionType: homogeneous ? 'homogeneous' : 'heterogeneous',
  };
}

/** The spec again with each member's previous target set to `target` (its members only). */
export function withTargets(s: AssignmentSpec, target: TargetAssignment): AssignmentSpec {
  const members = [...s.members.values()].map((m) => ({ ...m, currentTarget: target.get(m.memberId) ?? new Map<string, number[]>() }));
  return { ...s, members: new Map(members.map((m) => [m.memberId, m])) };
}

/** Partition key -> owning member, asserting no partition is assigned twice. */
export function owners(target: TargetAssignment): Map<string, string> {
  const out = new Map<string, string>();
  for (const [memberId, byTopic] of target) {
    for (const [topicId, partitions] of byTopic) {
      for (const p of partitions) {
        const key = `${topicId}-${p}`;
        assert.equal(out.get(key), undefined, `${key} assigned to ${out.get(key)} and ${memberId}`);
        out.set(key, memberId);
      }
    }
  }
  return out;
}

/** Every subscribed partition exactly once, only to a subscriber, every member present. */
export function assertValid(s: AssignmentSpec, target: TargetAssignment): Map<string, string> {
  assert.deepEqual(new Set(target.keys()), new Set(s.members.keys()));
  const o = owners(target);
  const subscribed = new Set<string>();
  for (const m of s.members.values()) for (const t of m.subscribedTopicIds) subscribed.add(t);
  const expected = new Set<string>();
  for (const t of subscribed) {
    const topicSpec = s.topics.get(t);
    if (topicSpec) for (let p = 0; p < topicSpec.partitionCount; p++) expected.add(`${t}-${p}`);
  }
  // Sizes and membership: deepEqual over two 10,000-entry Sets takes seconds.
  assert.equal(o.size, expected.size, 'every subscribed partition assigned');
  for (const key of expected) assert.ok(o.has(key), `${key} unassigned`);
  for (const [key, memberId] of o) {
    const topicId = key.slice(0, key.lastIndexOf('-'));
    assert.ok(s.members.get(memberId)!.subscribedTopicIds.has(topicId), `${key} given to ${memberId}, not a subscriber`);
  }
  return o;
}

export function countOf(target: TargetAssignment, memberId: string, topicId?: string): number {
  let n = 0;
  for (const [t, ps] of target.get(memberId) ?? []) if (topicId === undefined || t === topicId) n += ps.length;
  return n;
}

/** How many partitions changed owner between two targets (a partition new in `after` counts too). */
export function moved(before: TargetAssignment, after: TargetAssignment): number {
  const a = owners(before);
  let n = 0;
  for (const [key, owner] of owners(after)) if (a.get(key) !== owner) n++;
  return n;
}
