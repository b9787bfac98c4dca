import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import {
  cooperativeStickyAssignor,
  rangeAssignor,
  roundRobinAssignor,
  type GroupAssignment,
  type MemberSubscription,
} from '../../src/client/group/assignors.js';

const member = (memberId: string, topics: string[], owned: Record<string, number[]> = {}, generation = -1): MemberSubscription => ({
  memberId,
  topics,
  ownedPartitions: new Map(Object.entries(owned)),
  generation,
});

const plain = (a: GroupAssignment) => Object.fromEntries([...a].map(([m, t]) => [m, Object.fromEntries(t)]));

test('range gives contiguous ranges per topic, the first members one extra', () => {
  const a = rangeAssignor.assign([member('c2', ['t']), member('c1', ['t'])], new Map([['t', 5]]));
  assert.deepEqual(plain(a), { c2: { t: [3, 4] }, c1: { t: [0, 1, 2] } });
});

test('roundrobin deals partitions of all topics in turn', () => {
  const a = roundRobinAssignor.assign(
    [member('a', ['x', 'y']), member('b', ['x', 'y'])],
    new Map([
      ['x', 3],
      ['y', 2],
    ]),
  );
  assert.deepEqual(plain(a), { a: { x: [0, 2], y: [1] }, b: { x: [1], y: [0] } });
});

test('cooperative-sticky keeps owned partitions and withholds the ones that move', () => {
  // b joins a group where a owned everything: a keeps half, the other half is withheld this round.
  const first = cooperativeStickyAssignor.assign([member('a', ['t'], { t: [0, 1, 2, 3] }, 1), member('b', ['t'])], new Map([['t', 4]]));
  assert.equal(first.get('a')!.get('t')!.length, 2);
  assert.equal(first.get('b')!.get('t'), undefined);
  // Next round a owns only its two: b gets the other two.
  const kept = first.get('a')!.get('t')!;
  const second = cooperativeStickyAssignor.assign([member('a', ['t'], { t: kept }, 2), member('b', ['t'], {}, 2)], new Map([['t', 4]]));
  assert.deepEqual(second.get('a')!.get('t'), kept);
  assert.deepEqual(second.get('b')!.get('t')!.length, 2);
});

test('every assignor assigns each partition at most once and only to subscribers (property)', () => {
  fc.assert(
    fc.property(fc.integer({ min: 1, max: 6 }), fc.array(fc.integer({ min: 0, max: 8 }), { minLength: 1, maxLength: 3 }), (nMembers, counts) => {
      const topics = counts.map((_, i) => `t${i}`);
      const members = Array.from({ length: nMembers }, (_, i) =>
        member(
          `m${i}`,
          topics.filter((_, j) => (i + j) % 2 === 0 || nMembers === 1),
        ),
      );
      const parts = new Map(topics.map((t, i) => [t, counts[i]!]));
      for (const assignor of [rangeAssignor, roundRobinAssignor, cooperativeStickyAssignor]) {
        const seen = new Set<string>();
        for (const [m, byTopic] of assignor.assign(members, parts)) {
          for (const [t, ps] of byTopic) {
            assert.ok(members.find((x) => x.memberId === m)!.topics.includes(t));
            for (const p of ps) {
              assert.ok(!seen.has(`${t}:${p}`), `${assignor.name} assigned ${t}:${p} twice`);
              seen.add(`${t}:${p}`);
            }
          }
        }
        const subscribed = topics.filter((t) => members.some((m) => m.topics.includes(t)));
        assert.equal(
          seen.size,
          subscribed.reduce((n, t) => n + parts.get(t)!, 0),
          `${assignor.name} left partitions out`,
        );
      }
    }),
  );
});
