import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { CompressionType, RECORD_BATCH_OVERHEAD, isCrcValid, rewriteCrc, setBaseOffset } from '../../../src/protocol/records/batch-header.js';
import { TimestampType, decodeBatch, encodeBatch, recordTimestamp, validateBatchHeader, validateBatches } from '../../../src/protocol/records/batch.js';
import { completeEntriesLength, iterateBatches } from '../../../src/protocol/records/batch-entries.js';
import { ControlRecordType, encodeControlBatch, endTxnMarkerOf } from '../../../src/protocol/records/control.js';
import { RecordsError } from '../../../src/protocol/records/errors.js';
import { decodeRecordsSection, encodeRecords, readRecord } from '../../../src/protocol/records/record.js';
import { normalise, records } from './arbitraries.js';
import { flipByte } from '../../helpers/corrupt.js';

const ALL_CODECS = [CompressionType.None, CompressionType.Gzip, CompressionType.Snappy, CompressionType.Lz4, CompressionType.Zstd];

test('records section round-trips', () => {
  fc.assert(
    fc.property(records, (rs) => {
      const section = encodeRecords(rs);
      const cur = { pos: 0 };
      const back = rs.map(() => readRecord(section, cur));
      assert.equal(cur.pos, section.length);
      assert.deepEqual(normalise(back), normalise(rs));
      assert.deepEqual(normalise(decodeRecordsSection(section, rs.length)), normalise(rs));
    }),
  );
});

for (const compression of ALL_CODECS) {
  test(`batch round-trips with compression ${CompressionType[compression]}`, () => {
    fc.assert(
      fc.property(
        records,
        fc.bigInt({ min: 0n, max: 2n ** 62n }),
        fc.bigInt({ min: 0n, max: 2n ** 45n }),
        fc.boolean(),
        fc.integer({ min: 0, max: 2 ** 31 - 1 }),
        (rs, baseOffset, baseTimestamp, transactional, seq) => {
          const buf = encodeBatch({
            records: rs,
            baseOffset,
            baseTimestamp,
            compression,
            isTransactional: transactional,
            producerId: 77n,
            producerEpoch: 3,
            baseSequence: seq,
            partitionLeaderEpoch: 9,
          });
          assert.equal(validateBatchHeader(buf, 0, { walkCompressed: true }), null);
          const b = decodeBatch(buf, 0, { maxBytes: 1 << 30 });
          assert.equal(b.sizeInBytes, buf.length);
          assert.equal(b.baseOffset, baseOffset);
          assert.equal(b.baseTimestamp, baseTimestamp);
          const maxDelta = Math.max(...rs.map((r) => r.timestampDelta));
          assert.equal(b.maxTimestamp, baseTimestamp + BigInt(maxDelta));
          assert.equal(b.compression, compression);
          assert.equal(b.isTransactional, transactional);
          assert.equal(b.isControl, false);
          assert.equal(b.timestampType, TimestampType.CreateTime);
          assert.equal(b.producerId, 77n);
          assert.equal(b.producerEpoch, 3);
          assert.equal(b.baseSequence, seq);
          assert.equal(b.partitionLeaderEpoch, 9);
          assert.equal(b.lastOffsetDelta, rs.length - 1);
          assert.deepEqual(normalise(b.records), normalise(rs));
        },
      ),
      { numRuns: 40 },
    );
  });
}

test('LogAppendTime: every record takes maxTimestamp', () => {
  const buf = encodeBatch({
    records: [{ attributes: 0, timestampDelta: 5, offsetDelta: 0, key: null, value: null, headers: [] }],
    baseTimestamp: 1000n,
    maxTimestamp: 5000n,
    timestampType: TimestampType.LogAppendTime,
  });
  const b = decodeBatch(buf, 0, { maxBytes: 1 << 30 });
  assert.equal(b.timestampType, TimestampType.LogAppendTime);
  const [record] = b.records;
  assert.ok(record);
  assert.equal(recordTimestamp(b, record), 5000n);
});

