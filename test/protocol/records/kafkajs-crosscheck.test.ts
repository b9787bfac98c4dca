/**
 * Cross-check against an independent implementation: kafkajs's own RecordBatch encoder and
 * decoder (with kafkajs-snappy and kafkajs-lz4 registered as its codecs).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import fc from 'fast-check';
import { CompressionType } from '../../../src/protocol/records/batch-header.js';
import { decodeBatch, encodeBatch, validateBatchHeader } from '../../../src/protocol/records/batch.js';
import type { KafkaRecord } from '../../../src/protocol/records/record.js';
import { bytesOrNull, records } from './arbitraries.js';

const require = createRequire(import.meta.url);

interface KafkaJsEncoder {
  buffer: Buffer;
}
interface KafkaJsDecodedRecord {
  offset: string;
  timestamp: string;
  key: Buffer | null;
  value: Buffer | null;
  headers: { [key: string]: Buffer | null | (Buffer | null)[] };
}
interface KafkaJsDecodedBatch {
  firstOffset: string;
  firstTimestamp: string;
  maxTimestamp: string;
  producerId: string;
  producerEpoch: number;
  firstSequence: number;
  inTransaction: boolean;
  isControlBatch: boolean;
  lastOffsetDelta: number;
  records: KafkaJsDecodedRecord[];
}
type CodecFactory = () => { compress(e: KafkaJsEncoder): Promise<Buffer>; decompress(b: Buffer): Promise<Buffer> };

const kafkajs = require('kafkajs') as { CompressionCodecs: { [type: number]: CodecFactory } };
const SnappyCodec = require('kafkajs-snappy') as CodecFactory;
const LZ4Codec = require('kafkajs-lz4') as new () => { codec: CodecFactory };
kafkajs.CompressionCodecs[CompressionType.Snappy] = SnappyCodec;
kafkajs.CompressionCodecs[CompressionType.Lz4] = new LZ4Codec().codec;

const Long = require('kafkajs/src/utils/long') as { fromString(s: string): unknown };
const { RecordBatch } = require('kafkajs/src/protocol/recordBatch/v0') as {
  RecordBatch(args: {
    compression: number;
    firstOffset: unknown;
    firstTimestamp: number;
    maxTimestamp: number;
    lastOffsetDelta: number;
    transactional: boolean;
    producerId: unknown;
    producerEpoch: number;
    firstSequence: number;
    partitionLeaderEpoch: number;
    records: KafkaJsEncoder[];
  }): Promise<KafkaJsEncoder>;
};
const KafkaJsRecord = require('kafkajs/src/protocol/recordBatch/record/v0') as (r: {
  offsetDelta: number;
  timestampDelta: number;
  key: Buffer | null;
  value: Buffer | null;
  headers: { [key: string]: Buffer };
}) => KafkaJsEncoder;
const KafkaJsBatchDecoder = require('kafkajs/src/protocol/recordBatch/v0/decoder') as (d: unknown) => Promise<KafkaJsDecodedBatch>;
const KafkaJsDecoder = require('kafkajs/src/protocol/decoder') as new (b: Buffer) => unknown;

const KAFKAJS_CODECS = [CompressionType.None, CompressionType.Gzip, CompressionType.Snappy, CompressionType.Lz4];

/** kafkajs groups headers by key; fold ours the same way to compare. */
function foldHeaders(r: KafkaRecord): { [key: string]: Buffer | null | (Buffer | null)[] } {
  const out: { [key: string]: Buffer | null | (Buffer | null)[] } = {};
  for (const h of r.headers) {
    const prev = out[h.key];
    if (prev === undefined) out[h.key] = h.value;
    else out[h.key] = Array.isArray(prev) ? [...prev, h.value] : [prev, h.value];
  }
  return out;
}

