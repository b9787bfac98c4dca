/** The shared small helpers: tpKey, groupByTopic (common/partition-keys.ts) and messageOf (common/errors.ts). */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { groupByTopic, tpKey } from '../../src/common/partition-keys.js';
import { messageOf } from '../../src/common/errors.js';

test("tpKey is Kafka's topic-partition string, dashes in the topic kept", () => {
  assert.equal(tpKey('orders', 3), 'orders-3');
  assert.equal(tpKey('a-b-0', 12), 'a-b-0-12');
});

test('groupByTopic keeps topics in first-seen order and items in their order', () => {
  const items = [
    { topic: 'b', partition: 1 },
    { topic: 'a', partition: 0 },
    { topic: 'b', partition: 0 },
  ];
  const byTopic = groupByTopic(items);
  assert.deepEqual([...byTopic.keys()], ['b', 'a']);
  assert.deepEqual(byTopic.get('b'), [items[0], items[2]]);
  assert.deepEqual(byTopic.get('a'), [items[1]]);
});

test('groupByTopic takes the topic from a function when the items have no topic field', () => {
  const entries: [{ topic: string; partition: number }, string][] = [
    [{ topic: 'x', partition: 2 }, 'two'],
    [{ topic: 'y', partition: 0 }, 'zero'],
    [{ topic: 'x', partition: 1 }, 'one'],
  ];
  const byTopic = groupByTopic(entries, ([tp]) => tp.topic);
  assert.deepEqual(
    [...byTopic].map(([t, list]) => [t, list.map(([, v]) => v)]),
    [
      ['x', ['two', 'one']],
      ['y', ['zero']],
    ],
  );
  assert.equal(groupByTopic([]).size, 0);
});

test("messageOf gives an Error's message and anything else as text", () => {
  assert.equal(messageOf(new Error('disk full')), 'disk full');
  assert.equal(messageOf('plain'), 'plain');
  assert.equal(messageOf(42), '42');
  assert.equal(messageOf(undefined), 'undefined');
});
