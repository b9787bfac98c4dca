/**
 * The records inside produced batches are validated as Kafka's LogValidator does, seen from a
 * client: a compacted topic refuses keyless records with per-record errors (Produce v8+), a
 * compressed batch whose records disagree with its header is refused, and a bad partition in a
 * request does not stop the others being written.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestBroker, type TestBroker } from '../../helpers/broker.js';
import { RawClient } from '../../helpers/raw-client.js';
import { ErrorCode } from '../../../src/protocol/errors.js';
import { ProduceRequestCodec, ProduceResponseCodec } from '../../../src/protocol/messages/index.js';
import { CompressionType, LAST_OFFSET_DELTA, RECORDS_COUNT, encodeBatch, rewriteCrc } from '../../../src/protocol/records/index.js';
import { createTopic, fetchOne, produce, valuesOf } from './data-plane-helpers.js';

let b: TestBroker;
let c: RawClient;
before(async () => {
  b = await startTestBroker({ 'auto.create.topics.enable': 'false' });
  c = await RawClient.connect(b.port);
  await createTopic(b, 'compacted', 1, { 'cleanup.policy': 'compact' });
  await createTopic(b, 'plain', 2);
});
after(async () => {
  c.close();
  await b.stop();
});

function batch(keys: (string | null)[], compression = CompressionType.None): Buffer {
  return encodeBatch({
    records: keys.map((k, i) => ({
      attributes: 0,
      timestampDelta: i,
      offsetDelta: i,
      key: k === null ? null : Buffer.from(k),
      value: Buffer.from(`v${i}`),
      headers: [],
    })),
    baseTimestamp: 1_700_000_000_000n,
    compression,
  });
}

test('a compacted topic refuses keyless records with INVALID_RECORD and record errors', async () => {
  for (const codec of [CompressionType.None, CompressionType.Zstd]) {
    const res = await produce(c, 8, 'compacted', 0, batch(['a', null, 'c'], codec));
    const p = res.responses[0]!.partitionResponses[0]!;
    assert.equal(p.errorCode, ErrorCode.INVALID_RECORD);
    assert.deepEqual(p.recordErrors, [
      { batchIndex: 1, batchIndexErrorMessage: 'Compacted topic cannot accept message without key in topic partition compacted-0' },
    ]);
    assert.match(p.errorMessage ?? '', /One or more records have been rejected due to 1 record errors in total/);
  }
  const ok = await produce(c, 8, 'compacted', 0, batch(['a', 'b'], CompressionType.Gzip));
  assert.equal(ok.responses[0]!.partitionResponses[0]!.errorCode, ErrorCode.NONE);
  assert.deepEqual(valuesOf((await fetchOne(c, 12, 'compacted', 0, 0)).responses[0]!.partitions[0]!.records), ['v0', 'v1']);
});

test("a compressed batch that lies about its records is refused; the request's other partition is written", async () => {
  const liar = batch(['a', 'b'], CompressionType.Lz4);
  liar.writeInt32BE(3, RECORDS_COUNT);
  liar.writeInt32BE(2, LAST_OFFSET_DELTA);
  rewriteCrc(liar, 0);
  const res = await c.request(0, ProduceRequestCodec, ProduceResponseCodec, 9, {
    transactionalId: null,
    acks: -1,
    timeoutMs: 5000,
    topicData: [
      {
        name: 'plain',
        partitionData: [
          { index: 0, records: liar },
          { index: 1, records: batch(['x'], CompressionType.Lz4) },
        ],
      },
    ],
  });
  const [bad, good] = res.responses[0]!.partitionResponses;
  assert.equal(bad!.errorCode, ErrorCode.INVALID_RECORD);
  assert.equal(good!.errorCode, ErrorCode.NONE);
  assert.deepEqual(valuesOf((await fetchOne(c, 12, 'plain', 0, 0)).responses[0]!.partitions[0]!.records), []);
  assert.deepEqual(valuesOf((await fetchOne(c, 12, 'plain', 1, 0)).responses[0]!.partitions[0]!.records), ['v0']);
});

test('a legacy (Produce v2) set to a compacted topic is checked for keys too', async () => {
  const { encodeLegacyMessageSet } = await import('../../../src/protocol/records/index.js');
  const set = encodeLegacyMessageSet({ magic: 1, compression: CompressionType.Snappy, messages: [{ key: null, value: Buffer.from('x') }] });
  const res = await produce(c, 2, 'compacted', 0, set);
  assert.equal(res.responses[0]!.partitionResponses[0]!.errorCode, ErrorCode.INVALID_RECORD);
});

test('a topic with message.timestamp.difference.max.ms refuses records out of range with INVALID_TIMESTAMP', async () => {
  await createTopic(b, 'recent', 1, { 'message.timestamp.difference.max.ms': '60000' });
  const old = encodeBatch({
    records: [{ attributes: 0, timestampDelta: 0, offsetDelta: 0, key: null, value: Buffer.from('old'), headers: [] }],
    baseTimestamp: BigInt(Date.now() - 3_600_000),
  });
  const res = await produce(c, 9, 'recent', 0, old);
  const p = res.responses[0]!.partitionResponses[0]!;
  assert.equal(p.errorCode, ErrorCode.INVALID_TIMESTAMP);
  assert.equal(p.recordErrors[0]!.batchIndex, 0);
  const fresh = encodeBatch({
    records: [{ attributes: 0, timestampDelta: 0, offsetDelta: 0, key: null, value: Buffer.from('new'), headers: [] }],
    baseTimestamp: BigInt(Date.now()),
  });
  assert.equal((await produce(c, 9, 'recent', 0, fresh)).responses[0]!.partitionResponses[0]!.errorCode, ErrorCode.NONE);
});
