/**
 * The old (ZooKeeper) consumer's range assignment, as Kafka 0.8's RangeAssignor computes it:
 * per topic, the sorted thread ids of every member subscribed to it share the sorted partitions
 * in contiguous ranges, the first (partitions % threads) threads taking one extra.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { consumerThreadIds, rangeAssign } from '../../../src/client/zk-consumer/range-assignment.js';

test('thread ids are <consumerId>-<n>, n from 0, per topic by stream count', () => {
  assert.deepEqual(consumerThreadIds('g_h-1-abcdef01', { a: 2, b: 1 }), { a: ['g_h-1-abcdef01-0', 'g_h-1-abcdef01-1'], b: ['g_h-1-abcdef01-0'] });
});

test('two consumers, one thread each, two partitions: one each, in sorted thread order', () => {
  const members = new Map([
    ['g_b-2-00000000', { bigdata: 1 }],
    ['g_a-1-00000000', { bigdata: 1 }],
  ]);
  const got = rangeAssign(members, new Map([['bigdata', [1, 0]]]));
  assert.deepEqual([...got.values()].map((a) => `${a.topic}-${a.partition}:${a.threadId}`).sort(), [
    'bigdata-0:g_a-1-00000000-0',
    'bigdata-1:g_b-2-00000000-0',
  ]);
});

test('five partitions over three threads: 2, 2, 1; more threads than partitions leave the last idle', () => {
  const members = new Map<string, Record<string, number>>([
    ['c1', { t: 2 }],
    ['c2', { t: 1, other: 1 }],
  ]);
  const got = rangeAssign(
    members,
    new Map([
      ['t', [0, 1, 2, 3, 4]],
      ['other', [0]],
    ]),
  );
  const owner = (t: string, p: number): string | undefined => got.get(`${t}-${p}`)?.threadId;
  assert.deepEqual(
    [0, 1, 2, 3, 4].map((p) => owner('t', p)),
    ['c1-0', 'c1-0', 'c1-1', 'c1-1', 'c2-0'],
  );
  assert.equal(owner('other', 0), 'c2-0');
  const idle = rangeAssign(new Map([['x', { t: 3 }]]), new Map([['t', [0, 1]]]));
  assert.deepEqual(
    [...idle.values()].map((a) => a.threadId),
    ['x-0', 'x-1'],
  );
});

test('a topic without partitions (not created yet) assigns nothing; every partition has exactly one owner', () => {
  assert.equal(rangeAssign(new Map([['x', { gone: 1 }]]), new Map()).size, 0);
  const members = new Map(Array.from({ length: 7 }, (_, i) => [`m${i}`, { t: 1 + (i % 3) }] as [string, Record<string, number>]));
  const parts = Array.from({ length: 23 }, (_, i) => i);
  const got = rangeAssign(members, new Map([['t', parts]]));
  assert.deepEqual(
    [...got.values()].map((a) => a.partition).sort((a, b) => a - b),
    parts,
  );
});
