import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import {
  DEFAULT_CONSUMER_GROUP_ASSIGNORS,
  RangeAssignor,
  UniformAssignor,
  assignorsByName,
  parseAssignorList,
  preferredAssignor,
} from '../../../../src/coordinator/group/assignors/index.js';
import { ConfigError } from '../../../../src/config/errors.js';
import type { AssignmentSpec, ServerAssignor } from '../../../../src/coordinator/group/assignors/types.js';
import { assertValid, countOf, member, moved, owners, spec, topic, withTargets } from './spec-builder.js';

const uniform = new UniformAssignor();
const range = new RangeAssignor();
const RACKS = ['r0', 'r1', 'r2'];

/** A group: 1-4 topics of 1-24 partitions, 1-9 members, random (even nonsensical) previous targets, maybe racks. */
const groupArb = (homogeneous: boolean) =>
  fc
    .record({
      partitionCounts: fc.array(fc.integer({ min: 1, max: 24 }), { minLength: 1, maxLength: 4 }),
      memberCount: fc.integer({ min: 1, max: 9 }),
      withRacks: fc.boolean(),
      seed: fc.integer(),
    })
    .chain(({ partitionCounts, memberCount, withRacks, seed }) =>
      fc
        .array(
          fc.record({
            subscription: fc.subarray(
              partitionCounts.map((_, t) => `t${t}`),
              { minLength: 1 },
            ),
            rack: fc.constantFrom<string | null>(null, ...RACKS),
            previous: fc.array(fc.tuple(fc.integer({ min: 0, max: partitionCounts.length }), fc.integer({ min: -1, max: 26 })), { maxLength: 12 }),
          }),
          { minLength: memberCount, maxLength: memberCount },
        )
        .map((raw) => {
          const topics = partitionCounts.map((n, t) => topic(`t${t}`, n, withRacks ? (p) => [RACKS[(p + t + seed) % 3]!, RACKS[(p + seed) % 2]!] : undefined));
          const members = raw.map((r, i) => {
            const current: Record<string, number[]> = {};
            for (const [t, p] of r.previous) (current[`t${t}`] ??= []).push(p);
            return member({
              id: `m${(i * 7919 + seed) % 1000}-${i}`,
              topics: homogeneous ? topics.map((t) => t.topicId) : r.subscription,
              rack: withRacks ? r.rack : null,
              current,
            });
          });
          return spec(members, topics);
        }),
    );

function reversed(s: AssignmentSpec): AssignmentSpec {
  return { ...s, members: new Map([...s.members].reverse()), topics: new Map([...s.topics].reverse()) };
}

for (const assignor of [uniform, range] as ServerAssignor[]) {
  test(`${assignor.name}: every subscribed partition exactly once, only to subscribers, whatever the previous targets`, () => {
    fc.assert(
      fc.property(fc.boolean().chain(groupArb), (s) => {
        assertValid(s, assignor.assign(s));
      }),
      { numRuns: 300 },
    );
  });

  test(`${assignor.name}: deterministic, whatever order the spec lists members and topics in`, () => {
    fc.assert(
      fc.property(fc.boolean().chain(groupArb), (s) => {
        const a = assignor.assign(s);
        assert.deepEqual(assignor.assign(reversed(s)), a);
        assert.deepEqual(assignor.assign(s), a);
      }),
      { numRuns: 150 },
    );
  });

  test(`${assignor.name}: a member joining a settled homogeneous group moves only the partitions it receives; one leaving moves only its own`, () => {
    fc.assert(
      fc.property(groupArb(true), (s0) => {
        const settled = withTargets(s0, assignor.assign(withTargets(s0, new Map())));
        const before = assignor.assign(settled);
        assert.equal(moved(before, assignor.assign(withTargets(settled, before))), 0, 'a settled group reassigned moves nothing');

        const topics = [...s0.topics.values()];
        const joined = spec([...settled.members.values(), member({ id: 'zz-new', topics: topics.map((t) => t.topicId) })], topics);
        const after = assignor.assign(withTargets(joined, before));
        assertValid(joined, after);
        assert.equal(moved(before, after), countOf(after, 'zz-new'));

        if (settled.members.size < 2) return;
        const leaving = [...settled.members.keys()][0]!;
        const left = spec(
          [...settled.members.values()].filter((m) => m.memberId !== leaving),
          topics,
        );
        const afterLeave = assignor.assign(withTargets(left, before));
        assertValid(left, afterLeave);
        assert.equal(moved(before, afterLeave), countOf(before, leaving));
      }),
      { numRuns: 200 },
    );
  });
}

