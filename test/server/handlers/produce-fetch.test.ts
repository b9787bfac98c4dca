import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestBroker, type TestBroker } from '../../helpers/broker.js';
import { RawClient } from '../../helpers/raw-client.js';
import { ErrorCode } from '../../../src/protocol/errors.js';
import {
  ApiVersionsRequestCodec,
  ApiVersionsResponseCodec,
  InitProducerIdRequestCodec,
  InitProducerIdResponseCodec,
} from '../../../src/protocol/messages/index.js';
import { CompressionType, encodeLegacyMessageSet, readLegacyMessageSet, encodeControlBatch, ControlRecordType } from '../../../src/protocol/records/index.js';
import { batchOf, createTopic, fetchOne, produce, valuesOf } from './data-plane-helpers.js';
import { flipByte } from '../../helpers/corrupt.js';

let b: TestBroker;
let c: RawClient;
before(async () => {
  b = await startTestBroker({ 'auto.create.topics.enable': 'false' });
  c = await RawClient.connect(b.port);
  await createTopic(b, 'pf', 2);
});
after(async () => {
  c.close();
  await b.stop();
});

test('produce at every version 3-11 then fetch at every version 4-12 returns the same records in order', async () => {
  await createTopic(b, 'versions');
  const expected: string[] = [];
  for (let v = 3; v <= 11; v++) {
    const values = [`v${v}-a`, `v${v}-b`];
    const res = await produce(c, v, 'versions', 0, batchOf(values, { compression: v % 2 ? CompressionType.Gzip : CompressionType.None }));
    const pr = res.responses[0]!.partitionResponses[0]!;
    assert.equal(pr.errorCode, ErrorCode.NONE);
    assert.equal(pr.baseOffset, BigInt(expected.length));
    if (v >= 2) assert.equal(pr.logAppendTimeMs, -1n);
    expected.push(...values);
  }
  for (let v = 4; v <= 12; v++) {
    const res = await fetchOne(c, v, 'versions', 0, 0);
    const p = res.responses[0]!.partitions[0]!;
    assert.equal(p.errorCode, ErrorCode.NONE);
    assert.equal(p.highWatermark, BigInt(expected.length));
    assert.equal(p.lastStableOffset, BigInt(expected.length));
    assert.deepEqual(valuesOf(p.records), expected);
  }
  // A fetch offset inside a batch returns that whole batch.
  const mid = await fetchOne(c, 12, 'versions', 0, 3);
  assert.deepEqual(valuesOf(mid.responses[0]!.partitions[0]!.records).slice(0, 2), expected.slice(2, 4));
});

test('acks=0 gets no response; invalid acks is INVALID_REQUIRED_ACKS', async () => {
  const before = (await fetchOne(c, 11, 'pf', 1, 0)).responses[0]!.partitions[0]!.highWatermark;
  const frameSent = c.request(
    0,
    (await import('../../../src/protocol/messages/index.js')).ProduceRequestCodec,
    (await import('../../../src/protocol/messages/index.js')).ProduceResponseCodec,
    9,
    {
      transactionalId: null,
      acks: 0,
      timeoutMs: 1000,
      topicData: [{ name: 'pf', partitionData: [{ index: 1, records: batchOf(['zero']) }] }],
    },
  );
  let answered = false;
  void frameSent.then(
    () => (answered = true),
    () => undefined,
  );
  // The next request on the connection is answered, and the acks=0 one never is.
  const deadline = Date.now() + 5000;
  let hw = before;
  while (hw === before && Date.now() < deadline) hw = (await fetchOne(c, 11, 'pf', 1, 0)).responses[0]!.partitions[0]!.highWatermark;
  assert.equal(hw, before + 1n);
  assert.equal(answered, false);
  const bad = await produce(c, 9, 'pf', 1, batchOf(['x']), 2);
  assert.equal(bad.responses[0]!.partitionResponses[0]!.errorCode, ErrorCode.INVALID_REQUIRED_ACKS);
});

