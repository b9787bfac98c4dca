/**
 * KIP-890 part 1 on produce, against an embedded broker whose transaction coordinator is in
 * process (real markers): a transactional batch to a partition its transaction does not hold is
 * refused with nothing written; a late batch after the transaction was aborted (no epoch bump, the
 * hanging-transaction case) or timed out is refused and the last stable offset does not hang; a
 * later batch of the same producer waits for the verification of an earlier one instead of
 * overtaking it; a marker queued before a verified batch ends the transaction first; and
 * transaction.partition.verification.enable=false (a dynamic config) accepts as before.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestBroker, type TestBroker } from '../../helpers/broker.js';
import { RawClient } from '../../helpers/raw-client.js';
import { ErrorCode } from '../../../src/protocol/errors.js';
import {
  AddPartitionsToTxnRequestCodec,
  AddPartitionsToTxnResponseCodec,
  EndTxnRequestCodec,
  EndTxnResponseCodec,
  FindCoordinatorRequestCodec,
  FindCoordinatorResponseCodec,
  IncrementalAlterConfigsRequestCodec,
  IncrementalAlterConfigsResponseCodec,
  InitProducerIdRequestCodec,
  InitProducerIdResponseCodec,
  ListOffsetsRequestCodec,
  ListOffsetsResponseCodec,
  ProduceRequestCodec,
  ProduceResponseCodec,
} from '../../../src/protocol/messages/index.js';
import { encodeBatch } from '../../../src/protocol/records/index.js';
import { createTopic } from '../../server/handlers/data-plane-helpers.js';
import { waitForValue } from '../../helpers/wait-for.js';
import { partitionState } from '../../helpers/partition-state.js';
import { shardsOf } from '../../../src/server/broker-services.js';

let b: TestBroker;
let c: RawClient;

before(async () => {
  b = await startTestBroker({
    'auto.create.topics.enable': 'false',
    'transaction.state.log.num.partitions': '1',
    'transaction.abort.timed.out.transaction.cleanup.interval.ms': '50',
  });
  await createTopic(b, 'kv', 4);
  c = await RawClient.connect(b.port);
});

after(async () => {
  c.close();
  await b.stop();
});

const until = <T>(what: string, fn: () => Promise<T>, ok: (v: T) => boolean, ms = 20000) => waitForValue(what, ms, fn, ok);

/** A transactional producer: FindCoordinator (creates __transaction_state), then InitProducerId. */
async function init(id: string, transactionTimeoutMs = 60000): Promise<{ producerId: bigint; producerEpoch: number }> {
  await until(
    'the transaction coordinator',
    () => c.request(10, FindCoordinatorRequestCodec, FindCoordinatorResponseCodec, 3, { key: id, keyType: 1 }),
    (r) => r.errorCode === 0,
  );
  return until(
    'InitProducerId',
    () =>
      c.request(22, InitProducerIdRequestCodec, InitProducerIdResponseCodec, 4, {
        transactionalId: id,
        transactionTimeoutMs,
        producerId: -1n,
        producerEpoch: -1,
      }),
    (r) => r.errorCode === 0,
  );
}

async function addPartition(id: string, pid: { producerId: bigint; producerEpoch: number }, partition: number): Promise<void> {
  const r = await c.request(24, AddPartitionsToTxnRequestCodec, AddPartitionsToTxnResponseCodec, 3, {
    v3AndBelowTransactionalId: id,
    v3AndBelowProducerId: pid.producerId,
    v3AndBelowProducerEpoch: pid.producerEpoch,
    v3AndBelowTopics: [{ name: 'kv', partitions: [partition] }],
  });
  assert.equal(r.resultsByTopicV3AndBelow[0]!.resultsByPartition[0]!.partitionErrorCode, ErrorCode.NONE);
}

function txnBatch(pid: { producerId: bigint; producerEpoch: number }, seq: number, value: string): Buffer {
  return encodeBatch({
    records: [{ attributes: 0, timestampDelta: 0, offsetDelta: 0, key: null, value: Buffer.from(value), headers: [] }],
    baseTimestamp: BigInt(Date.now()),
    producerId: pid.producerId,
    producerEpoch: pid.producerEpoch,
    baseSequence: seq,
    isTransactional: true,
  });
}

