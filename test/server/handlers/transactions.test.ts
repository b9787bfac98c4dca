/**
 * The transaction coordinator over the wire, against a real embedded broker (markers written by
 * a fake TxnMarkerWriter until the WriteTxnMarkers handler lands): FindCoordinator's TRANSACTION
 * key, InitProducerId/AddPartitionsToTxn/AddOffsetsToTxn/EndTxn at every version, Describe/
 * ListTransactions, fencing a second producer, the timeout abort, and a restart that reloads
 * `__transaction_state`.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestBroker, type TestBroker } from '../../helpers/broker.js';
import { RawClient } from '../../helpers/raw-client.js';
import { ErrorCode } from '../../../src/protocol/errors.js';
import {
  AddOffsetsToTxnRequestCodec,
  AddOffsetsToTxnResponseCodec,
  AddPartitionsToTxnRequestCodec,
  AddPartitionsToTxnResponseCodec,
  ApiVersionsRequestCodec,
  ApiVersionsResponseCodec,
  DescribeTransactionsRequestCodec,
  DescribeTransactionsResponseCodec,
  EndTxnRequestCodec,
  EndTxnResponseCodec,
  FindCoordinatorRequestCodec,
  FindCoordinatorResponseCodec,
  InitProducerIdRequestCodec,
  InitProducerIdResponseCodec,
  ListTransactionsRequestCodec,
  ListTransactionsResponseCodec,
  OffsetFetchRequestCodec,
  OffsetFetchResponseCodec,
  TxnOffsetCommitRequestCodec,
  TxnOffsetCommitResponseCodec,
} from '../../../src/protocol/messages/index.js';
import type { TxnMarkerRequest, TxnMarkerResult, TxnMarkerWriter } from '../../../src/coordinator/txn/markers.js';
import { partitionForGroup } from '../../../src/coordinator/runtime/partition-for-group.js';
import { createTopic } from './data-plane-helpers.js';
import { waitForValue } from '../../helpers/wait-for.js';

class RecordingMarkers implements TxnMarkerWriter {
  readonly calls: TxnMarkerRequest[] = [];
  /** Stands in for what the WriteTxnMarkers handler does after writing a marker. */
  onWritten: (req: TxnMarkerRequest) => Promise<void> = async () => undefined;
  async writeMarkers(req: TxnMarkerRequest): Promise<TxnMarkerResult[]> {
    this.calls.push(req);
    await this.onWritten(req);
    return req.partitions.map((p) => ({ ...p, errorCode: ErrorCode.NONE }));
  }
  close(): void {}
}

const PROPS = {
  'auto.create.topics.enable': 'false',
  'transaction.state.log.num.partitions': '3',
  'transaction.abort.timed.out.transaction.cleanup.interval.ms': '50',
};
let b: TestBroker;
let c: RawClient;
let markers: RecordingMarkers;

before(async () => {
  markers = new RecordingMarkers();
  b = await startTestBroker(PROPS, undefined, { txnMarkerWriter: markers });
  c = await RawClient.connect(b.port);
  await createTopic(b, 'tt', 3);
});
after(async () => {
  c.close();
  await b.stop();
});

function until<T>(what: string, fn: () => Promise<T>, ok: (v: T) => boolean, ms = 20000): Promise<T> {
  let last: T | undefined;
  const read = async () => (last = await fn());
  return waitForValue(what, ms, read, ok, { explain: () => `last ${JSON.stringify(last, (_k, x) => (typeof x === 'bigint' ? String(x) : x))}` });
}

async function findTxnCoordinator(client: RawClient, id: string) {
  return until(
    'the transaction coordinator',
    () => client.request(10, FindCoordinatorRequestCodec, FindCoordinatorResponseCodec, 3, { key: id, keyType: 1 }),
    (r) => r.errorCode === 0,
  );
}

const initPid = (version: number, id: string, producerId = -1n, producerEpoch = -1, transactionTimeoutMs = 60000, client = c) =>
  client.request(22, InitProducerIdRequestCodec, InitProducerIdResponseCodec, version, {
    transactionalId: id,
    transactionTimeoutMs,
    producerId,
    producerEpoch,
  });

