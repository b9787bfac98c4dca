/**
 * kafkajs and confluent-kafka transactions against the coordinator side (issue 14): init, begin,
 * send, sendOffsets, commit and abort, with markers recorded by a TxnMarkerWriter that, for
 * `__consumer_offsets` partitions, does what the WriteTxnMarkers handler will (tell the group
 * coordinator); what read_committed consumers see is not checked here.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import kafkajs from 'kafkajs';
import { startTestBroker, type TestBroker } from '../helpers/broker.js';
import { ErrorCode } from '../../src/protocol/errors.js';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { PYTHON, requirePeer } from '../helpers/peers.js';
import type { TxnMarkerRequest, TxnMarkerResult, TxnMarkerWriter } from '../../src/coordinator/txn/markers.js';

class RecordingMarkers implements TxnMarkerWriter {
  readonly calls: TxnMarkerRequest[] = [];
  async writeMarkers(req: TxnMarkerRequest): Promise<TxnMarkerResult[]> {
    this.calls.push(req);
    for (const p of req.partitions) {
      if (p.topic === '__consumer_offsets') await b.broker.services.groupCoordinator.onTransactionCompleted(p.partition, req.producerId, req.commit);
    }
    return req.partitions.map((p) => ({ ...p, errorCode: ErrorCode.NONE }));
  }
  close(): void {}
}

let b: TestBroker;
const markers = new RecordingMarkers();
before(async () => {
  b = await startTestBroker({ 'transaction.state.log.num.partitions': '3' }, undefined, { txnMarkerWriter: markers });
});
after(() => b.stop());

test('kafkajs: a transactional producer commits one transaction over two partitions with sendOffsets and aborts another', async () => {
  const kafka = new kafkajs.Kafka({ clientId: 'fjord-txn', brokers: [b.bootstrap], logLevel: kafkajs.logLevel.NOTHING, retry: { retries: 8 } });
  const admin = kafka.admin();
  await admin.connect();
  await admin.createTopics({ topics: [{ topic: 'kjs-txn', numPartitions: 2 }] });
  await admin.disconnect();
  const producer = kafka.producer({ transactionalId: 'kjs-tx', idempotent: true, maxInFlightRequests: 1 });
  await producer.connect();
  try {
    const t1 = await producer.transaction();
    await t1.send({
      topic: 'kjs-txn',
      messages: [
        { key: 'a', value: '1', partition: 0 },
        { key: 'b', value: '2', partition: 1 },
      ],
    });
    await t1.sendOffsets({ consumerGroupId: 'kjs-txn-group', topics: [{ topic: 'kjs-txn', partitions: [{ partition: 0, offset: '17' }] }] });
    await t1.commit();
    const t2 = await producer.transaction();
    await t2.send({ topic: 'kjs-txn', messages: [{ key: 'c', value: '3', partition: 0 }] });
    await t2.abort();
  } finally {
    await producer.disconnect();
  }
  const commit = markers.calls.find((m) => m.commit);
  assert.ok(commit, 'commit markers were sent');
  assert.deepEqual(commit.partitions.map((p) => p.topic).sort(), ['__consumer_offsets', 'kjs-txn', 'kjs-txn']);
  const admin2 = kafka.admin();
  await admin2.connect();
  const offsets = await admin2.fetchOffsets({ groupId: 'kjs-txn-group', topics: ['kjs-txn'] });
  await admin2.disconnect();
  assert.equal(offsets[0]!.partitions.find((p) => p.partition === 0)?.offset, '17', 'the offsets sent in the committed transaction');
  const abort = markers.calls.find((m) => !m.commit);
  assert.deepEqual(abort?.partitions, [{ topic: 'kjs-txn', partition: 0 }]);
  const d = await b.broker.services.txnCoordinator.describe('kjs-tx');
  assert.equal(d.transactionState, 'CompleteAbort');
});

test('confluent-kafka: init_transactions returns at once and a transaction over two partitions commits', async (t) => {
  if (!requirePeer(t, 'python3-confluent-kafka')) return;
  await b.broker.services.metadata.createTopic({ name: 'ck-txn', numPartitions: 2, replicationFactor: 1, configs: {} });
  const py = [
    'import time',
    'from confluent_kafka import Producer',
    `p = Producer({'bootstrap.servers': '${b.bootstrap}', 'transactional.id': 'ck-tx'})`,
    't = time.time(); p.init_transactions(60); print("init_seconds", time.time() - t)',
    "p.begin_transaction(); p.produce('ck-txn', b'v1', partition=0); p.produce('ck-txn', b'v2', partition=1); p.commit_transaction(60)",
    'print("committed")',
  ].join('\n');
  const before = markers.calls.length;
  const { stdout } = await promisify(execFile)(PYTHON, ['-c', py], { encoding: 'utf8', timeout: 120000 });
  assert.match(stdout, /committed/);
  const initSeconds = Number(/init_seconds ([\d.]+)/.exec(stdout)?.[1]);
  assert.ok(initSeconds < 30, `init_transactions took ${initSeconds} s (it blocked 120 s when refused)`);
  const commit = markers.calls.slice(before).find((m) => m.commit);
  assert.deepEqual(commit?.partitions.map((p) => `${p.topic}-${p.partition}`).sort(), ['ck-txn-0', 'ck-txn-1']);
  assert.equal((await b.broker.services.txnCoordinator.describe('ck-tx')).transactionState, 'CompleteCommit');
});
