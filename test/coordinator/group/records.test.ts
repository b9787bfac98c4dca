import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { decodeRecord, encodeRecord, type CoordinatorRecord } from '../../../src/coordinator/group/records.js';

test('offset commit key and value v3 are laid out exactly as Kafka writes them', () => {
  const enc = encodeRecord({
    type: 'offset',
    group: 'g',
    topic: 't',
    partition: 2,
    value: { offset: 42n, leaderEpoch: 5, metadata: 'm', commitTimestamp: 1000n, expireTimestamp: -1n },
  });
  // key: version 1, group "g", topic "t", partition 2
  assert.deepEqual(enc.key, Buffer.from([0, 1, 0, 1, 0x67, 0, 1, 0x74, 0, 0, 0, 2]));
  const v = enc.value!;
  assert.equal(v.readInt16BE(0), 3);
  assert.equal(v.readBigInt64BE(2), 42n);
  assert.equal(v.readInt32BE(10), 5);
  assert.equal(v.readInt16BE(14), 1);
  assert.equal(v.toString('latin1', 16, 17), 'm');
  assert.equal(v.readBigInt64BE(17), 1000n);
  assert.equal(v.length, 25);
});

test('a commit with an expire timestamp is written as value v1 (what 0.11-era formatters read)', () => {
  const enc = encodeRecord({
    type: 'offset',
    group: 'g',
    topic: 't',
    partition: 0,
    value: { offset: 2n, leaderEpoch: -1, metadata: '', commitTimestamp: 1644921362785n, expireTimestamp: 1645007762785n },
  });
  const v = enc.value!;
  assert.equal(v.readInt16BE(0), 1);
  assert.equal(v.readBigInt64BE(2), 2n);
  assert.equal(v.readInt16BE(10), 0);
  assert.equal(v.readBigInt64BE(12), 1644921362785n);
  assert.equal(v.readBigInt64BE(20), 1645007762785n);
});

test('tombstones have a null value and decode back to null', () => {
  const enc = encodeRecord({ type: 'group', group: 'grp', value: null });
  assert.equal(enc.value, null);
  assert.equal(enc.key.readInt16BE(0), 2);
  assert.deepEqual(decodeRecord(enc.key, null), { type: 'group', group: 'grp', value: null });
});

test('records of group types Fjord does not keep (share groups, key version >= 9) are skipped on replay; 3-8 are consumer groups (KIP-848)', () => {
  assert.equal(decodeRecord(Buffer.from([0, 11, 0, 1, 0x67]), null), null);
  assert.deepEqual(decodeRecord(Buffer.from([0, 3, 0, 1, 0x67]), null), { type: 'cg-metadata', group: 'g', value: null });
});

test('encode/decode round-trips offset and group records', () => {
  const offset = fc.record(
    {
      type: fc.constant('offset' as const),
      group: fc.string(),
      topic: fc.string(),
      partition: fc.integer({ min: 0, max: 1000 }),
      value: fc.option(
        fc.record(
          {
            offset: fc.bigInt({ min: 0n, max: 2n ** 62n }),
            leaderEpoch: fc.integer({ min: -1, max: 1000 }),
            metadata: fc.string(),
            commitTimestamp: fc.bigInt({ min: 0n, max: 2n ** 50n }),
            expireTimestamp: fc.constant(-1n),
          },
          { noNullPrototype: true },
        ),
        { nil: null },
      ),
    },
    { noNullPrototype: true },
  );
  const member = fc.record(
    {
      memberId: fc.string(),
      groupInstanceId: fc.option(fc.string(), { nil: null }),
      clientId: fc.string(),
      clientHost: fc.string(),
      rebalanceTimeout: fc.integer({ min: 0, max: 100000 }),
      sessionTimeout: fc.integer({ min: 0, max: 100000 }),
      subscription: fc.uint8Array({ maxLength: 20 }).map((a) => Buffer.from(a)),
      assignment: fc.uint8Array({ maxLength: 20 }).map((a) => Buffer.from(a)),
    },
    { noNullPrototype: true },
  );
  const group = fc.record(
    {
      type: fc.constant('group' as const),
      group: fc.string(),
      value: fc.option(
        fc.record(
          {
            protocolType: fc.string(),
            generation: fc.integer({ min: 0, max: 1000 }),
            protocol: fc.option(fc.string(), { nil: null }),
            leader: fc.option(fc.string(), { nil: null }),
            currentStateTimestamp: fc.bigInt({ min: 0n, max: 2n ** 50n }),
            members: fc.array(member, { maxLength: 3 }),
          },
          { noNullPrototype: true },
        ),
        { nil: null },
      ),
    },
    { noNullPrototype: true },
  );
  fc.assert(
    fc.property(fc.oneof(offset, group), (r: CoordinatorRecord) => {
      const enc = encodeRecord(r);
      assert.deepEqual(decodeRecord(enc.key, enc.value), r);
    }),
  );
});