test('uniform: homogeneous counts within one of each other, racks or not', () => {
  fc.assert(
    fc.property(groupArb(true), (s) => {
      const target = uniform.assign(s);
      const counts = [...s.members.keys()].map((m) => countOf(target, m));
      assert.ok(Math.max(...counts) - Math.min(...counts) <= 1, `counts ${counts}`);
    }),
    { numRuns: 300 },
  );
});

test('uniform: heterogeneous ends where no partition can move to a subscriber with two fewer', () => {
  fc.assert(
    fc.property(groupArb(false), (s) => {
      const target = uniform.assign(s);
      const total = new Map([...s.members.keys()].map((m) => [m, countOf(target, m)]));
      for (const [key, owner] of owners(target)) {
        const topicId = key.slice(0, key.lastIndexOf('-'));
        for (const other of s.members.values()) {
          if (other.subscribedTopicIds.has(topicId))
            assert.ok(total.get(owner)! - total.get(other.memberId)! < 2, `${key} of ${owner} could go to ${other.memberId}`);
        }
      }
    }),
    { numRuns: 300 },
  );
});

test('range: per topic, its subscribers within one of each other, and topics of equal size co-partitioned', () => {
  fc.assert(
    fc.property(groupArb(false), (s0) => {
      const s = withTargets(s0, new Map());
      const target = range.assign(s);
      for (const t of s.topics.values()) {
        const subs = [...s.members.values()].filter((m) => m.subscribedTopicIds.has(t.topicId)).map((m) => countOf(target, m.memberId, t.topicId));
        if (subs.length) assert.ok(Math.max(...subs) - Math.min(...subs) <= 1, `${t.topicId}: ${subs}`);
      }
    }),
    { numRuns: 300 },
  );
  const topics = [topic('a', 7), topic('b', 7), topic('c', 3)];
  const members = ['m1', 'm2', 'm3'].map((id) => member({ id, topics: ['a', 'b', 'c'] }));
  const target = range.assign(spec(members, topics));
  assert.deepEqual(
    target.get('m1'),
    new Map([
      ['a', [0, 1, 2]],
      ['b', [0, 1, 2]],
      ['c', [0]],
    ]),
  );
  assert.deepEqual(
    target.get('m2'),
    new Map([
      ['a', [3, 4]],
      ['b', [3, 4]],
      ['c', [1]],
    ]),
  );
  assert.deepEqual(
    target.get('m3'),
    new Map([
      ['a', [5, 6]],
      ['b', [5, 6]],
      ['c', [2]],
    ]),
  );
});

test('range: a sticky reassignment keeps co-partitioned topics aligned when a member joins', () => {
  const topics = [topic('a', 8), topic('b', 8)];
  const two = ['m1', 'm2'].map((id) => member({ id, topics: ['a', 'b'] }));
  const before = range.assign(spec(two, topics));
  const three = spec([...two, member({ id: 'm0', topics: ['a', 'b'] })], topics);
  const after = range.assign(withTargets(three, before));
  assertValid(three, after);
  for (const m of ['m0', 'm1', 'm2']) assert.deepEqual(after.get(m)!.get('a'), after.get(m)!.get('b'), m);
  assert.equal(moved(before, after), countOf(after, 'm0'));
});

