import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import fc from 'fast-check';
import { murmur2, partitionForKey, StickyPartitioner } from '../../src/client/partitioner.js';

const require = createRequire(import.meta.url);
const kafkajsMurmur2 = require('kafkajs/src/producer/partitioners/default/murmur2.js') as (key: Buffer) => number;

test("murmur2 matches the values in Kafka's own tests", () => {
  const cases: [string, number][] = [
    ['21', -973932308],
    ['foobar', -790332482],
    ['a-little-bit-long-string', -985981536],
    ['a-little-bit-longer-string', -1486304829],
    ['lkjh234lh9fiuh90y23oiuhsafujhadof229phr9h19h89h8', -58897971],
    ['abc', 479470107],
  ];
  for (const [s, h] of cases) assert.equal(murmur2(Buffer.from(s)), h, s);
});

test("murmur2 agrees with kafkajs's Java-compatible partitioner on random keys", () => {
  fc.assert(
    fc.property(fc.uint8Array({ maxLength: 64 }), (bytes) => {
      const key = Buffer.from(bytes);
      assert.equal(murmur2(key), kafkajsMurmur2(key) | 0);
    }),
    { numRuns: 500 },
  );
});

test('partitionForKey stays in range', () => {
  fc.assert(
    fc.property(fc.uint8Array({ maxLength: 32 }), fc.integer({ min: 1, max: 1000 }), (bytes, n) => {
      const p = partitionForKey(Buffer.from(bytes), n);
      return p >= 0 && p < n;
    }),
  );
});

test('the sticky partitioner keeps a partition until its batch closes, then moves', () => {
  const s = new StickyPartitioner();
  const first = s.partition('t', 8);
  for (let i = 0; i < 20; i++) assert.equal(s.partition('t', 8), first);
  s.onBatchClosed('t', 8);
  assert.notEqual(s.partition('t', 8), first);
});