const addParts = (version: number, id: string, producerId: bigint, producerEpoch: number, topics: { name: string; partitions: number[] }[]) =>
  c.request(24, AddPartitionsToTxnRequestCodec, AddPartitionsToTxnResponseCodec, version, {
    v3AndBelowTransactionalId: id,
    v3AndBelowProducerId: producerId,
    v3AndBelowProducerEpoch: producerEpoch,
    v3AndBelowTopics: topics,
  });

const describe = (id: string, client = c) =>
  client.request(65, DescribeTransactionsRequestCodec, DescribeTransactionsResponseCodec, 0, { transactionalIds: [id] }).then((r) => r.transactionStates[0]!);

const partitionCodes = (r: { resultsByTopicV3AndBelow: { name: string; resultsByPartition: { partitionIndex: number; partitionErrorCode: number }[] }[] }) =>
  Object.fromEntries(r.resultsByTopicV3AndBelow.flatMap((t) => t.resultsByPartition.map((p) => [`${t.name}-${p.partitionIndex}`, p.partitionErrorCode])));

test("ApiVersions advertises the transaction APIs at Kafka 3.9's versions", async () => {
  const res = await c.request(18, ApiVersionsRequestCodec, ApiVersionsResponseCodec, 3, { clientSoftwareName: 't', clientSoftwareVersion: '1' });
  const range = (k: number) => res.apiKeys.find((a) => a.apiKey === k);
  assert.deepEqual(
    [22, 24, 25, 26, 28, 65, 66].map((k) => [k, range(k)?.minVersion, range(k)?.maxVersion]),
    [
      [22, 0, 5],
      [24, 0, 5],
      [25, 0, 4],
      [26, 0, 4],
      [28, 0, 4],
      [65, 0, 0],
      [66, 0, 1],
    ],
  );
});

test('FindCoordinator with the TRANSACTION key creates __transaction_state and answers this broker', async () => {
  const r = await findTxnCoordinator(c, 'wire-find');
  assert.equal(r.nodeId, b.broker.config.brokerId);
  assert.equal(r.port, b.port);
  const topic = b.broker.services.metadata.topic('__transaction_state');
  assert.equal(topic?.partitions.length, 3);
  assert.equal(topic?.configs['cleanup.policy'], 'compact');
  const batched = await c.request(10, FindCoordinatorRequestCodec, FindCoordinatorResponseCodec, 4, { keyType: 1, coordinatorKeys: ['a', 'b', ''] });
  assert.deepEqual(
    batched.coordinators.map((x) => [x.key, x.errorCode, x.nodeId]),
    [
      ['a', 0, 0],
      ['b', 0, 0],
      ['', ErrorCode.INVALID_REQUEST, -1],
    ],
  );
});

