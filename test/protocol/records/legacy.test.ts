import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { gzipSync } from 'node:zlib';
import { crc32 } from '@node-rs/crc32';
import fc from 'fast-check';
import { CompressionType } from '../../../src/protocol/records/batch-header.js';
import { TimestampType, decodeBatch, encodeBatch } from '../../../src/protocol/records/batch.js';
import { ControlRecordType, encodeControlBatch } from '../../../src/protocol/records/control.js';
import { RecordsError } from '../../../src/protocol/records/errors.js';
import {
  type LegacyMagic,
  convertLegacyToV2,
  downConvert,
  downConvertAsync,
  encodeLegacyMessageSet,
  readLegacyMessageSet,
} from '../../../src/protocol/records/legacy.js';
import { bytesOrNull, records } from './arbitraries.js';
import { flipByte } from '../../helpers/corrupt.js';

const NO_LIMITS = { maxOutputBytes: 1 << 30, maxDecompressedBytes: 1 << 30 };

const require = createRequire(import.meta.url);
type CodecFactory = () => { compress(e: { buffer: Buffer }): Promise<Buffer>; decompress(b: Buffer): Promise<Buffer> };
const kafkajs = require('kafkajs') as { CompressionCodecs: { [type: number]: CodecFactory } };
const LZ4Codec = require('kafkajs-lz4') as new () => { codec: CodecFactory };
kafkajs.CompressionCodecs[CompressionType.Snappy] = require('kafkajs-snappy') as CodecFactory;
kafkajs.CompressionCodecs[CompressionType.Lz4] = new LZ4Codec().codec;
const KafkaJsDecoder = require('kafkajs/src/protocol/decoder') as new (b: Buffer) => unknown;
const decodeKafkaJsMessageSet = require('kafkajs/src/protocol/messageSet/decoder') as (
  d: unknown,
  size: number,
) => Promise<{ offset: string; magicByte: number; key: Buffer | null; value: Buffer | null; timestamp?: string }[]>;
const KafkaJsMessageSet = require('kafkajs/src/protocol/messageSet') as (args: {
  messageVersion: number;
  compression?: number;
  entries: { key?: Buffer | null; value: Buffer | null; timestamp?: number; compression?: number }[];
}) => { buffer: Buffer };

const LEGACY_CODECS = [CompressionType.None, CompressionType.Gzip, CompressionType.Snappy, CompressionType.Lz4];
const messages = fc.array(fc.record({ timestamp: fc.bigInt({ min: 0n, max: 2n ** 42n }), key: bytesOrNull, value: bytesOrNull }), {
  minLength: 1,
  maxLength: 25,
});
const magicArb = fc.constantFrom<LegacyMagic>(0, 1);

test('legacy message sets round-trip through our reader and decode with kafkajs', async () => {
  await fc.assert(
    fc.asyncProperty(
      messages,
      magicArb,
      fc.constantFrom(...LEGACY_CODECS),
      fc.bigInt({ min: 0n, max: 2n ** 40n }),
      async (ms, magic, compression, baseOffset) => {
        const set = encodeLegacyMessageSet({ magic, messages: ms, compression, baseOffset });
        const read = readLegacyMessageSet(set);
        assert.equal(read.compression, compression);
        assert.equal(read.messages.length, ms.length);
        read.messages.forEach((m, i) => {
          assert.equal(m.offset, baseOffset + BigInt(i));
          assert.equal(m.magic, magic);
          assert.equal(m.timestamp, magic === 1 ? ms[i]?.timestamp : -1n);
          assert.deepEqual(m.key, ms[i]?.key);
          assert.deepEqual(m.value, ms[i]?.value);
        });
        // kafkajs' lz4 package rejects Kafka's broken magic-0 header checksum, as old clients did.
        if (compression === CompressionType.Lz4 && magic === 0) return;
        const theirs = await decodeKafkaJsMessageSet(new KafkaJsDecoder(set), set.length);
        assert.equal(theirs.length, ms.length);
        theirs.forEach((m, i) => {
          assert.equal(m.magicByte, magic);
          assert.deepEqual(m.key, ms[i]?.key);
          assert.deepEqual(m.value, ms[i]?.value);
          if (magic === 1) assert.equal(m.timestamp, ms[i]?.timestamp.toString());
          if (compression === CompressionType.None || magic === 1) assert.equal(m.offset, (baseOffset + BigInt(i)).toString());
        });
      },
    ),
    { numRuns: 60 },
  );
});

