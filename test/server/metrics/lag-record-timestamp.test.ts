/**
 * Finding the timestamp of the record at an offset in the bytes a log read or a Fetch returns
 * (src/server/metrics/lag/record-timestamp.ts): inside compressed batches, LogAppendTime batches,
 * a later batch, a gap left by compaction, a batch cut short by the byte limit, legacy messages.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { CompressionType, TimestampType, encodeBatch, type KafkaRecord } from '../../../src/protocol/records/index.js';
import { timestampAtOffset } from '../../../src/server/metrics/lag/record-timestamp.js';

const BASE_TS = 1_700_000_000_000;

/** Records at offset deltas `deltas`, record with delta d stamped BASE_TS + 1000 * d (+ `shift`). */
function records(deltas: number[], shift = 0): KafkaRecord[] {
  return deltas.map((d) => ({ attributes: 0, timestampDelta: 1000 * d + shift, offsetDelta: d, key: null, value: Buffer.from(`v${d}`), headers: [] }));
}

test('the record at the offset inside an uncompressed and a gzip batch', async () => {
  for (const compression of [CompressionType.None, CompressionType.Gzip]) {
    const buf = encodeBatch({ baseOffset: 100n, baseTimestamp: BigInt(BASE_TS), compression, records: records([0, 1, 2, 3]) });
    assert.equal(await timestampAtOffset(buf, 100), BASE_TS);
    assert.equal(await timestampAtOffset(buf, 102), BASE_TS + 2000, `compression ${compression}`);
    assert.equal(await timestampAtOffset(buf, 104), undefined, 'past the batch');
  }
});

test('LogAppendTime: every record has the batch max timestamp', async () => {
  const buf = encodeBatch({
    baseOffset: 0n,
    baseTimestamp: BigInt(BASE_TS),
    timestampType: TimestampType.LogAppendTime,
    maxTimestamp: BigInt(BASE_TS + 9999),
    records: records([0, 1, 2]),
  });
  assert.equal(await timestampAtOffset(buf, 1), BASE_TS + 9999);
});

test('a later batch, and the first record after a compacted gap', async () => {
  const first = encodeBatch({ baseOffset: 0n, baseTimestamp: BigInt(BASE_TS), records: records([0, 1]) });
  const second = encodeBatch({ baseOffset: 10n, baseTimestamp: BigInt(BASE_TS + 50_000), records: records([0, 3, 5]) });
  const buf = Buffer.concat([first, second]);
  assert.equal(await timestampAtOffset(buf, 10), BASE_TS + 50_000);
  assert.equal(await timestampAtOffset(buf, 12), BASE_TS + 50_000 + 3000, 'offset 12 compacted away: 13 is next');
  assert.equal(await timestampAtOffset(buf, 5), BASE_TS + 50_000, 'between the batches: the second batch first record');
});

test('a batch cut short by the byte limit gives its base timestamp', async () => {
  const buf = encodeBatch({ baseOffset: 0n, baseTimestamp: BigInt(BASE_TS), records: records([0, 1, 2, 3, 4, 5]) });
  assert.equal(await timestampAtOffset(buf.subarray(0, buf.length - 5), 3), BASE_TS);
  assert.equal(await timestampAtOffset(buf.subarray(0, 20), 3), undefined, 'not even a header');
});

test('no timestamp: a batch without one, and a magic 0 message', async () => {
  assert.equal(await timestampAtOffset(encodeBatch({ baseOffset: 0n, records: records([0]) }), 0), undefined);
  const magic0 = Buffer.alloc(12 + 14);
  magic0.writeBigInt64BE(7n, 0);
  magic0.writeInt32BE(14, 8);
  magic0.writeInt8(0, 16);
  magic0.writeInt32BE(-1, 18);
  magic0.writeInt32BE(-1, 22);
  assert.equal(await timestampAtOffset(magic0, 7), undefined);
  const magic1 = Buffer.alloc(12 + 22);
  magic1.writeBigInt64BE(7n, 0);
  magic1.writeInt32BE(22, 8);
  magic1.writeInt8(1, 16);
  magic1.writeBigInt64BE(BigInt(BASE_TS), 18);
  magic1.writeInt32BE(-1, 26);
  magic1.writeInt32BE(-1, 30);
  assert.equal(await timestampAtOffset(magic1, 7), BASE_TS);
});