test('unknown topic, unknown partition, internal topic', async () => {
  assert.equal((await produce(c, 9, 'nope', 0, batchOf(['x']))).responses[0]!.partitionResponses[0]!.errorCode, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
  assert.equal((await produce(c, 9, 'pf', 9, batchOf(['x']))).responses[0]!.partitionResponses[0]!.errorCode, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
  await b.broker.services.metadata.createTopic({ name: '__consumer_offsets', numPartitions: 1, replicationFactor: 1, internal: true });
  await b.broker.services.replicaManager.syncTopic('__consumer_offsets');
  assert.equal(
    (await produce(c, 9, '__consumer_offsets', 0, batchOf(['x']))).responses[0]!.partitionResponses[0]!.errorCode,
    ErrorCode.INVALID_TOPIC_EXCEPTION,
  );
  const internal = await b.broker.services.replicaManager.appendRecords('__consumer_offsets', 0, batchOf(['x']), { requiredAcks: -1, origin: 'coordinator' });
  assert.equal(internal.errorCode, ErrorCode.NONE);
  assert.equal((await fetchOne(c, 11, 'nope', 0, 0)).responses[0]!.partitions[0]!.errorCode, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
});

test('corrupt batches are CORRUPT_MESSAGE, control batches from clients INVALID_RECORD with recordErrors', async () => {
  const corrupt = batchOf(['a', 'b']);
  flipByte(corrupt, corrupt.length - 1);
  assert.equal((await produce(c, 9, 'pf', 0, corrupt)).responses[0]!.partitionResponses[0]!.errorCode, ErrorCode.CORRUPT_MESSAGE);
  const control = encodeControlBatch({ type: ControlRecordType.Commit, producerId: 1n, producerEpoch: 0, coordinatorEpoch: 0, timestamp: 1n, baseOffset: 0n });
  const res = (await produce(c, 9, 'pf', 0, control)).responses[0]!.partitionResponses[0]!;
  assert.equal(res.errorCode, ErrorCode.INVALID_RECORD);
  assert.equal(res.recordErrors.length, 1);
  const two = Buffer.concat([batchOf(['1']), batchOf(['2'])]);
  assert.equal((await produce(c, 9, 'pf', 0, two)).responses[0]!.partitionResponses[0]!.errorCode, ErrorCode.INVALID_RECORD);
});

test('a batch above max.message.bytes is MESSAGE_TOO_LARGE', async () => {
  await createTopic(b, 'small', 1, { 'max.message.bytes': '200' });
  const res = await produce(c, 9, 'small', 0, batchOf(['x'.repeat(500)]));
  assert.equal(res.responses[0]!.partitionResponses[0]!.errorCode, ErrorCode.MESSAGE_TOO_LARGE);
});

test('acks=all with min.insync.replicas above the ISR is NOT_ENOUGH_REPLICAS; acks=1 still works', async () => {
  await createTopic(b, 'minisr', 1, { 'min.insync.replicas': '2' });
  assert.equal((await produce(c, 9, 'minisr', 0, batchOf(['x']), -1)).responses[0]!.partitionResponses[0]!.errorCode, ErrorCode.NOT_ENOUGH_REPLICAS);
  assert.equal((await produce(c, 9, 'minisr', 0, batchOf(['x']), 1)).responses[0]!.partitionResponses[0]!.errorCode, ErrorCode.NONE);
});

test('LogAppendTime topics stamp the batch and answer the append time', async () => {
  await createTopic(b, 'lat', 1, { 'message.timestamp.type': 'LogAppendTime' });
  const t0 = Date.now();
  const pr = (await produce(c, 9, 'lat', 0, batchOf(['x']))).responses[0]!.partitionResponses[0]!;
  assert.ok(pr.logAppendTimeMs >= BigInt(t0) && pr.logAppendTimeMs <= BigInt(Date.now()));
});

test('legacy producers (v0-v2, magic 0/1) are stored as v2 and old fetchers get their magic back', async () => {
  await createTopic(b, 'legacy');
  for (const [v, magic] of [
    [0, 0],
    [2, 1],
  ] as const) {
    const set = encodeLegacyMessageSet({
      magic,
      messages: [
        { key: null, value: Buffer.from(`m${magic}-1`) },
        { key: null, value: Buffer.from(`m${magic}-2`) },
      ],
      compression: CompressionType.Gzip,
    });
    const pr = (await produce(c, v, 'legacy', 0, set)).responses[0]!.partitionResponses[0]!;
    assert.equal(pr.errorCode, ErrorCode.NONE);
  }
  const stored = await fetchOne(c, 11, 'legacy', 0, 0);
  assert.deepEqual(valuesOf(stored.responses[0]!.partitions[0]!.records), ['m0-1', 'm0-2', 'm1-1', 'm1-2']);
  for (const [v, magic] of [
    [0, 0],
    [1, 0],
    [2, 1],
    [3, 1],
  ] as const) {
    const res = await fetchOne(c, v, 'legacy', 0, 0);
    const recs = res.responses[0]!.partitions[0]!.records!;
    const read = readLegacyMessageSet(recs);
    assert.deepEqual(
      read.messages.map((m) => m.value!.toString()),
      ['m0-1', 'm0-2', 'm1-1', 'm1-2'],
    );
    assert.ok(read.messages.every((m) => m.magic === magic));
    assert.deepEqual(
      read.messages.map((m) => m.offset),
      [0n, 1n, 2n, 3n],
    );
  }
  // v3+ producers must send magic 2.
  const old = encodeLegacyMessageSet({ magic: 1, messages: [{ key: null, value: Buffer.from('x') }] });
  assert.equal((await produce(c, 3, 'legacy', 0, old)).responses[0]!.partitionResponses[0]!.errorCode, ErrorCode.INVALID_RECORD);
});

test('idempotent producer: ids from InitProducerId, duplicates answered with the original offset, gaps refused', async () => {
  await createTopic(b, 'idem');
  const init = await c.request(22, InitProducerIdRequestCodec, InitProducerIdResponseCodec, 4, {
    transactionalId: null,
    transactionTimeoutMs: -1,
    producerId: -1n,
    producerEpoch: -1,
  });
  assert.equal(init.errorCode, ErrorCode.NONE);
  const init2 = await c.request(22, InitProducerIdRequestCodec, InitProducerIdResponseCodec, 0, { transactionalId: null, transactionTimeoutMs: 1000 });
  assert.notEqual(init2.producerId, init.producerId);
  const txn = await c.request(22, InitProducerIdRequestCodec, InitProducerIdResponseCodec, 4, {
    transactionalId: 'tx',
    transactionTimeoutMs: 1000,
    producerId: -1n,
    producerEpoch: -1,
  });
  // A transactional id goes to the transaction coordinator; no FindCoordinator has created
  // __transaction_state yet, so no broker coordinates it.
  assert.equal(txn.errorCode, ErrorCode.NOT_COORDINATOR);

  const pid = init.producerId;
  const first = batchOf(['a', 'b'], { producerId: pid, epoch: 0, seq: 0 });
  const r1 = (await produce(c, 9, 'idem', 0, Buffer.from(first))).responses[0]!.partitionResponses[0]!;
  assert.equal(r1.errorCode, ErrorCode.NONE);
  const r2 = (await produce(c, 9, 'idem', 0, batchOf(['c'], { producerId: pid, epoch: 0, seq: 2 }))).responses[0]!.partitionResponses[0]!;
  assert.equal(r2.baseOffset, r1.baseOffset + 2n);
  const dup = (await produce(c, 9, 'idem', 0, Buffer.from(first))).responses[0]!.partitionResponses[0]!;
  assert.equal(dup.errorCode, ErrorCode.NONE);
  assert.equal(dup.baseOffset, r1.baseOffset);
  const gap = (await produce(c, 9, 'idem', 0, batchOf(['z'], { producerId: pid, epoch: 0, seq: 9 }))).responses[0]!.partitionResponses[0]!;
  assert.equal(gap.errorCode, ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER);
  const next = (await produce(c, 9, 'idem', 0, batchOf(['z'], { producerId: pid, epoch: 0, seq: 3 }))).responses[0]!.partitionResponses[0]!;
  assert.equal(next.errorCode, ErrorCode.NONE);
  const bumped = (await produce(c, 9, 'idem', 0, batchOf(['e1'], { producerId: pid, epoch: 1, seq: 0 }))).responses[0]!.partitionResponses[0]!;
  assert.equal(bumped.errorCode, ErrorCode.NONE);
  const fenced = (await produce(c, 9, 'idem', 0, batchOf(['old'], { producerId: pid, epoch: 0, seq: 4 }))).responses[0]!.partitionResponses[0]!;
  assert.equal(fenced.errorCode, ErrorCode.INVALID_PRODUCER_EPOCH);
  const res = await fetchOne(c, 11, 'idem', 0, 0);
  assert.deepEqual(valuesOf(res.responses[0]!.partitions[0]!.records), ['a', 'b', 'c', 'z', 'e1']);
});

test('Produce and Fetch ranges are advertised by ApiVersions', async () => {
  const res = await c.request(18, ApiVersionsRequestCodec, ApiVersionsResponseCodec, 3, { clientSoftwareName: 't', clientSoftwareVersion: '1' });
  const range = (k: number) => res.apiKeys.find((a) => a.apiKey === k);
  assert.deepEqual([range(0)?.minVersion, range(0)?.maxVersion], [0, 11]);
  assert.deepEqual([range(1)?.minVersion, range(1)?.maxVersion], [0, 17]);
  assert.deepEqual([range(2)?.minVersion, range(2)?.maxVersion], [0, 10]);
  assert.deepEqual([range(22)?.minVersion, range(22)?.maxVersion], [0, 5]);
  assert.deepEqual([range(23)?.minVersion, range(23)?.maxVersion], [0, 4]);
});