async function produce(
  id: string,
  partition: number,
  records: Buffer,
  client = c,
): Promise<{ errorCode: number; errorMessage: string | null; baseOffset: bigint }> {
  const r = await client.request(0, ProduceRequestCodec, ProduceResponseCodec, 9, {
    transactionalId: id,
    acks: -1,
    timeoutMs: 5000,
    topicData: [{ name: 'kv', partitionData: [{ index: partition, records }] }],
  });
  return r.responses[0]!.partitionResponses[0]!;
}

/** The latest offset (high watermark) or, read_committed, the last stable offset. */
async function offset(partition: number, committed: boolean): Promise<bigint> {
  const r = await c.request(2, ListOffsetsRequestCodec, ListOffsetsResponseCodec, 7, {
    replicaId: -1,
    isolationLevel: committed ? 1 : 0,
    topics: [{ name: 'kv', partitions: [{ partitionIndex: partition, timestamp: -1n, currentLeaderEpoch: -1 }] }],
  });
  return r.topics[0]!.partitions[0]!.offset;
}

async function endTxn(id: string, pid: { producerId: bigint; producerEpoch: number }, commit: boolean): Promise<void> {
  const r = await c.request(26, EndTxnRequestCodec, EndTxnResponseCodec, 3, { transactionalId: id, ...pid, committed: commit });
  assert.equal(r.errorCode, ErrorCode.NONE);
}

test('a transactional batch to a partition the transaction does not hold is refused and nothing is written', async () => {
  const pid = await init('pv-unadded');
  const r = await produce('pv-unadded', 0, txnBatch(pid, 0, 'x'));
  assert.deepEqual([r.errorCode, r.errorMessage], [ErrorCode.INVALID_TXN_STATE, 'Partition was not added to the transaction']);
  assert.equal(await offset(0, false), 0n);
  assert.equal(await offset(0, true), 0n);
});

test('a late batch after its transaction was aborted is refused: no hanging transaction, the LSO follows the HW', async () => {
  const id = 'pv-aborted';
  const pid = await init(id);
  await addPartition(id, pid, 1);
  assert.equal((await produce(id, 1, txnBatch(pid, 0, 'a'))).errorCode, ErrorCode.NONE);
  assert.equal((await produce(id, 1, txnBatch(pid, 1, 'b'))).errorCode, ErrorCode.NONE, 'the open transaction needs no second verification');
  await endTxn(id, pid, false);
  // The abort marker is written: the LSO is past it.
  const hw = await until(
    'the abort marker',
    () => offset(1, false),
    (o) => o === 3n,
  );
  await until(
    'the LSO',
    () => offset(1, true),
    (o) => o === hw,
  );
  // The producer (epoch unchanged after EndTxn before KIP-890 part 2) sends one more batch late.
  const late = await produce(id, 1, txnBatch(pid, 2, 'late'));
  assert.equal(late.errorCode, ErrorCode.INVALID_TXN_STATE);
  assert.equal(await offset(1, false), hw, 'nothing appended');
  assert.equal(await offset(1, true), hw, 'the LSO does not hang');
});

test('a late batch after its transaction timed out is refused and the LSO does not hang', async () => {
  const id = 'pv-timeout';
  const pid = await init(id, 300);
  await addPartition(id, pid, 2);
  assert.equal((await produce(id, 2, txnBatch(pid, 0, 'a'))).errorCode, ErrorCode.NONE);
  const hw = await until(
    'the timeout abort',
    () => offset(2, false),
    (o) => o === 2n,
  );
  await until(
    'the LSO',
    () => offset(2, true),
    (o) => o === hw,
  );
  const late = await produce(id, 2, txnBatch(pid, 1, 'late'));
  assert.ok(new Set<number>([ErrorCode.INVALID_TXN_STATE, ErrorCode.INVALID_PRODUCER_EPOCH]).has(late.errorCode), `refused, got ${late.errorCode}`);
  assert.equal(await offset(2, false), hw);
  assert.equal(await offset(2, true), hw);
});