for (const [initV, addV, offV, endV] of [
  [0, 0, 0, 0],
  [1, 1, 1, 1],
  [2, 2, 2, 2],
  [3, 3, 3, 3],
  [4, 3, 4, 4],
  [5, 3, 4, 4],
] as const) {
  test(`a committed transaction: InitProducerId v${initV}, AddPartitionsToTxn v${addV}, AddOffsetsToTxn v${offV}, EndTxn v${endV}`, async () => {
    const id = `wire-commit-${initV}`;
    await findTxnCoordinator(c, id);
    const init = await initPid(initV, id);
    assert.equal(init.errorCode, 0);
    assert.equal(init.producerEpoch, 0);
    const bad = await addParts(addV, id, init.producerId, 0, [
      { name: 'tt', partitions: [0, 1] },
      { name: 'no-such', partitions: [0] },
    ]);
    assert.deepEqual(partitionCodes(bad), {
      'tt-0': ErrorCode.OPERATION_NOT_ATTEMPTED,
      'tt-1': ErrorCode.OPERATION_NOT_ATTEMPTED,
      'no-such-0': ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
    });
    const add = await addParts(addV, id, init.producerId, 0, [{ name: 'tt', partitions: [0, 1] }]);
    assert.deepEqual(partitionCodes(add), { 'tt-0': 0, 'tt-1': 0 });
    const off = await c.request(25, AddOffsetsToTxnRequestCodec, AddOffsetsToTxnResponseCodec, offV, {
      transactionalId: id,
      producerId: init.producerId,
      producerEpoch: 0,
      groupId: 'wire-group',
    });
    assert.equal(off.errorCode, 0);
    const d = await describe(id);
    assert.equal(d.transactionState, 'Ongoing');
    assert.equal(d.transactionTimeoutMs, 60000);
    const offsetsPartition = partitionForGroup('wire-group', b.broker.config.offsetsTopicNumPartitions);
    assert.deepEqual(d.topics.map((t) => [t.topic, t.partitions]).sort(), [
      ['__consumer_offsets', [offsetsPartition]],
      ['tt', [0, 1]],
    ]);
    const calls = markers.calls.length;
    const end = await c.request(26, EndTxnRequestCodec, EndTxnResponseCodec, endV, {
      transactionalId: id,
      producerId: init.producerId,
      producerEpoch: 0,
      committed: true,
    });
    assert.equal(end.errorCode, 0);
    await until(
      'CompleteCommit',
      () => describe(id),
      (x) => x.transactionState === 'CompleteCommit',
    );
    const sent = markers.calls.slice(calls).find((m) => m.producerId === init.producerId)!;
    assert.equal(sent.commit, true);
    assert.deepEqual(sent.partitions.map((p) => `${p.topic}-${p.partition}`).sort(), [`__consumer_offsets-${offsetsPartition}`, 'tt-0', 'tt-1']);
    // An old epoch: PRODUCER_FENCED, or INVALID_PRODUCER_EPOCH before the versions that know it.
    assert.equal((await initPid(initV, id)).producerEpoch, 1);
    const fenced = await addParts(addV, id, init.producerId, 0, [{ name: 'tt', partitions: [2] }]);
    assert.equal(partitionCodes(fenced)['tt-2'], addV >= 2 ? ErrorCode.PRODUCER_FENCED : ErrorCode.INVALID_PRODUCER_EPOCH);
  });
}

test('AddPartitionsToTxn v4 (the broker form): verify_only checks, a batch adds', async () => {
  const id = 'wire-v4';
  await findTxnCoordinator(c, id);
  const init = await initPid(4, id);
  const txn = (verifyOnly: boolean, partitions: number[]) => ({
    transactionalId: id,
    producerId: init.producerId,
    producerEpoch: init.producerEpoch,
    verifyOnly,
    topics: [{ name: 'tt', partitions }],
  });
  const added = await c.request(24, AddPartitionsToTxnRequestCodec, AddPartitionsToTxnResponseCodec, 4, { transactions: [txn(false, [2])] });
  assert.equal(added.errorCode, 0);
  assert.equal(added.resultsByTransaction[0]!.topicResults[0]!.resultsByPartition[0]!.partitionErrorCode, 0);
  const verified = await c.request(24, AddPartitionsToTxnRequestCodec, AddPartitionsToTxnResponseCodec, 5, { transactions: [txn(true, [2, 0])] });
  assert.deepEqual(
    verified.resultsByTransaction[0]!.topicResults[0]!.resultsByPartition.map((p) => [p.partitionIndex, p.partitionErrorCode]),
    [
      [2, 0],
      [0, ErrorCode.INVALID_TXN_STATE],
    ],
  );
});

