/**
 * Produce-path validation of the records INSIDE batches, as Kafka's LogValidator does: compressed
 * batches are decompressed (with a cap) and walked, compacted topics refuse keyless records with
 * per-record errors, and legacy message sets are converted under the same bounds.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ErrorCode } from '../../src/protocol/errors.js';
import {
  CompressionType,
  ATTR_TIMESTAMP_TYPE,
  MAX_TIMESTAMP,
  RECORDS_COUNT,
  LAST_OFFSET_DELTA,
  compress,
  decodeBatch,
  encodeBatch,
  encodeLegacyMessageSet,
  encodeRecords,
  isCrcValid,
  rewriteCrc,
  type KafkaRecord,
} from '../../src/protocol/records/index.js';
import { prepareProducedRecords, prepareUncompressedRecords, type ProduceLimits } from '../../src/storage/append/produce-validation.js';
import { legacyGzipBomb, rawV2Batch, v2Bomb } from '../helpers/bombs.js';

const CODECS = [CompressionType.None, CompressionType.Gzip, CompressionType.Snappy, CompressionType.Lz4, CompressionType.Zstd];
const LIMITS: ProduceLimits = { maxMessageBytes: 1048588, maxUncompressedBytes: 32 * 1048588, compacted: false, topicPartition: 't-0' };

function rec(i: number, key: string | null, value = `v${i}`): KafkaRecord {
  return { attributes: 0, timestampDelta: i, offsetDelta: i, key: key === null ? null : Buffer.from(key), value: Buffer.from(value), headers: [] };
}

function batch(records: KafkaRecord[], compression: CompressionType, extra: { maxTimestamp?: bigint } = {}): Buffer {
  return encodeBatch({ records, compression, baseTimestamp: 1_700_000_000_000n, ...extra });
}

test('a batch whose records do not match its header is refused, compressed or not', async () => {
  for (const codec of CODECS) {
    const buf = batch([rec(0, 'a'), rec(1, 'b'), rec(2, 'c')], codec);
    // Claim one record more than the section holds (count and lastOffsetDelta stay consistent).
    buf.writeInt32BE(4, RECORDS_COUNT);
    buf.writeInt32BE(3, LAST_OFFSET_DELTA);
    rewriteCrc(buf, 0);
    const res = await prepareProducedRecords(buf, { fromClient: true, produceVersion: 7, limits: LIMITS });
    assert.equal(res.ok, false, `codec ${codec}`);
    if (!res.ok) assert.equal(res.errorCode, ErrorCode.INVALID_RECORD, `codec ${codec}: ${res.message}`);
  }
});

test('compressed batches with malformed records or offset deltas are refused', async () => {
  for (const codec of CODECS.slice(1)) {
    const garbage = rawV2Batch(compress(codec, Buffer.from([0x7f, 1, 2, 3, 4, 5])), 1, codec);
    const res = await prepareProducedRecords(garbage, { fromClient: true, limits: LIMITS });
    assert.equal(res.ok, false);
    if (!res.ok) assert.equal(res.errorCode, ErrorCode.CORRUPT_MESSAGE, `codec ${codec}: ${res.message}`);

    const section = encodeRecords([rec(0, 'a'), { ...rec(1, 'b'), offsetDelta: 5 }]);
    const badDeltas = rawV2Batch(compress(codec, section), 2, codec);
    const r2 = await prepareProducedRecords(badDeltas, { fromClient: true, limits: LIMITS });
    assert.equal(r2.ok, false);
    if (!r2.ok) assert.equal(r2.errorCode, ErrorCode.INVALID_RECORD, `codec ${codec}: ${r2.message}`);

    // A header with a null key: Kafka refuses "Invalid negative header key size".
    const withHeader = encodeRecords([{ ...rec(0, 'a'), headers: [{ key: 'h', value: Buffer.from('x') }] }]);
    const at = withHeader.indexOf(Buffer.from([2, 0x68])); // header key length 1 (zigzag 2), then 'h'
    withHeader[at] = 1; // zigzag 1 = -1
    const r3 = await prepareProducedRecords(rawV2Batch(compress(codec, withHeader), 1, codec), { fromClient: true, limits: LIMITS });
    assert.equal(r3.ok, false, `codec ${codec}`);
  }
});

test('a compacted topic refuses keyless records with per-record errors, as Kafka does', async () => {
  const limits = { ...LIMITS, compacted: true, topicPartition: 'compacted-3' };
  for (const codec of CODECS) {
    const buf = batch([rec(0, 'a'), rec(1, null), rec(2, 'c'), rec(3, null)], codec);
    const res = await prepareProducedRecords(buf, { fromClient: true, produceVersion: 8, limits });
    assert.equal(res.ok, false, `codec ${codec}`);
    if (res.ok) continue;
    assert.equal(res.errorCode, ErrorCode.INVALID_RECORD);
    const msg = 'Compacted topic cannot accept message without key in topic partition compacted-3';
    assert.deepEqual(res.recordErrors, [
      { batchIndex: 1, message: msg },
      { batchIndex: 3, message: msg },
    ]);
    assert.match(res.message, /One or more records have been rejected due to 2 record errors/);
    const keyed = batch([rec(0, 'a'), rec(1, 'b')], codec);
    assert.equal((await prepareProducedRecords(keyed, { fromClient: true, limits })).ok, true, `codec ${codec}`);
    // Not compacted: keyless records are fine.
    assert.equal((await prepareProducedRecords(batch([rec(0, null)], codec), { fromClient: true, limits: LIMITS })).ok, true);
  }
  // Legacy sets too.
  const legacy = encodeLegacyMessageSet({
    magic: 1,
    compression: CompressionType.Gzip,
    messages: [
      { key: Buffer.from('k'), value: Buffer.from('a') },
      { key: null, value: Buffer.from('b') },
    ],
  });
  const res = await prepareProducedRecords(legacy, { fromClient: true, produceVersion: 2, limits });
  assert.equal(res.ok, false);
  if (!res.ok)
    assert.deepEqual(
      res.recordErrors.map((e) => e.batchIndex),
      [1],
    );
});

test('a batch claiming LogAppendTime from a client is refused with INVALID_TIMESTAMP', async () => {
  const buf = encodeBatch({ records: [rec(0, 'a')], baseTimestamp: 1n, compression: CompressionType.None });
  buf.writeInt16BE(buf.readInt16BE(21) | ATTR_TIMESTAMP_TYPE, 21);
  rewriteCrc(buf, 0);
  const res = await prepareProducedRecords(buf, { fromClient: true, limits: LIMITS });
  assert.equal(res.ok, false);
  if (!res.ok) assert.equal(res.errorCode, ErrorCode.INVALID_TIMESTAMP);
});

test('the header max timestamp is set from the records, as Kafka does', async () => {
  for (const codec of CODECS) {
    const buf = batch([rec(0, 'a'), rec(1, 'b'), rec(2, 'c')], codec, { maxTimestamp: 9_999_999_999_999n });
    const res = await prepareProducedRecords(buf, { fromClient: true, limits: LIMITS });
    assert.ok(res.ok, `codec ${codec}`);
    if (!res.ok) continue;
    assert.equal(res.batches.readBigInt64BE(MAX_TIMESTAMP), 1_700_000_000_002n, `codec ${codec}`);
    assert.ok(isCrcValid(res.batches, 0));
  }
});

test('compression bombs are refused with MESSAGE_TOO_LARGE quickly, legacy or v2', async () => {
  for (const [what, records] of [
    ['legacy gzip 100 MB', legacyGzipBomb(100)],
    ['v2 gzip 200 MB', v2Bomb(CompressionType.Gzip, 200)],
    ['v2 zstd 200 MB', v2Bomb(CompressionType.Zstd, 200)],
  ] as const) {
    const t0 = performance.now();
    const res = await prepareProducedRecords(records, { fromClient: true, produceVersion: 2, limits: LIMITS });
    const ms = performance.now() - t0;
    assert.equal(res.ok, false, what);
    if (!res.ok) assert.equal(res.errorCode, ErrorCode.MESSAGE_TOO_LARGE, `${what}: ${res.message}`);
    assert.ok(ms < 5000, `${what} took ${ms.toFixed(0)} ms`);
  }
  // A legacy set bigger than max.message.bytes is refused before anything is inflated.
  const big = legacyGzipBomb(2900);
  assert.ok(big.length > LIMITS.maxMessageBytes);
  const res = await prepareProducedRecords(big, { fromClient: true, produceVersion: 2, limits: LIMITS });
  assert.equal(res.ok, false);
  if (!res.ok) assert.equal(res.errorCode, ErrorCode.MESSAGE_TOO_LARGE);
});

test('large legitimate compressed batches and legacy sets are accepted', async () => {
  // kafkajs sends everything given to one send() as one batch: 40,000 records, ~16 MB inflated.
  const records = Array.from({ length: 40_000 }, (_, i) => rec(i, `key-${i}`, `value ${i % 100}`.padEnd(400, '-')));
  for (const codec of CODECS.slice(1)) {
    // Snappy compresses this data least: half as many records keep its batch under 1 MB.
    const buf = batch(codec === CompressionType.Snappy ? records.slice(0, 20_000) : records, codec);
    assert.ok(buf.length < LIMITS.maxMessageBytes, `codec ${codec} batch is ${buf.length} bytes`);
    const res = await prepareProducedRecords(buf, { fromClient: true, produceVersion: 7, limits: LIMITS });
    assert.ok(res.ok, `codec ${codec}: ${res.ok ? '' : res.message}`);
  }
  for (const codec of [CompressionType.None, CompressionType.Gzip, CompressionType.Snappy, CompressionType.Lz4]) {
    for (const magic of [0, 1] as const) {
      const n = codec === CompressionType.None ? 500 : 20_000;
      const messages = Array.from({ length: n }, (_, i) => ({
        key: i % 3 ? Buffer.from(`k${i}`) : null,
        value: Buffer.from(`legacy ${i}`),
        timestamp: magic === 1 ? 1_700_000_000_000n + BigInt(i % 7) : undefined,
      }));
      const set = encodeLegacyMessageSet({ magic, messages, compression: codec });
      const res = await prepareProducedRecords(set, { fromClient: true, produceVersion: 2, limits: LIMITS });
      assert.ok(res.ok, `magic ${magic} codec ${codec}: ${res.ok ? '' : res.message}`);
      if (!res.ok) continue;
      const b = decodeBatch(res.batches, 0, { maxBytes: 64 << 20 });
      assert.equal(b.compression, codec);
      assert.equal(b.records.length, n);
      assert.deepEqual(
        b.records.map((r) => r.offsetDelta),
        Array.from({ length: n }, (_, i) => i),
      );
      assert.deepEqual(
        b.records.map((r) => r.key?.toString() ?? null),
        messages.map((m) => m.key?.toString() ?? null),
      );
      assert.deepEqual(
        b.records.map((r) => r.value?.toString()),
        messages.map((m) => m.value.toString()),
      );
      if (magic === 1) {
        assert.equal(b.baseTimestamp, 1_700_000_000_000n);
        assert.equal(b.maxTimestamp, 1_700_000_000_006n);
        assert.deepEqual(
          b.records.slice(0, 8).map((r) => r.timestampDelta),
          [0, 1, 2, 3, 4, 5, 6, 0],
        );
      } else {
        assert.equal(b.baseTimestamp, -1n);
      }
    }
  }
});

test('legacy sets converting to more than 1 MiB of records are re-compressed off the event loop, decodable', async () => {
  for (const codec of [CompressionType.Gzip, CompressionType.Snappy, CompressionType.Lz4]) {
    const messages = Array.from({ length: 4000 }, (_, i) => ({
      key: Buffer.from(`k${i}`),
      value: Buffer.from(`value ${i} `.padEnd(1000, 'z')),
      timestamp: 1_700_000_000_000n,
    }));
    const set = encodeLegacyMessageSet({ magic: 1, messages, compression: codec });
    assert.ok(set.length < LIMITS.maxMessageBytes);
    const res = await prepareProducedRecords(set, { fromClient: true, produceVersion: 2, limits: LIMITS });
    assert.ok(res.ok, `codec ${codec}: ${res.ok ? '' : res.message}`);
    if (!res.ok) continue;
    const b = decodeBatch(res.batches, 0, { maxBytes: 64 << 20 });
    assert.equal(b.compression, codec);
    assert.equal(b.records.length, 4000);
    assert.equal(b.records[3999]!.value!.toString(), messages[3999]!.value.toString());
  }
});

test('message.timestamp.difference.max.ms: records too far from the broker clock are INVALID_TIMESTAMP, per record', async () => {
  const now = BigInt(Date.now());
  const limits = { ...LIMITS, timestampDifferenceMaxMs: 60_000 };
  for (const codec of CODECS) {
    const records = [rec(0, 'a'), { ...rec(1, 'b'), timestampDelta: 3_600_000 }, rec(2, 'c')];
    const buf = encodeBatch({ records, compression: codec, baseTimestamp: now });
    const res = await prepareProducedRecords(buf, { fromClient: true, limits });
    assert.equal(res.ok, false, `codec ${codec}`);
    if (res.ok) continue;
    assert.equal(res.errorCode, ErrorCode.INVALID_TIMESTAMP);
    assert.deepEqual(
      res.recordErrors.map((e) => e.batchIndex),
      [1],
    );
    assert.match(res.recordErrors[0]!.message, new RegExp(`^Timestamp ${now + 3_600_000n} of message with offset 1 is out of range`));
    // Within range, or unchecked (Kafka's default): accepted.
    assert.ok((await prepareProducedRecords(encodeBatch({ records: [rec(0, 'a')], compression: codec, baseTimestamp: now }), { fromClient: true, limits })).ok);
    assert.ok((await prepareProducedRecords(encodeBatch({ records, compression: codec, baseTimestamp: now }), { fromClient: true, limits: LIMITS })).ok);
  }
  const legacy = encodeLegacyMessageSet({
    magic: 1,
    compression: CompressionType.Gzip,
    messages: [
      { key: null, value: Buffer.from('a'), timestamp: now },
      { key: null, value: Buffer.from('b'), timestamp: 1n },
    ],
  });
  const res = await prepareProducedRecords(legacy, { fromClient: true, produceVersion: 2, limits });
  assert.equal(res.ok, false);
  if (!res.ok) {
    assert.equal(res.errorCode, ErrorCode.INVALID_TIMESTAMP);
    assert.deepEqual(
      res.recordErrors.map((e) => e.batchIndex),
      [1],
    );
  }
});

test('the promise-free path for uncompressed v2 batches answers as prepareProducedRecords does, and declines anything else', async () => {
  const now = BigInt(Date.now());
  const overCount = batch([rec(0, 'a'), rec(1, 'b')], CompressionType.None);
  overCount.writeInt32BE(3, RECORDS_COUNT);
  overCount.writeInt32BE(2, LAST_OFFSET_DELTA);
  rewriteCrc(overCount, 0);
  const logAppendTime = batch([rec(0, 'a')], CompressionType.None);
  logAppendTime.writeInt16BE(logAppendTime.readInt16BE(21) | ATTR_TIMESTAMP_TYPE, 21);
  rewriteCrc(logAppendTime, 0);
  const cases: [string, Buffer, { fromClient: boolean; produceVersion?: number; limits: ProduceLimits }][] = [
    ['valid', batch([rec(0, 'a'), rec(1, 'b')], CompressionType.None), { fromClient: true, produceVersion: 9, limits: LIMITS }],
    ['max timestamp set from the records', batch([rec(0, 'a'), rec(1, 'b')], CompressionType.None, { maxTimestamp: 5n }), { fromClient: true, limits: LIMITS }],
    ['count beyond the records', overCount, { fromClient: true, produceVersion: 9, limits: LIMITS }],
    ['keyless on a compacted topic', batch([rec(0, null), rec(1, 'b')], CompressionType.None), { fromClient: true, limits: { ...LIMITS, compacted: true } }],
    ['LogAppendTime from a client', logAppendTime, { fromClient: true, limits: LIMITS }],
    ['too large', batch([rec(0, 'a', 'x'.repeat(2000))], CompressionType.None), { fromClient: true, limits: { ...LIMITS, maxMessageBytes: 1000 } }],
    [
      'two batches at v3+',
      Buffer.concat([batch([rec(0, 'a')], CompressionType.None), batch([rec(0, 'b')], CompressionType.None)]),
      { fromClient: true, produceVersion: 3, limits: LIMITS },
    ],
    [
      'two batches at v2',
      Buffer.concat([batch([rec(0, 'a')], CompressionType.None), batch([rec(0, 'b')], CompressionType.None)]),
      { fromClient: true, produceVersion: 2, limits: LIMITS },
    ],
    [
      'a timestamp out of range',
      encodeBatch({ records: [rec(0, 'a')], compression: CompressionType.None, baseTimestamp: now + 7_200_000n }),
      { fromClient: true, limits: { ...LIMITS, timestampDifferenceMaxMs: 3_600_000 } },
    ],
  ];
  // An out-of-range timestamp's message names the window around each call's own clock, which may
  // tick between the two calls: compare the rest, and check the window against the clock here.
  const windowOf = (r: unknown): string => JSON.stringify(r).replace(/within \[(\d+), (\d+)\]/g, 'within [window]');
  for (const [what, buf, opts] of cases) {
    const [viaSync, viaAsync] = [Buffer.from(buf), Buffer.from(buf)];
    const before = Date.now();
    const now = prepareUncompressedRecords(viaSync, opts);
    const after = Date.now();
    assert.ok(now !== undefined, `${what}: the promise-free path declined`);
    assert.deepEqual(JSON.parse(windowOf(now)), JSON.parse(windowOf(await prepareProducedRecords(viaAsync, opts))), what);
    for (const m of JSON.stringify(now).matchAll(/within \[(\d+), (\d+)\]/g)) {
      const max = opts.limits.timestampDifferenceMaxMs ?? Number.NaN;
      assert.ok(Number(m[1]) >= before - max && Number(m[1]) <= after - max, `${what}: the window starts ${max} ms before the clock`);
      assert.equal(Number(m[2]) - Number(m[1]), 2 * max, `${what}: the window is ${max} ms either side`);
    }
    assert.ok(viaSync.equals(viaAsync), `${what}: the same bytes (max timestamp, CRC)`);
  }
  assert.equal(prepareUncompressedRecords(batch([rec(0, 'a')], CompressionType.Lz4), { fromClient: true, limits: LIMITS }), undefined);
  const legacy = encodeLegacyMessageSet({ magic: 1, compression: CompressionType.None, messages: [{ key: null, value: Buffer.from('a'), timestamp: now }] });
  assert.equal(prepareUncompressedRecords(legacy, { fromClient: true, produceVersion: 2, limits: LIMITS }), undefined);
  assert.equal(prepareUncompressedRecords(null, { fromClient: true, limits: LIMITS }), undefined);
  assert.equal(prepareUncompressedRecords(batch([rec(0, 'a')], CompressionType.None).subarray(0, 70), { fromClient: true, limits: LIMITS }), undefined);
});

test('the header max timestamp is set exactly beyond 2^53 too, and left alone (CRC and all) when right', async () => {
  const huge = encodeBatch({ records: [rec(0, 'a'), rec(1, 'b')], compression: CompressionType.None, baseTimestamp: 2n ** 60n, maxTimestamp: 5n });
  const res = await prepareProducedRecords(huge, { fromClient: true, limits: LIMITS });
  assert.ok(res.ok);
  if (res.ok) assert.equal(res.batches.readBigInt64BE(MAX_TIMESTAMP), 2n ** 60n + 1n);
  const right = batch([rec(0, 'a'), rec(1, 'b')], CompressionType.None, { maxTimestamp: 1_700_000_000_001n });
  const before = Buffer.from(right);
  assert.ok((await prepareProducedRecords(right, { fromClient: true, limits: LIMITS })).ok);
  assert.ok(right.equals(before));
});
