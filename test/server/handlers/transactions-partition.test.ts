/**
 * The partition side of transactions over the wire (issue 14): transactional batches hold the
 * last stable offset back, WriteTxnMarkers writes commit and abort markers as the coordinator
 * would, read_committed fetches stop at the LSO and get the aborted transactions of what they
 * read, ListOffsets honours the isolation level, and all of it survives a restart. The
 * coordinator's side is played by the test (raw WriteTxnMarkers), so this holds without it.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startTestBroker, type TestBroker } from '../../helpers/broker.js';
import { RawClient } from '../../helpers/raw-client.js';
import { ErrorCode } from '../../../src/protocol/errors.js';
import {
  DescribeProducersRequestCodec,
  DescribeProducersResponseCodec,
  InitProducerIdRequestCodec,
  InitProducerIdResponseCodec,
  ListOffsetsRequestCodec,
  ListOffsetsResponseCodec,
  WriteTxnMarkersRequestCodec,
  WriteTxnMarkersResponseCodec,
} from '../../../src/protocol/messages/index.js';
import { encodeBatch, iterateBatches } from '../../../src/protocol/records/index.js';
import { isControlBatch } from '../../../src/protocol/records/batch-header.js';
import { createTopic, fetchOne, produce, valuesOf } from './data-plane-helpers.js';

let dir: string;
let b: TestBroker;
let c: RawClient;

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'fjord-txn-'));
  b = await startTestBroker({ 'auto.create.topics.enable': 'false' }, dir);
  c = await RawClient.connect(b.port);
});

after(async () => {
  c.close();
  await b.stop();
  await rm(dir, { recursive: true, force: true });
});

function txnBatch(values: string[], producerId: bigint, seq: number, transactional = true, epoch = 0): Buffer {
  return encodeBatch({
    records: values.map((v, i) => ({ attributes: 0, timestampDelta: i, offsetDelta: i, key: null, value: Buffer.from(v), headers: [] })),
    // Now, as a producer stamps it: an old timestamp would roll the segment (segment.ms) before the marker.
    baseTimestamp: BigInt(Date.now()),
    producerId,
    producerEpoch: epoch,
    baseSequence: seq,
    isTransactional: transactional,
  });
}

async function producerId(): Promise<bigint> {
  const r = await c.request(22, InitProducerIdRequestCodec, InitProducerIdResponseCodec, 4, {
    transactionalId: null,
    transactionTimeoutMs: -1,
    producerId: -1n,
    producerEpoch: -1,
  });
  assert.equal(r.errorCode, ErrorCode.NONE);
  return r.producerId;
}

async function marker(
  topic: string,
  partition: number,
  pid: bigint,
  commit: boolean,
  opts: { epoch?: number; coordinatorEpoch?: number } = {},
): Promise<number> {
  const r = await c.request(27, WriteTxnMarkersRequestCodec, WriteTxnMarkersResponseCodec, 1, {
    markers: [
      {
        producerId: pid,
        producerEpoch: opts.epoch ?? 0,
        transactionResult: commit,
        coordinatorEpoch: opts.coordinatorEpoch ?? 0,
        topics: [{ name: topic, partitionIndexes: [partition] }],
      },
    ],
  });
  assert.equal(r.markers[0]!.producerId, pid);
  return r.markers[0]!.topics[0]!.partitions[0]!.errorCode;
}

async function latest(topic: string, committed: boolean): Promise<bigint> {
  const r = await c.request(2, ListOffsetsRequestCodec, ListOffsetsResponseCodec, 7, {
    replicaId: -1,
    isolationLevel: committed ? 1 : 0,
    topics: [{ name: topic, partitions: [{ partitionIndex: 0, timestamp: -1n, currentLeaderEpoch: -1 }] }],
  });
  return r.topics[0]!.partitions[0]!.offset;
}

/** Each batch's offsets ("first-last", or one offset), marked when it is a control batch. */
function batchesOf(records: Buffer | null): string[] {
  const out: string[] = [];
  for (const e of iterateBatches(records ?? Buffer.alloc(0))) {
    const first = Number(e.buf.readBigInt64BE(e.start));
    const last = first + e.buf.readInt32BE(e.start + 23);
    out.push(`${first === last ? first : `${first}-${last}`}${isControlBatch(e.buf, e.start) ? ' control' : ''}`);
  }
  return out;
}

async function readFrom(topic: string, committed: boolean, client = c) {
  const r = await fetchOne(client, 11, topic, 0, 0, { isolationLevel: committed ? 1 : 0 });
  return r.responses[0]!.partitions[0]!;
}