test('a second producer with the same transactional id fences the first and aborts its transaction', async () => {
  const id = 'wire-fence';
  await findTxnCoordinator(c, id);
  const a = await initPid(5, id);
  assert.equal(partitionCodes(await addParts(3, id, a.producerId, a.producerEpoch, [{ name: 'tt', partitions: [1] }]))['tt-1'], 0);
  const first = await initPid(5, id);
  assert.equal(first.errorCode, ErrorCode.CONCURRENT_TRANSACTIONS, 'the open transaction is being aborted');
  const bInit = await until(
    'the abort to complete',
    () => initPid(5, id),
    (r) => r.errorCode !== ErrorCode.CONCURRENT_TRANSACTIONS,
  );
  assert.deepEqual([bInit.errorCode, bInit.producerId, bInit.producerEpoch], [0, a.producerId, a.producerEpoch + 2]);
  const abort = markers.calls.find((m) => m.producerId === a.producerId && !m.commit)!;
  assert.equal(abort.producerEpoch, a.producerEpoch + 1);
  assert.deepEqual(abort.partitions, [{ topic: 'tt', partition: 1 }]);
  const end = await c.request(26, EndTxnRequestCodec, EndTxnResponseCodec, 3, {
    transactionalId: id,
    producerId: a.producerId,
    producerEpoch: a.producerEpoch,
    committed: true,
  });
  assert.equal(end.errorCode, ErrorCode.PRODUCER_FENCED);
  const list = await c.request(66, ListTransactionsRequestCodec, ListTransactionsResponseCodec, 1, {
    stateFilters: ['Empty', 'Bogus'],
    producerIdFilters: [a.producerId],
    durationFilter: -1n,
  });
  assert.deepEqual(list.unknownStateFilters, ['Bogus']);
  assert.deepEqual(
    list.transactionStates.map((t) => [t.transactionalId, t.transactionState]),
    [[id, 'Empty']],
  );
});

test('a transaction open past its timeout is aborted by the coordinator', async () => {
  const id = 'wire-timeout';
  await findTxnCoordinator(c, id);
  const init = await initPid(4, id, -1n, -1, 300);
  assert.equal(init.errorCode, 0);
  await addParts(3, id, init.producerId, init.producerEpoch, [{ name: 'tt', partitions: [0] }]);
  const d = await until(
    'the timeout abort',
    () => describe(id),
    (x) => x.transactionState === 'CompleteAbort',
  );
  assert.equal(d.producerEpoch, init.producerEpoch + 1, 'aborted under a bumped epoch');
  assert.ok(markers.calls.some((m) => m.producerId === init.producerId && !m.commit));
  const late = await c.request(26, EndTxnRequestCodec, EndTxnResponseCodec, 3, {
    transactionalId: id,
    producerId: init.producerId,
    producerEpoch: init.producerEpoch,
    committed: true,
  });
  assert.equal(late.errorCode, ErrorCode.PRODUCER_FENCED);
});

test('INVALID_TRANSACTION_TIMEOUT above transaction.max.timeout.ms; DescribeTransactions of an unknown id', async () => {
  await findTxnCoordinator(c, 'wire-limits');
  assert.equal((await initPid(4, 'wire-limits', -1n, -1, 900001)).errorCode, ErrorCode.INVALID_TRANSACTION_TIMEOUT);
  assert.equal((await describe('wire-limits')).errorCode, ErrorCode.TRANSACTIONAL_ID_NOT_FOUND);
});