test('the CRC catches every single-byte mutation of the covered bytes', () => {
  fc.assert(
    fc.property(records, fc.constantFrom(...ALL_CODECS), fc.nat(), fc.integer({ min: 1, max: 255 }), (rs, compression, where, xor) => {
      const buf = encodeBatch({ records: rs, compression, baseTimestamp: 1n });
      const covered = buf.length - 21;
      const pos = 21 + (where % covered);
      flipByte(buf, pos, xor);
      const err = validateBatchHeader(buf, 0);
      assert.notEqual(err, null);
      assert.equal(err?.reason, 'crc_mismatch');
      assert.equal(err?.kafkaError, 'CORRUPT_MESSAGE');
      assert.throws(
        () => decodeBatch(buf, 0, { maxBytes: 1 << 30 }),
        (e: unknown) => e instanceof RecordsError && e.reason === 'crc_mismatch',
      );
    }),
    { numRuns: 300 },
  );
});

test('base offset and leader epoch are outside the CRC', () => {
  const buf = encodeBatch({ records: [{ attributes: 0, timestampDelta: 0, offsetDelta: 0, key: null, value: Buffer.from('x'), headers: [] }] });
  setBaseOffset(buf, 0, 12345n);
  buf.writeInt32BE(42, 12);
  assert.equal(isCrcValid(buf, 0), true);
  assert.equal(decodeBatch(buf, 0, { maxBytes: 1 << 30 }).baseOffset, 12345n);
});

function oneRecordBatch(): Buffer {
  return encodeBatch({
    records: [
      { attributes: 0, timestampDelta: 0, offsetDelta: 0, key: Buffer.from('k'), value: Buffer.from('v'), headers: [] },
      { attributes: 0, timestampDelta: 1, offsetDelta: 1, key: null, value: Buffer.from('w'), headers: [{ key: 'h', value: null }] },
    ],
    baseTimestamp: 10n,
  });
}

test('validateBatchHeader reports typed reasons', () => {
  const good = oneRecordBatch();
  assert.equal(validateBatchHeader(good), null);

  const truncated = good.subarray(0, good.length - 1);
  assert.equal(validateBatchHeader(truncated)?.reason, 'truncated');

  const shortLen = Buffer.from(good);
  shortLen.writeInt32BE(10, 8);
  assert.equal(validateBatchHeader(shortLen)?.reason, 'bad_length');

  const magic = Buffer.from(good);
  magic[16] = 1;
  assert.equal(validateBatchHeader(magic)?.reason, 'bad_magic');

  const count = Buffer.from(good);
  count.writeInt32BE(3, 57);
  count.writeInt32BE(2, 23); // keep lastOffsetDelta consistent so the count walk is what fails
  rewriteCrc(count, 0);
  assert.equal(validateBatchHeader(count)?.reason, 'record_count_mismatch');
  assert.equal(validateBatchHeader(count)?.kafkaError, 'INVALID_RECORD');
  assert.equal(validateBatchHeader(count, 0, { walkRecords: false }), null);

  const fewer = Buffer.from(good);
  fewer.writeInt32BE(1, 57);
  fewer.writeInt32BE(0, 23);
  rewriteCrc(fewer, 0);
  assert.equal(validateBatchHeader(fewer)?.reason, 'record_count_mismatch');

  const range = Buffer.from(good);
  range.writeInt32BE(5, 23);
  rewriteCrc(range, 0);
  assert.equal(validateBatchHeader(range)?.reason, 'offset_range_mismatch');
  assert.equal(validateBatchHeader(range, 0, { fromClient: false }), null);

  const badRecord = Buffer.from(good);
  badRecord[RECORD_BATCH_OVERHEAD] = 0x7e; // first record claims 63 bytes
  rewriteCrc(badRecord, 0);
  assert.equal(validateBatchHeader(badRecord)?.reason, 'bad_record');
  assert.equal(validateBatchHeader(badRecord)?.kafkaError, 'CORRUPT_MESSAGE');

  const codec = Buffer.from(good);
  codec.writeInt16BE(6, 21);
  rewriteCrc(codec, 0);
  assert.equal(validateBatchHeader(codec)?.reason, 'bad_compression');

  const idempotent = Buffer.from(good);
  idempotent.writeBigInt64BE(5n, 43);
  rewriteCrc(idempotent, 0);
  assert.equal(validateBatchHeader(idempotent)?.reason, 'invalid_sequence');

  const control = encodeControlBatch({ type: ControlRecordType.Commit, producerId: 1n, producerEpoch: 0, coordinatorEpoch: 2, timestamp: 5n });
  assert.equal(validateBatchHeader(control)?.reason, 'control_batch_from_client');
  assert.equal(validateBatchHeader(control, 0, { fromClient: false }), null);
});