test('convertLegacyToV2 yields one v2 batch with the same records', () => {
  fc.assert(
    fc.property(messages, magicArb, fc.constantFrom(...LEGACY_CODECS), (ms, magic, compression) => {
      const v2 = convertLegacyToV2(encodeLegacyMessageSet({ magic, messages: ms, compression, baseOffset: 500n }));
      const b = decodeBatch(v2, 0, { maxBytes: 1 << 30 });
      assert.equal(b.compression, compression);
      assert.equal(b.baseOffset, 0n);
      assert.equal(b.records.length, ms.length);
      assert.equal(b.lastOffsetDelta, ms.length - 1);
      const expectedTs = ms.map((m) => (magic === 1 ? m.timestamp : -1n));
      assert.equal(
        b.maxTimestamp,
        expectedTs.reduce((a, c) => (c > a ? c : a)),
      );
      b.records.forEach((r, i) => {
        assert.equal(r.offsetDelta, i);
        assert.equal(b.baseTimestamp + BigInt(r.timestampDelta), expectedTs[i]);
        assert.deepEqual(r.key, ms[i]?.key);
        assert.deepEqual(r.value, ms[i]?.value);
        assert.deepEqual(r.headers, []);
      });
      const preserved = decodeBatch(
        convertLegacyToV2(encodeLegacyMessageSet({ magic, messages: ms, baseOffset: 500n }), { preserveOffsets: true, compression: CompressionType.Zstd }),
        0,
        { maxBytes: 1 << 30 },
      );
      assert.equal(preserved.baseOffset, 500n);
      assert.equal(preserved.compression, CompressionType.Zstd);
    }),
    { numRuns: 60 },
  );
});

test('convertLegacyToV2 reads what kafkajs produces with Produce v2 (magic 1, compressed wrapper)', async () => {
  for (const compression of LEGACY_CODECS) {
    const entries = [0, 1, 2].map((i) => ({ key: Buffer.from(`k${i}`), value: Buffer.from(`value-${i}`), timestamp: 1_700_000_000_000 + i }));
    let set: Buffer;
    if (compression === CompressionType.None) {
      set = KafkaJsMessageSet({ messageVersion: 1, compression, entries }).buffer;
    } else {
      const inner = KafkaJsMessageSet({ messageVersion: 1, compression, entries });
      const codec = kafkajs.CompressionCodecs[compression];
      assert.ok(codec, `kafkajs has codec ${compression}`);
      const compressed = await codec().compress(inner);
      set = KafkaJsMessageSet({ messageVersion: 1, entries: [{ compression, timestamp: entries[0]?.timestamp, value: compressed }] }).buffer;
    }
    const b = decodeBatch(convertLegacyToV2(set), 0, { maxBytes: 1 << 30 });
    assert.equal(b.compression, compression);
    assert.deepEqual(
      b.records.map((r) => [r.key?.toString(), r.value?.toString(), b.baseTimestamp + BigInt(r.timestampDelta)]),
      entries.map((e) => [e.key.toString(), e.value.toString(), BigInt(e.timestamp)]),
    );
  }
});

test('LogAppendTime wrappers stamp inner messages with the wrapper timestamp', () => {
  const ms = [
    { timestamp: 5n, key: null, value: Buffer.from('a') },
    { timestamp: 9n, key: null, value: Buffer.from('b') },
  ];
  const set = encodeLegacyMessageSet({ magic: 1, messages: ms, compression: CompressionType.Gzip, timestampType: TimestampType.LogAppendTime });
  const read = readLegacyMessageSet(set);
  assert.deepEqual(
    read.messages.map((m) => [m.timestamp, m.timestampType]),
    [
      [9n, TimestampType.LogAppendTime],
      [9n, TimestampType.LogAppendTime],
    ],
  );
  const b = decodeBatch(convertLegacyToV2(set), 0, { maxBytes: 1 << 30 });
  assert.equal(b.timestampType, TimestampType.LogAppendTime);
  assert.equal(b.maxTimestamp, 9n);
});

test('legacy CRC32 catches single-byte mutations', () => {
  fc.assert(
    fc.property(messages, magicArb, fc.nat(), fc.integer({ min: 1, max: 255 }), (ms, magic, where, xor) => {
      const set = encodeLegacyMessageSet({ magic, messages: ms.slice(0, 1) });
      const pos = 16 + (where % (set.length - 16));
      flipByte(set, pos, xor);
      // A flipped magic byte may turn the entry into another format (magic 2 is a v2 batch),
      // so the refusal may name the length or layout rather than the CRC: any RecordsError.
      assert.throws(
        () => readLegacyMessageSet(set),
        (e: unknown) => e instanceof RecordsError,
      );
    }),
    { numRuns: 200 },
  );
});