test('uniform: fresh homogeneous assignment in runs; a new topic spreads without moving the old ones', () => {
  const members = ['a', 'b', 'c'].map((id) => member({ id, topics: ['t'] }));
  const first = uniform.assign(spec(members, [topic('t', 6)]));
  assert.deepEqual(
    [...first].map(([m, byTopic]) => [m, byTopic.get('t')]),
    [
      ['a', [0, 1]],
      ['b', [2, 3]],
      ['c', [4, 5]],
    ],
  );
  const grown = spec(
    members.map((m) => member({ id: m.memberId, topics: ['t', 'u'] })),
    [topic('t', 6), topic('u', 3)],
  );
  const second = uniform.assign(withTargets(grown, first));
  assertValid(grown, second);
  for (const m of ['a', 'b', 'c']) {
    assert.deepEqual(second.get(m)!.get('t'), first.get(m)!.get('t'));
    assert.equal(second.get(m)!.get('u')!.length, 1);
  }
});

test('uniform and range: members in a partition replica rack get it, balance unchanged', () => {
  // p0, p1 live in rack x, p2, p3 in rack y: the member in y gets p2, p3 although it sorts first.
  const topics = [topic('t', 4, (p) => (p < 2 ? ['x'] : ['y']))];
  const members = [member({ id: 'a', topics: ['t'], rack: 'y' }), member({ id: 'b', topics: ['t'], rack: 'x' })];
  for (const assignor of [uniform, range]) {
    const target = assignor.assign(spec(members, topics));
    assert.deepEqual(target.get('a')!.get('t'), [2, 3], assignor.name);
    assert.deepEqual(target.get('b')!.get('t'), [0, 1], assignor.name);
  }
  // Every replica in rack x: balance wins, two each.
  const skewed = [topic('t', 4, () => ['x'])];
  for (const assignor of [uniform, range]) {
    const target = assignor.assign(spec(members, skewed));
    assert.equal(countOf(target, 'a'), 2, assignor.name);
    assert.equal(countOf(target, 'b'), 2, assignor.name);
  }
  // Heterogeneous uniform: on a tie, the member in the partition's rack (without racks, a takes t0).
  const het = (racks: boolean) =>
    spec(
      [member({ id: 'a', topics: ['t', 'v'], rack: racks ? 'x' : null }), member({ id: 'b', topics: ['t', 'u'], rack: racks ? 'y' : null })],
      [topic('t', 2, (p) => (p === 0 ? ['y'] : ['x'])), topic('u', 1), topic('v', 1)],
    );
  assert.deepEqual(uniform.assign(het(false)).get('a')!.get('t'), [0]);
  const target = uniform.assign(het(true));
  assertValid(het(true), target);
  assert.deepEqual(target.get('a')!.get('t'), [1]);
  assert.deepEqual(target.get('b')!.get('t'), [0]);
});

test('an empty group, a topic nobody describes, members with no subscription', () => {
  for (const assignor of [uniform, range]) {
    assert.deepEqual(assignor.assign(spec([], [topic('t', 3)])), new Map());
    const s = spec([member({ id: 'a', topics: ['gone', 't'] }), member({ id: 'b', topics: [] })], [topic('t', 3)]);
    const target = assignor.assign(s);
    assertValid(s, target);
    assert.deepEqual(target.get('b'), new Map());
    assert.equal(countOf(target, 'a'), 3);
  }
});

test('group.consumer.assignors: short names and class names, in order, the first the default; unknown or empty is a config error naming it', () => {
  assert.deepEqual(
    parseAssignorList('range, uniform').map((a) => a.name),
    ['range', 'uniform'],
  );
  assert.deepEqual(
    parseAssignorList('org.apache.kafka.coordinator.group.assignor.UniformAssignor,org.apache.kafka.coordinator.group.assignor.RangeAssignor').map(
      (a) => a.name,
    ),
    ['uniform', 'range'],
  );
  assert.deepEqual(
    parseAssignorList(DEFAULT_CONSUMER_GROUP_ASSIGNORS).map((a) => a.name),
    ['uniform', 'range'],
  );
  assert.deepEqual(
    assignorsByName(['uniform', 'org.apache.kafka.coordinator.group.assignor.UniformAssignor']).map((a) => a.name),
    ['uniform'],
  );
  assert.throws(
    () => parseAssignorList('uniform,com.example.Sticky'),
    (e: unknown) =>
      e instanceof ConfigError &&
      e.key === 'group.consumer.assignors' &&
      e.message === 'Invalid value com.example.Sticky for configuration group.consumer.assignors: Class com.example.Sticky could not be found.',
  );
  assert.throws(
    () => parseAssignorList(' , '),
    (e: unknown) => e instanceof ConfigError && /at least one assignor/.test(e.message),
  );
});

