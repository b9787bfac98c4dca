import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { javaStringHashCode, kafkaAbs, partitionForGroup } from '../../../src/coordinator/runtime/partition-for-group.js';

/** Java's definition, literally: s[0]*31^(n-1) + ... + s[n-1], as a signed 32-bit int. */
function reference(s: string): number {
  let h = 0n;
  for (let i = 0; i < s.length; i++) h = (h * 31n + BigInt(s.charCodeAt(i))) & 0xffffffffn;
  return Number(BigInt.asIntN(32, h));
}

test('javaStringHashCode matches known Java values', () => {
  assert.equal(javaStringHashCode(''), 0);
  assert.equal(javaStringHashCode('hello'), 99162322);
  assert.equal(javaStringHashCode('Aa'), javaStringHashCode('BB')); // the classic collision
  // The one string famous for hashing to Integer.MIN_VALUE: Kafka's Utils.abs maps it to 0.
  assert.equal(javaStringHashCode('polygenelubricants'), -2147483648);
  assert.equal(kafkaAbs(-2147483648), 0);
  assert.equal(partitionForGroup('polygenelubricants', 50), 0);
});

test('javaStringHashCode agrees with the BigInt reference over UTF-16 (including surrogates)', () => {
  fc.assert(
    fc.property(fc.string({ unit: 'binary', maxLength: 64 }), (s) => {
      assert.equal(javaStringHashCode(s), reference(s));
    }),
  );
});

test('partitionForGroup is within range and never negative', () => {
  fc.assert(
    fc.property(fc.string(), fc.integer({ min: 1, max: 200 }), (s, n) => {
      const p = partitionForGroup(s, n);
      assert.ok(p >= 0 && p < n);
      assert.equal(p, (reference(s) & 0x7fffffff) % n);
    }),
  );
});