for (const compression of KAFKAJS_CODECS) {
  test(`kafkajs decodes our ${CompressionType[compression]} batches to the same records`, async () => {
    await fc.assert(
      fc.asyncProperty(records, fc.bigInt({ min: 0n, max: 2n ** 40n }), fc.bigInt({ min: 0n, max: 2n ** 42n }), async (rs, baseOffset, baseTs) => {
        // kafkajs keeps headers in a plain object: a key such as "__proto__" cannot survive there.
        fc.pre(!rs.some((r) => r.headers.some((h) => h.key in Object.prototype)));
        const ours = encodeBatch({
          records: rs,
          compression,
          baseOffset,
          baseTimestamp: baseTs,
          producerId: 5n,
          producerEpoch: 1,
          baseSequence: 7,
          isTransactional: true,
        });
        const theirs = await KafkaJsBatchDecoder(new KafkaJsDecoder(ours));
        assert.equal(theirs.firstOffset, baseOffset.toString());
        assert.equal(theirs.firstTimestamp, baseTs.toString());
        assert.equal(theirs.producerId, '5');
        assert.equal(theirs.producerEpoch, 1);
        assert.equal(theirs.firstSequence, 7);
        assert.equal(theirs.inTransaction, true);
        assert.equal(theirs.lastOffsetDelta, rs.length - 1);
        assert.equal(theirs.records.length, rs.length);
        theirs.records.forEach((tr, i) => {
          const r = rs[i];
          assert.ok(r);
          assert.equal(tr.offset, (baseOffset + BigInt(r.offsetDelta)).toString());
          assert.equal(tr.timestamp, (baseTs + BigInt(r.timestampDelta)).toString());
          assert.deepEqual(tr.key, r.key);
          assert.deepEqual(tr.value, r.value);
          assert.deepEqual(tr.headers, foldHeaders(r));
        });
      }),
      { numRuns: 25 },
    );
  });

  test(`we decode kafkajs ${CompressionType[compression]} batches to the same records`, async () => {
    const kjsRecords = fc.array(
      fc.record({
        timestampDelta: fc.integer({ min: 0, max: 1_000_000 }),
        key: bytesOrNull,
        value: bytesOrNull,
        headers: fc.dictionary(
          fc.string({ minLength: 1, maxLength: 10 }),
          fc.uint8Array({ maxLength: 20 }).map((u) => Buffer.from(u)),
          { maxKeys: 3 },
        ),
      }),
      { minLength: 1, maxLength: 20 },
    );
    await fc.assert(
      fc.asyncProperty(kjsRecords, fc.integer({ min: 0, max: 2 ** 40 }), async (rs, firstTimestamp) => {
        const encoded = await RecordBatch({
          compression,
          firstOffset: Long.fromString('1000'),
          firstTimestamp,
          maxTimestamp: firstTimestamp + Math.max(...rs.map((r) => r.timestampDelta)),
          lastOffsetDelta: rs.length - 1,
          transactional: false,
          producerId: Long.fromString('-1'),
          producerEpoch: -1,
          firstSequence: -1,
          partitionLeaderEpoch: 0,
          records: rs.map((r, i) => KafkaJsRecord({ ...r, offsetDelta: i })),
        });
        const buf = encoded.buffer;
        assert.equal(validateBatchHeader(buf, 0, { walkCompressed: true }), null);
        const b = decodeBatch(buf, 0, { maxBytes: 1 << 30 });
        assert.equal(b.baseOffset, 1000n);
        assert.equal(b.compression, compression);
        assert.equal(b.baseTimestamp, BigInt(firstTimestamp));
        assert.equal(b.producerId, -1n);
        assert.equal(b.records.length, rs.length);
        b.records.forEach((r, i) => {
          assert.equal(r.offsetDelta, i);
          const sent = rs[i];
          assert.ok(sent);
          assert.equal(r.timestampDelta, sent.timestampDelta);
          assert.deepEqual(r.key, sent.key);
          assert.deepEqual(r.value, sent.value);
          const expectedHeaders = Object.entries(sent.headers).map(([key, value]) => ({ key, value }));
          assert.deepEqual(r.headers, expectedHeaders);
        });
      }),
      { numRuns: 25 },
    );
  });
}