test('compressed walk checks inner offsets and decompression', () => {
  const rs = [0, 2].map((d) => ({ attributes: 0, timestampDelta: 0, offsetDelta: d, key: null, value: null, headers: [] }));
  const buf = encodeBatch({ records: rs, compression: CompressionType.Gzip, lastOffsetDelta: 1 });
  assert.equal(validateBatchHeader(buf), null);
  assert.equal(validateBatchHeader(buf, 0, { walkCompressed: true })?.reason, 'inner_offset_mismatch');

  const garbage = encodeBatch({ records: rs, compression: CompressionType.Zstd, lastOffsetDelta: 1 });
  garbage.fill(0x11, RECORD_BATCH_OVERHEAD);
  rewriteCrc(garbage, 0);
  assert.equal(validateBatchHeader(garbage, 0, { walkCompressed: true })?.reason, 'decompression_failed');
  assert.throws(
    () => decodeBatch(garbage, 0, { maxBytes: 1 << 30 }),
    (e: unknown) => e instanceof RecordsError && e.reason === 'decompression_failed',
  );
});

test('iterateBatches walks concatenated batches and stops at a partial trailing one', () => {
  const a = oneRecordBatch();
  const b = encodeBatch({ records: [], baseOffset: 2n });
  const c = oneRecordBatch();
  const all = Buffer.concat([a, b, c]);
  const starts = [...iterateBatches(all)].map((e) => [e.start, e.size, e.magic]);
  assert.deepEqual(starts, [
    [0, a.length, 2],
    [a.length, b.length, 2],
    [a.length + b.length, c.length, 2],
  ]);
  for (let cut = 1; cut < c.length; cut++) {
    const partial = all.subarray(0, all.length - cut);
    assert.equal([...iterateBatches(partial)].length, 2);
    assert.equal(completeEntriesLength(partial), a.length + b.length);
  }
  assert.equal(validateBatches(Buffer.concat([a, c])), null);
  assert.equal(validateBatches(Buffer.concat([a, c]).subarray(0, a.length + c.length - 3))?.reason, 'truncated');
  assert.equal(validateBatches(all)?.reason, 'bad_record_count'); // empty batch b
  assert.equal(validateBatches(all, { fromClient: false }), null);

  const corrupt = Buffer.from(all);
  corrupt.writeInt32BE(3, a.length + 8);
  assert.throws(
    () => [...iterateBatches(corrupt)],
    (e: unknown) => e instanceof RecordsError && e.reason === 'bad_length',
  );
  const badMagic = Buffer.from(all);
  badMagic[a.length + 16] = 7;
  assert.throws(
    () => [...iterateBatches(badMagic)],
    (e: unknown) => e instanceof RecordsError && e.reason === 'bad_magic',
  );
});

test('control batches carry transaction markers', () => {
  for (const type of [ControlRecordType.Abort, ControlRecordType.Commit]) {
    const buf = encodeControlBatch({ type, producerId: 99n, producerEpoch: 4, coordinatorEpoch: 17, timestamp: 123n, baseOffset: 50n });
    const b = decodeBatch(buf, 0, { maxBytes: 1 << 30 });
    assert.equal(b.isControl, true);
    assert.equal(b.isTransactional, true);
    assert.equal(b.producerId, 99n);
    assert.equal(b.producerEpoch, 4);
    assert.equal(b.baseOffset, 50n);
    assert.deepEqual(b.records[0]?.key, Buffer.from([0, 0, 0, type]));
    assert.deepEqual(endTxnMarkerOf(b), { type, coordinatorEpoch: 17 });
  }
  assert.equal(endTxnMarkerOf(decodeBatch(oneRecordBatch(), 0, { maxBytes: 1 << 30 })), null);
});

test('a hostile record count is rejected without allocating for it', () => {
  const buf = oneRecordBatch();
  buf.writeInt32BE(2 ** 31 - 1, 57);
  rewriteCrc(buf, 0);
  assert.throws(
    () => decodeBatch(buf, 0, { maxBytes: 1 << 30 }),
    (e: unknown) => e instanceof RecordsError && e.reason === 'record_count_mismatch',
  );
  assert.equal(validateBatchHeader(buf, 0, { fromClient: false })?.reason, 'record_count_mismatch');
});