test('downConvert turns v2 batches into legacy messages kafkajs and we can read', async () => {
  await fc.assert(
    fc.asyncProperty(records, magicArb, fc.constantFrom(...LEGACY_CODECS, CompressionType.Zstd), async (rs, toMagic, compression) => {
      const a = encodeBatch({ records: rs, baseOffset: 100n, baseTimestamp: 1_000_000n, compression });
      const control = encodeControlBatch({
        type: ControlRecordType.Commit,
        producerId: 1n,
        producerEpoch: 0,
        coordinatorEpoch: 0,
        timestamp: 1n,
        baseOffset: 100n + BigInt(rs.length),
      });
      const b = encodeBatch({ records: rs, baseOffset: 200n, baseTimestamp: 2_000_000n, timestampType: TimestampType.LogAppendTime, maxTimestamp: 3_000_000n });
      const input = Buffer.concat([a, control, b, b.subarray(0, 30)]); // partial trailing batch
      const legacy = downConvert(input, toMagic, NO_LIMITS).records;
      assert.deepEqual((await downConvertAsync(input, toMagic, NO_LIMITS)).records, legacy);
      const read = readLegacyMessageSet(legacy).messages;
      assert.equal(read.length, rs.length * 2);
      read.forEach((m, i) => {
        const r = rs[i % rs.length];
        assert.ok(r);
        const second = i >= rs.length;
        assert.equal(m.magic, toMagic);
        assert.equal(m.offset, (second ? 200n : 100n) + BigInt(r.offsetDelta));
        const ts = second ? 3_000_000n : 1_000_000n + BigInt(r.timestampDelta);
        assert.equal(m.timestamp, toMagic === 1 ? ts : -1n);
        if (toMagic === 1) assert.equal(m.timestampType, second ? TimestampType.LogAppendTime : TimestampType.CreateTime);
        assert.deepEqual(m.key, r.key);
        assert.deepEqual(m.value, r.value);
      });
      const theirs = await decodeKafkaJsMessageSet(new KafkaJsDecoder(legacy), legacy.length);
      assert.deepEqual(
        theirs.map((m) => m.offset),
        read.map((m) => m.offset.toString()),
      );
    }),
    { numRuns: 30 },
  );
});

test('downConvert copies entries already at the target magic and lowers magic 1 to 0', () => {
  const ms = [{ timestamp: 7n, key: Buffer.from('k'), value: Buffer.from('v') }];
  const v0 = encodeLegacyMessageSet({ magic: 0, messages: ms, baseOffset: 3n });
  const v1 = encodeLegacyMessageSet({ magic: 1, messages: ms, baseOffset: 4n, compression: CompressionType.Snappy });
  assert.deepEqual(downConvert(v0, 1, NO_LIMITS).records, v0);
  const lowered = readLegacyMessageSet(downConvert(Buffer.concat([v0, v1]), 0, NO_LIMITS).records).messages;
  assert.deepEqual(
    lowered.map((m) => [m.magic, m.offset, m.timestamp]),
    [
      [0, 3n, -1n],
      [0, 4n, -1n],
    ],
  );
});

test('v2 -> magic 1 -> v2 preserves offsets, timestamps, keys and values', () => {
  fc.assert(
    fc.property(records, (rs) => {
      const original = encodeBatch({ records: rs, baseOffset: 42n, baseTimestamp: 10_000_000n });
      const back = decodeBatch(convertLegacyToV2(downConvert(original, 1, NO_LIMITS).records, { preserveOffsets: true }), 0, { maxBytes: 1 << 30 });
      const before = decodeBatch(original, 0, { maxBytes: 1 << 30 });
      assert.equal(back.baseOffset, 42n);
      back.records.forEach((r, i) => {
        const o = before.records[i];
        assert.ok(o);
        assert.equal(r.offsetDelta, o.offsetDelta);
        assert.equal(back.baseTimestamp + BigInt(r.timestampDelta), before.baseTimestamp + BigInt(o.timestampDelta));
        assert.deepEqual([r.key, r.value], [o.key, o.value]);
      });
    }),
    { numRuns: 40 },
  );
});

test('convertLegacyToV2 rejects v2 input and nested compression; empty input gives an empty buffer', () => {
  const v2 = encodeBatch({ records: [{ attributes: 0, timestampDelta: 0, offsetDelta: 0, key: null, value: null, headers: [] }] });
  assert.throws(
    () => convertLegacyToV2(v2),
    (e: unknown) => e instanceof RecordsError && e.reason === 'bad_magic',
  );
  assert.equal(convertLegacyToV2(Buffer.alloc(0)).length, 0);
  // A wrapper whose inner set is itself a compressed wrapper: Kafka never allows nesting.
  const inner = encodeLegacyMessageSet({ magic: 1, messages: [{ key: null, value: Buffer.from('x') }], compression: CompressionType.Gzip });
  const outer = encodeLegacyMessageSet({ magic: 1, messages: [{ key: null, value: gzipSync(inner) }] });
  outer.writeInt8(CompressionType.Gzip, 17); // mark the outer message as a gzip wrapper
  outer.writeUInt32BE(crc32(outer.subarray(16)) >>> 0, 12);
  assert.throws(
    () => readLegacyMessageSet(outer),
    (e: unknown) => e instanceof RecordsError && e.reason === 'bad_record',
  );
});

test('magic-1 wrappers with a placeholder offset keep relative inner offsets (as Kafka does)', () => {
  const ms = ['a', 'b', 'c'].map((v) => ({ key: null, value: Buffer.from(v), timestamp: 1n }));
  const set = encodeLegacyMessageSet({ magic: 1, messages: ms, compression: CompressionType.Gzip });
  set.writeBigInt64BE(0n, 0); // producers may write 0 instead of the last inner offset; not covered by the CRC
  assert.deepEqual(
    readLegacyMessageSet(set).messages.map((m) => m.offset),
    [0n, 1n, 2n],
  );
  set.writeBigInt64BE(12n, 0);
  assert.deepEqual(
    readLegacyMessageSet(set).messages.map((m) => m.offset),
    [10n, 11n, 12n],
  );
});