test("a later batch of the same producer waits for the earlier batch's verification and never overtakes it", async () => {
  const id = 'pv-order';
  const pid = await init(id);
  await addPartition(id, pid, 3);
  const verification = b.broker.services.txnVerification;
  const original = verification.verify.bind(verification);
  let calls = 0;
  // The first verification answers late, as a remote coordinator might.
  verification.verify = async (req) => {
    const first = calls++ === 0;
    const answer = await original(req);
    if (first) await new Promise((r) => setTimeout(r, 300));
    return answer;
  };
  const other = await RawClient.connect(b.port);
  try {
    const first = produce(id, 3, txnBatch(pid, 0, 'first'));
    await until(
      'the first verification to start',
      async () => calls,
      (n) => n === 1,
    );
    const second = await produce(id, 3, txnBatch(pid, 1, 'second'), other);
    const firstDone = await first;
    assert.deepEqual([firstDone.errorCode, second.errorCode], [ErrorCode.NONE, ErrorCode.NONE]);
    assert.ok(firstDone.baseOffset < second.baseOffset, 'appended in order');
    assert.equal(calls, 1, 'the second batch was admitted by the first verification');
  } finally {
    verification.verify = original;
    other.close();
  }
  await endTxn(id, pid, true);
});

test('a marker queued before a verified batch ends the transaction first: the batch is refused at its turn', async () => {
  // Through the seam, so the partition's owner (a shard worker at num.io.threads > 1) holds the guard and orders the appends.
  const shards = shardsOf(b.broker.services);
  const { leaderEpoch } = (await partitionState(b, 'kv', 0))!;
  const producer = { producerId: 987654n, producerEpoch: 0 };
  const kv = { topic: 'kv', partition: 0, producer };
  const abort = { topic: 'kv', partition: 0, marker: { ...producer, coordinatorEpoch: 0, commit: false } };
  const req = { requiredAcks: -1, origin: 'client', produceVersion: 9 } as const;
  assert.deepEqual(await shards.grantTxnGuards([{ ...kv, leaderEpoch }]), [ErrorCode.NONE]);
  // The marker takes its arrival turn before writeTxnMarkers returns, so it is ahead of the batch.
  const marker = shards.writeTxnMarkers([abort]);
  const [late] = await shards.produce([{ topic: 'kv', partition: 0, records: txnBatch(producer, 0, 'x'), verifiedTxn: producer }], req);
  assert.equal(late!.errorCode, ErrorCode.INVALID_TXN_STATE);
  assert.deepEqual(await marker, [ErrorCode.NONE]);
  // Verified again, and no marker in between: appended.
  assert.deepEqual(await shards.grantTxnGuards([{ ...kv, leaderEpoch }]), [ErrorCode.NONE]);
  const [ok] = await shards.produce([{ topic: 'kv', partition: 0, records: txnBatch(producer, 0, 'y'), verifiedTxn: producer }], req);
  assert.equal(ok!.errorCode, ErrorCode.NONE);
  assert.deepEqual(await shards.writeTxnMarkers([abort]), [ErrorCode.NONE]);
});

test('transaction.partition.verification.enable=false (dynamic) appends unverified, as before KIP-890', async () => {
  const set = (value: string | null) =>
    c.request(44, IncrementalAlterConfigsRequestCodec, IncrementalAlterConfigsResponseCodec, 1, {
      resources: [
        {
          resourceType: 4,
          resourceName: '',
          configs: [{ name: 'transaction.partition.verification.enable', configOperation: value === null ? 1 : 0, value }],
        },
      ],
      validateOnly: false,
    });
  const id = 'pv-off';
  const pid = await init(id);
  assert.equal((await set('false')).responses[0]!.errorCode, ErrorCode.NONE);
  try {
    const r = await produce(id, 0, txnBatch(pid, 0, 'unverified'));
    assert.equal(r.errorCode, ErrorCode.NONE);
  } finally {
    assert.equal((await set(null)).responses[0]!.errorCode, ErrorCode.NONE);
  }
  // On again: the producer's next transaction is verified (InitProducerId aborts the open one).
  const again = await init(id);
  assert.equal((await produce(id, 0, txnBatch(again, 0, 'x'))).errorCode, ErrorCode.INVALID_TXN_STATE);
});
