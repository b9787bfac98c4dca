import { test } from 'node:test';
import assert from 'node:assert/strict';
import { isCrcValid } from '../../src/protocol/records/batch-header.js';
import { assignOffsets, existingOffsetRange, validateBatches } from '../../src/storage/append/append-step.js';
import { CorruptRecordError, RecordTooLargeError } from '../../src/storage/errors.js';
import { makeBatch } from './helpers.js';
import { flipByte } from '../helpers/corrupt.js';

test('validates concatenated batches and assigns offsets in place', () => {
  const buf = Buffer.concat([makeBatch(['a', 'b']), makeBatch(['c'])]);
  const s = validateBatches(buf, 1 << 20, true);
  assert.deepEqual([s.batchCount, s.recordCount, s.offsetCount], [2, 3, 3]);
  assert.equal(assignOffsets(buf, 100, 7, undefined), 102);
  assert.deepEqual(existingOffsetRange(buf), { first: 100, last: 102, monotonic: true });
  assert.equal(buf.readInt32BE(12), 7, 'leader epoch stamped');
  assertValid(buf);
  assignOffsets(buf, 0, 7, 1800000000000);
  assertValid(buf);
  assert.equal(Number(buf.readBigInt64BE(35)), 1800000000000);
});

function assertValid(buf: Buffer): void {
  assert.ok(isCrcValid(buf, 0));
  assert.ok(isCrcValid(buf, buf.readInt32BE(8) + 12));
}

test('rejects bad framing, CRC, size and counts', () => {
  assert.throws(() => validateBatches(Buffer.alloc(0), 100, true), CorruptRecordError);
  assert.throws(() => validateBatches(Buffer.alloc(5), 100, true), CorruptRecordError);
  const big = makeBatch(['x'.repeat(500)]);
  assert.throws(() => validateBatches(big, 100, true), RecordTooLargeError);
  const badCount = makeBatch(['a', 'b']);
  badCount.writeInt32BE(5, 57);
  assert.throws(() => validateBatches(badCount, 1 << 20, true), CorruptRecordError, 'CRC or count mismatch');
  const trailing = Buffer.concat([makeBatch(['a']), Buffer.alloc(20)]);
  assert.throws(() => validateBatches(trailing, 1 << 20, true), CorruptRecordError);
});

test('crc check can be skipped when the caller verified it, framing is still checked', () => {
  const bad = makeBatch(['a']);
  flipByte(bad, bad.length - 1, 1);
  assert.throws(() => validateBatches(bad, 1 << 20, true), CorruptRecordError);
  assert.equal(validateBatches(bad, 1 << 20, true, false).batchCount, 1);
  assert.throws(() => validateBatches(bad.subarray(0, 40), 1 << 20, true, false), CorruptRecordError);
});