test("the group's assignor: the members' most chosen, ties to the configured order, else the first configured", () => {
  const configured = parseAssignorList('uniform,range');
  assert.equal(preferredAssignor(configured, []).name, 'uniform');
  assert.equal(preferredAssignor(configured, [null, '', null]).name, 'uniform');
  assert.equal(preferredAssignor(configured, ['range', null]).name, 'range');
  assert.equal(preferredAssignor(configured, ['range', 'uniform']).name, 'uniform');
  assert.equal(preferredAssignor(configured, ['range', 'uniform', 'range']).name, 'range');
  assert.equal(preferredAssignor(parseAssignorList('range,uniform'), ['uniform', 'range']).name, 'range');
  assert.equal(preferredAssignor(configured, ['sticky', 'sticky', 'range']).name, 'range', 'a choice not offered does not count');
});

/** The least sum of squared counts any valid assignment of the spec reaches (every choice tried). */
function bestSumOfSquares(s: AssignmentSpec): number {
  const members = [...s.members.values()];
  const choices: number[][] = [];
  for (const t of s.topics.values()) {
    const subs = members.flatMap((m, i) => (m.subscribedTopicIds.has(t.topicId) ? [i] : []));
    if (subs.length > 0) for (let p = 0; p < t.partitionCount; p++) choices.push(subs);
  }
  const counts = members.map(() => 0);
  let best = Number.MAX_SAFE_INTEGER;
  const go = (k: number, sum: number) => {
    if (sum >= best) return;
    if (k === choices.length) {
      best = sum;
      return;
    }
    for (const m of choices[k]!) {
      counts[m]!++;
      go(k + 1, sum + 2 * counts[m]! - 1);
      counts[m]!--;
    }
  };
  go(0, 0);
  return best;
}

test('uniform: heterogeneous counts as even as the subscriptions allow (against every possible assignment of small groups)', () => {
  const small = fc
    .record({ partitionCounts: fc.array(fc.integer({ min: 1, max: 3 }), { minLength: 1, maxLength: 3 }), memberCount: fc.integer({ min: 2, max: 4 }) })
    .chain(({ partitionCounts, memberCount }) =>
      fc
        .array(
          fc.record({
            subscription: fc.subarray(
              partitionCounts.map((_, t) => `t${t}`),
              { minLength: 1 },
            ),
            previous: fc.array(fc.tuple(fc.nat(partitionCounts.length - 1), fc.nat(2)), { maxLength: 4 }),
          }),
          { minLength: memberCount, maxLength: memberCount },
        )
        .map((raw) => {
          const topics = partitionCounts.map((n, t) => topic(`t${t}`, n));
          const members = raw.map((r, i) => {
            const current: Record<string, number[]> = {};
            for (const [t, p] of r.previous) (current[`t${t}`] ??= []).push(p);
            return member({ id: `m${i}`, topics: r.subscription, current });
          });
          return spec(members, topics);
        }),
    );
  fc.assert(
    fc.property(small, (s) => {
      const target = uniform.assign(s);
      assertValid(s, target);
      const ours = [...s.members.keys()].reduce((sum, m) => sum + countOf(target, m) ** 2, 0);
      assert.equal(ours, bestSumOfSquares(s));
    }),
    { numRuns: 300 },
  );
  // The chain no single move fixes: a keeps x0, x1 from before, b has y0, c (on y only) joins.
  const chain = spec(
    [
      member({ id: 'a', topics: ['x'], current: { x: [0, 1] } }),
      member({ id: 'b', topics: ['x', 'y'], current: { y: [0] } }),
      member({ id: 'c', topics: ['y'] }),
    ],
    [topic('x', 2), topic('y', 1)],
  );
  const target = uniform.assign(chain);
  assert.deepEqual(
    ['a', 'b', 'c'].map((m) => countOf(target, m)),
    [1, 1, 1],
  );
});
