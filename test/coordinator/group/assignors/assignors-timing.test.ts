import { test } from 'node:test';
import assert from 'node:assert/strict';
import { RangeAssignor, UniformAssignor } from '../../../../src/coordinator/group/assignors/index.js';
import type { ServerAssignor, TargetAssignment } from '../../../../src/coordinator/group/assignors/types.js';
import { assertValid, countOf, member, moved, spec, topic, withTargets } from './spec-builder.js';

// 1,000 members over 10 topics of 1,000 partitions. Kafka's own benchmark has its assignors
// do this in tens of milliseconds; the bound below leaves room for a loaded CI machine.
const BOUND_MS = 1500;
const topics = Array.from({ length: 10 }, (_, t) => topic(`topic-${t}`, 1000, (p) => [`rack-${p % 3}`, `rack-${(p + 1) % 3}`]));
const ids = topics.map((t) => t.topicId);

function timed(label: string, assignor: ServerAssignor, run: () => TargetAssignment): TargetAssignment {
  const start = process.hrtime.bigint();
  const target = run();
  const ms = Number(process.hrtime.bigint() - start) / 1e6;
  console.log(`${assignor.name} ${label}: ${ms.toFixed(1)} ms`);
  assert.ok(ms < BOUND_MS, `${assignor.name} ${label} took ${ms.toFixed(0)} ms`);
  return target;
}

for (const assignor of [new UniformAssignor(), new RangeAssignor()] as ServerAssignor[]) {
  test(`${assignor.name}: 1,000 members x 10,000 partitions, fresh, then a member joins, with racks`, () => {
    const members = Array.from({ length: 1000 }, (_, i) => member({ id: `member-${String(i).padStart(4, '0')}`, topics: ids, rack: `rack-${i % 3}` }));
    const s = spec(members, topics);
    const first = timed('fresh', assignor, () => assignor.assign(s));
    assertValid(s, first);
    const joined = spec([...members, member({ id: 'member-new', topics: ids, rack: 'rack-0' })], topics);
    const second = timed('a member joins', assignor, () => assignor.assign(withTargets(joined, first)));
    assertValid(joined, second);
    assert.equal(moved(first, second), countOf(second, 'member-new'));
  });
}

test('uniform: 1,000 members x 10,000 partitions, heterogeneous (each member on 5 of the 10 topics)', () => {
  const assignor = new UniformAssignor();
  const members = Array.from({ length: 1000 }, (_, i) => member({ id: `member-${i}`, topics: ids.filter((_, t) => (t + i) % 2 === 0 || t === i % 10) }));
  const s = spec(members, topics);
  const target = timed('heterogeneous', assignor, () => assignor.assign(s));
  assertValid(s, target);
});