test('a restarted broker reloads __transaction_state: ids, epochs and an open transaction survive', async () => {
  const m2 = new RecordingMarkers();
  const b2 = await startTestBroker(PROPS, undefined, { txnMarkerWriter: m2 });
  const dir = b2.dir;
  let c2 = await RawClient.connect(b2.port);
  let b3: TestBroker | undefined;
  try {
    await createTopic(b2, 'rt', 1);
    await findTxnCoordinator(c2, 'restart-open');
    const open = await initPid(4, 'restart-open', -1n, -1, 60000, c2);
    await c2.request(24, AddPartitionsToTxnRequestCodec, AddPartitionsToTxnResponseCodec, 3, {
      v3AndBelowTransactionalId: 'restart-open',
      v3AndBelowProducerId: open.producerId,
      v3AndBelowProducerEpoch: 0,
      v3AndBelowTopics: [{ name: 'rt', partitions: [0] }],
    });
    await findTxnCoordinator(c2, 'restart-done');
    await initPid(4, 'restart-done', -1n, -1, 60000, c2);
    const done = await initPid(4, 'restart-done', -1n, -1, 60000, c2);
    assert.equal(done.producerEpoch, 1);
    c2.close();
    await b2.stop({ keepDir: true });

    b3 = await startTestBroker(PROPS, dir, { txnMarkerWriter: new RecordingMarkers() });
    c2 = await RawClient.connect(b3.port);
    const d = await until(
      'the reload',
      () => describe('restart-open', c2),
      (x) => x.errorCode === 0,
    );
    assert.equal(d.transactionState, 'Ongoing');
    assert.deepEqual(d.topics, [{ topic: 'rt', partitions: [0] }]);
    assert.equal(d.producerId, open.producerId);
    const again = await initPid(4, 'restart-done', -1n, -1, 60000, c2);
    assert.deepEqual([again.errorCode, again.producerId, again.producerEpoch], [0, done.producerId, 2]);
    // A new id after the restart gets a producer id never handed out before.
    const fresh = await initPid(4, 'restart-new', -1n, -1, 60000, c2);
    assert.ok(fresh.producerId !== open.producerId && fresh.producerId !== done.producerId);
  } finally {
    c2.close();
    await b3?.stop();
    const { rm } = await import('node:fs/promises');
    await rm(dir, { recursive: true, force: true });
  }
});

for (const version of [0, 1, 2, 3, 4]) {
  test(`TxnOffsetCommit v${version}: offsets invisible (UNSTABLE_OFFSET_COMMIT to require_stable) until the transaction commits`, async () => {
    const id = `wire-offsets-${version}`;
    const group = `wire-offsets-group-${version}`;
    // What the WriteTxnMarkers handler will do for __consumer_offsets partitions once it lands.
    markers.onWritten = async (req) => {
      for (const p of req.partitions) {
        if (p.topic === '__consumer_offsets') await b.broker.services.groupCoordinator.onTransactionCompleted(p.partition, req.producerId, req.commit);
      }
    };
    await findTxnCoordinator(c, id);
    await c.request(10, FindCoordinatorRequestCodec, FindCoordinatorResponseCodec, 3, { key: group, keyType: 0 });
    await b.broker.services.groupCoordinator.loaded();
    const init = await initPid(4, id);
    const pe = { transactionalId: id, producerId: init.producerId, producerEpoch: init.producerEpoch };
    assert.equal((await c.request(25, AddOffsetsToTxnRequestCodec, AddOffsetsToTxnResponseCodec, 3, { ...pe, groupId: group })).errorCode, 0);
    const commit = await c.request(28, TxnOffsetCommitRequestCodec, TxnOffsetCommitResponseCodec, version, {
      ...pe,
      groupId: group,
      generationId: -1,
      memberId: '',
      groupInstanceId: null,
      topics: [
        {
          name: 'tt',
          partitions: [
            { partitionIndex: 0, committedOffset: 42n, committedLeaderEpoch: -1, committedMetadata: 'x' },
            { partitionIndex: 9, committedOffset: 1n, committedLeaderEpoch: -1, committedMetadata: null },
          ],
        },
      ],
    });
    assert.deepEqual(
      commit.topics[0]!.partitions.map((p) => [p.partitionIndex, p.errorCode]),
      [
        [0, 0],
        [9, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION],
      ],
    );
    const fetch = (requireStable: boolean) =>
      c
        .request(9, OffsetFetchRequestCodec, OffsetFetchResponseCodec, 7, { groupId: group, topics: [{ name: 'tt', partitionIndexes: [0] }], requireStable })
        .then((r) => r.topics[0]!.partitions[0]!);
    assert.equal((await fetch(false)).committedOffset, -1n);
    assert.equal((await fetch(true)).errorCode, ErrorCode.UNSTABLE_OFFSET_COMMIT);
    assert.equal((await c.request(26, EndTxnRequestCodec, EndTxnResponseCodec, 3, { ...pe, committed: true })).errorCode, 0);
    const after = await until(
      'the offsets to become visible',
      () => fetch(true),
      (p) => p.errorCode === 0 && p.committedOffset === 42n,
    );
    assert.equal(after.metadata, 'x');
  });
}
