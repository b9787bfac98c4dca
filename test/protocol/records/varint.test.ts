import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import fc from 'fast-check';
import {
  readUnsignedVarInt,
  readVarInt,
  readVarLong,
  readVarLongNumber,
  sizeOfUnsignedVarInt,
  sizeOfVarInt,
  sizeOfVarLong,
  sizeOfVarLongNumber,
  skipVarint,
  writeUnsignedVarInt,
  writeVarInt,
  writeVarLong,
  writeVarLongNumber,
  VarintError,
} from '../../../src/protocol/records/varint.js';

const require = createRequire(import.meta.url);
const KafkaJsEncoder = require('kafkajs/src/protocol/encoder') as new () => {
  writeVarInt(v: number): unknown;
  writeVarLong(v: unknown): unknown;
  buffer: Buffer;
};
const Long = require('kafkajs/src/utils/long') as { fromString(s: string): unknown };

const int32 = fc.integer({ min: -(2 ** 31), max: 2 ** 31 - 1 });
/** What a varlong read as a JS number can hold: its zigzag form must be a safe integer. */
const safeLong = fc.integer({ min: -(2 ** 52), max: 2 ** 52 - 1 });
const int64 = fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n });

test('signed varint round-trips, size matches and agrees with kafkajs bytes', () => {
  fc.assert(
    fc.property(int32, (v) => {
      const buf = Buffer.alloc(5);
      const end = writeVarInt(buf, 0, v);
      assert.equal(end, sizeOfVarInt(v));
      const cur = { pos: 0 };
      assert.equal(readVarInt(buf, cur), v);
      assert.equal(cur.pos, end);
      const theirs = new KafkaJsEncoder();
      theirs.writeVarInt(v);
      assert.deepEqual(buf.subarray(0, end), theirs.buffer);
    }),
  );
});

test('unsigned varint round-trips', () => {
  fc.assert(
    fc.property(fc.integer({ min: 0, max: 2 ** 32 - 1 }), (v) => {
      const buf = Buffer.alloc(5);
      const end = writeUnsignedVarInt(buf, 0, v);
      assert.equal(end, sizeOfUnsignedVarInt(v));
      const cur = { pos: 0 };
      assert.equal(readUnsignedVarInt(buf, cur), v);
      assert.equal(cur.pos, end);
    }),
  );
});

test('bigint varlong round-trips and agrees with kafkajs bytes', () => {
  fc.assert(
    fc.property(int64, (v) => {
      const buf = Buffer.alloc(10);
      const end = writeVarLong(buf, 0, v);
      assert.equal(end, sizeOfVarLong(v));
      const cur = { pos: 0 };
      assert.equal(readVarLong(buf, cur), v);
      assert.equal(cur.pos, end);
      const theirs = new KafkaJsEncoder();
      theirs.writeVarLong(Long.fromString(v.toString()));
      assert.deepEqual(buf.subarray(0, end), theirs.buffer);
    }),
  );
});

test('number varlong matches the bigint encoding within [-2^52, 2^52)', () => {
  fc.assert(
    fc.property(safeLong, (v) => {
      const a = Buffer.alloc(10);
      const b = Buffer.alloc(10);
      const endA = writeVarLongNumber(a, 0, v);
      const endB = writeVarLong(b, 0, BigInt(v));
      assert.deepEqual(a.subarray(0, endA), b.subarray(0, endB));
      assert.equal(sizeOfVarLongNumber(v), endA);
      const cur = { pos: 0 };
      assert.equal(readVarLongNumber(a, cur), v);
      assert.equal(cur.pos, endA);
      const skip = { pos: 0 };
      skipVarint(a, skip);
      assert.equal(skip.pos, endA);
    }),
  );
});

test('readVarLongNumber rejects values beyond the safe range; bigint reader still reads them', () => {
  const buf = Buffer.alloc(10);
  writeVarLong(buf, 0, 2n ** 60n);
  assert.throws(() => readVarLongNumber(buf, { pos: 0 }), RangeError);
  assert.equal(readVarLong(buf, { pos: 0 }), 2n ** 60n);
});

test('truncated and over-long varints throw', () => {
  assert.throws(() => readVarInt(Buffer.from([0x80, 0x80]), { pos: 0 }), RangeError);
  assert.throws(() => readVarInt(Buffer.from([0x80, 0x80, 0x80, 0x80, 0x80, 0x01]), { pos: 0 }), RangeError);
  assert.throws(() => readVarLong(Buffer.alloc(11, 0x80), { pos: 0 }), RangeError);
  assert.throws(() => skipVarint(Buffer.alloc(11, 0x80), { pos: 0 }), RangeError);
});

test('reads at a non-zero position and leaves neighbours alone', () => {
  const buf = Buffer.from([0xaa, 0xac, 0x02, 0xbb]); // 0xac 0x02 = 300 zigzag -> 150
  const cur = { pos: 1 };
  assert.equal(readVarInt(buf, cur), 150);
  assert.equal(cur.pos, 3);
});

test('number varlongs at the edges of their range', () => {
  for (const v of [2 ** 52 - 1, -(2 ** 52)]) {
    const b = Buffer.alloc(10);
    const end = writeVarLongNumber(b, 0, v);
    assert.equal(readVarLongNumber(b, { pos: 0 }), v);
    assert.equal(sizeOfVarLongNumber(v), end);
  }
  assert.throws(() => writeVarLongNumber(Buffer.alloc(10), 0, 2 ** 52), VarintError);
  const big = Buffer.alloc(10);
  const end = writeVarLong(big, 0, 2n ** 52n); // a Java client may send it: read as an error, not a wrong number
  assert.throws(() => readVarLongNumber(big.subarray(0, end), { pos: 0 }), VarintError);
});