test('open transactions hold the LSO; an abort and a commit release it; read_committed gets the aborted transactions of what it reads', async () => {
  await createTopic(b, 'tx');
  const [A, B] = [await producerId(), await producerId()];
  const ok = async (records: Buffer): Promise<void> => {
    const r = (await produce(c, 9, 'tx', 0, records)).responses[0]!.partitionResponses[0]!;
    assert.equal(r.errorCode, ErrorCode.NONE, r.errorMessage ?? '');
  };
  await ok(txnBatch(['a1', 'a2'], A, 0)); // 0-1
  await ok(txnBatch(['b1'], B, 0)); // 2
  await ok(txnBatch(['p1'], -1n, -1, false)); // 3
  await ok(txnBatch(['a3'], A, 2)); // 4
  assert.equal(await latest('tx', false), 5n);
  assert.equal(await latest('tx', true), 0n, 'A is open from offset 0');
  const held = await readFrom('tx', true);
  assert.equal(held.lastStableOffset, 0n);
  assert.deepEqual(valuesOf(held.records), [], 'read_committed stops at the LSO');

  // A plain batch from a producer with an open transaction (Kafka: INVALID_TXN_STATE).
  const plain = (await produce(c, 9, 'tx', 0, txnBatch(['x'], A, 3, false))).responses[0]!.partitionResponses[0]!;
  assert.equal(plain.errorCode, ErrorCode.INVALID_TXN_STATE);

  assert.equal(await marker('tx', 0, A, false), ErrorCode.NONE); // abort marker at 5
  assert.equal(await latest('tx', true), 2n, 'B is still open from 2');
  assert.equal(await marker('tx', 0, B, true), ErrorCode.NONE); // commit marker at 6
  assert.equal(await latest('tx', true), 7n);

  const committed = await readFrom('tx', true);
  assert.equal(committed.lastStableOffset, 7n);
  assert.deepEqual(committed.abortedTransactions, [{ producerId: A, firstOffset: 0n }]);
  assert.deepEqual(batchesOf(committed.records), ['0-1', '2', '3', '4', '5 control', '6 control'], "the consumer drops A's records itself");
  assert.deepEqual(valuesOf(committed.records).slice(0, 5), ['a1', 'a2', 'b1', 'p1', 'a3']);
  const uncommitted = await readFrom('tx', false);
  assert.equal(uncommitted.abortedTransactions, null, 'read_uncommitted: null, as Kafka');
});

test('markers are fenced by producer and coordinator epoch; unknown partitions are named', async () => {
  await createTopic(b, 'fence');
  const P = await producerId();
  assert.equal((await produce(c, 9, 'fence', 0, txnBatch(['t'], P, 0, true, 2))).responses[0]!.partitionResponses[0]!.errorCode, ErrorCode.NONE);
  assert.equal(await marker('fence', 0, P, true, { epoch: 1 }), ErrorCode.INVALID_PRODUCER_EPOCH);
  assert.equal(await marker('fence', 0, P, true, { epoch: 2, coordinatorEpoch: 5 }), ErrorCode.NONE);
  assert.equal(await marker('fence', 0, P, false, { epoch: 2, coordinatorEpoch: 4 }), ErrorCode.TRANSACTION_COORDINATOR_FENCED);
  assert.equal(await marker('fence', 3, P, true, { epoch: 2, coordinatorEpoch: 5 }), ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
  assert.equal(await marker('nope', 0, P, true, { epoch: 2, coordinatorEpoch: 5 }), ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
});

test('after a restart: aborted transactions come from the .txnindex, and a transaction still open holds the LSO', async () => {
  await createTopic(b, 'durable');
  const [A, C] = [await producerId(), await producerId()];
  await produce(c, 9, 'durable', 0, txnBatch(['a'], A, 0)); // 0
  assert.equal(await marker('durable', 0, A, false), ErrorCode.NONE); // 1
  await produce(c, 9, 'durable', 0, txnBatch(['plain'], -1n, -1, false)); // 2
  await produce(c, 9, 'durable', 0, txnBatch(['c'], C, 0)); // 3, left open
  assert.equal(await latest('durable', true), 3n);
  c.close();
  await b.stop({ keepDir: true });
  b = await startTestBroker({ 'auto.create.topics.enable': 'false' }, dir);
  c = await RawClient.connect(b.port);
  assert.equal(await latest('durable', true), 3n, 'C is still open after the restart');
  // DescribeProducers (what kafka-transactions.sh find-hanging reads): C's open transaction from 3.
  const dp = await c.request(61, DescribeProducersRequestCodec, DescribeProducersResponseCodec, 0, { topics: [{ name: 'durable', partitionIndexes: [0, 7] }] });
  const [p0, p7] = dp.topics[0]!.partitions;
  assert.equal(p7!.errorCode, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
  const byId = new Map(p0!.activeProducers.map((x) => [x.producerId, x]));
  assert.equal(byId.get(C)!.currentTxnStartOffset, 3n);
  assert.equal(byId.get(C)!.lastSequence, 0);
  assert.equal(byId.get(A)!.currentTxnStartOffset, -1n);
  const r = await readFrom('durable', true);
  assert.deepEqual(r.abortedTransactions, [{ producerId: A, firstOffset: 0n }]);
  assert.deepEqual(batchesOf(r.records), ['0', '1 control', '2']);
  assert.equal(await marker('durable', 0, C, true), ErrorCode.NONE);
  assert.equal(await latest('durable', true), 5n);
});
