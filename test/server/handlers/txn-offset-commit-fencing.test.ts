/**
 * TxnOffsetCommit from a fenced producer (an older epoch of its transactional id), over the
 * wire against a real broker (real WriteTxnMarkers): Kafka answers INVALID_PRODUCER_EPOCH at
 * every version (the append to __consumer_offsets is checked against the producer epoch there;
 * clients treat it as PRODUCER_FENCED) and the stale offsets never become visible, nor pending.
 * KIP-447's member checks (v3+) apply to a known group.
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
  FindCoordinatorRequestCodec,
  FindCoordinatorResponseCodec,
  InitProducerIdRequestCodec,
  InitProducerIdResponseCodec,
  JoinGroupRequestCodec,
  JoinGroupResponseCodec,
  OffsetFetchRequestCodec,
  OffsetFetchResponseCodec,
  SyncGroupRequestCodec,
  SyncGroupResponseCodec,
  TxnOffsetCommitRequestCodec,
  TxnOffsetCommitResponseCodec,
} from '../../../src/protocol/messages/index.js';
import { createTopic } from './data-plane-helpers.js';
import { waitForValue } from '../../helpers/wait-for.js';

let b: TestBroker;
let c: RawClient;
before(async () => {
  b = await startTestBroker({ 'auto.create.topics.enable': 'false', 'transaction.state.log.num.partitions': '1', 'offsets.topic.num.partitions': '1' });
  c = await RawClient.connect(b.port);
  await createTopic(b, 'src', 1);
});
after(async () => {
  c.close();
  await b.stop();
});

const until = <T>(what: string, fn: () => Promise<T>, ok: (v: T) => boolean, ms = 20000) => waitForValue(what, ms, fn, ok);

async function init(id: string): Promise<{ producerId: bigint; producerEpoch: number }> {
  await until(
    'the transaction coordinator',
    () => c.request(10, FindCoordinatorRequestCodec, FindCoordinatorResponseCodec, 3, { key: id, keyType: 1 }),
    (r) => r.errorCode === 0,
  );
  // A second InitProducerId aborts the first producer's transaction: CONCURRENT_TRANSACTIONS until done.
  const r = await until(
    'InitProducerId',
    () =>
      c.request(22, InitProducerIdRequestCodec, InitProducerIdResponseCodec, 4, {
        transactionalId: id,
        transactionTimeoutMs: 60000,
        producerId: -1n,
        producerEpoch: -1,
      }),
    (x) => x.errorCode !== ErrorCode.CONCURRENT_TRANSACTIONS,
  );
  assert.equal(r.errorCode, 0);
  return { producerId: r.producerId, producerEpoch: r.producerEpoch };
}

async function groupCoordinator(group: string): Promise<void> {
  await until(
    'the group coordinator',
    () => c.request(10, FindCoordinatorRequestCodec, FindCoordinatorResponseCodec, 3, { key: group, keyType: 0 }),
    (r) => r.errorCode === 0,
  );
  await b.broker.services.groupCoordinator.loaded();
}

const txnCommit = (
  version: number,
  id: string,
  group: string,
  p: { producerId: bigint; producerEpoch: number },
  offset: bigint,
  member: { generationId?: number; memberId?: string; groupInstanceId?: string | null } = {},
) =>
  c
    .request(28, TxnOffsetCommitRequestCodec, TxnOffsetCommitResponseCodec, version, {
      transactionalId: id,
      groupId: group,
      ...p,
      generationId: member.generationId ?? -1,
      memberId: member.memberId ?? '',
      groupInstanceId: member.groupInstanceId ?? null,
      topics: [{ name: 'src', partitions: [{ partitionIndex: 0, committedOffset: offset, committedLeaderEpoch: -1, committedMetadata: '' }] }],
    })
    .then((r) => r.topics[0]!.partitions[0]!.errorCode);

const fetchStable = (group: string) =>
  c
    .request(9, OffsetFetchRequestCodec, OffsetFetchResponseCodec, 7, { groupId: group, topics: [{ name: 'src', partitionIndexes: [0] }], requireStable: true })
    .then((r) => r.topics[0]!.partitions[0]!);

for (const version of [0, 1, 2, 3, 4]) {
  test(`TxnOffsetCommit v${version} from a fenced producer whose group offsets were in its aborted transaction: INVALID_PRODUCER_EPOCH, nothing visible`, async () => {
    const id = `fenced-a-${version}`;
    const group = `fenced-a-group-${version}`;
    await groupCoordinator(group);
    const old = await init(id);
    assert.equal(
      (await c.request(25, AddOffsetsToTxnRequestCodec, AddOffsetsToTxnResponseCodec, 3, { transactionalId: id, ...old, groupId: group })).errorCode,
      0,
    );
    assert.equal(await txnCommit(version, id, group, old, 10n), ErrorCode.NONE);
    const fresh = await init(id);
    assert.ok(fresh.producerEpoch > old.producerEpoch);
    assert.equal(await txnCommit(version, id, group, old, 99n), ErrorCode.INVALID_PRODUCER_EPOCH);
    const p = await until(
      'the aborted offsets to settle',
      () => fetchStable(group),
      (x) => x.errorCode !== ErrorCode.UNSTABLE_OFFSET_COMMIT,
    );
    assert.equal(p.errorCode, ErrorCode.NONE);
    assert.equal(p.committedOffset, -1n, 'neither the aborted nor the stale offset is visible');
  });

  test(`TxnOffsetCommit v${version} from a fenced producer that never added the group to its transaction: INVALID_PRODUCER_EPOCH, not left pending`, async () => {
    const id = `fenced-b-${version}`;
    const group = `fenced-b-group-${version}`;
    await groupCoordinator(group);
    const old = await init(id);
    const add = await c.request(24, AddPartitionsToTxnRequestCodec, AddPartitionsToTxnResponseCodec, 3, {
      v3AndBelowTransactionalId: id,
      v3AndBelowProducerId: old.producerId,
      v3AndBelowProducerEpoch: old.producerEpoch,
      v3AndBelowTopics: [{ name: 'src', partitions: [0] }],
    });
    assert.equal(add.resultsByTopicV3AndBelow[0]!.resultsByPartition[0]!.partitionErrorCode, 0);
    await init(id);
    assert.equal(await txnCommit(version, id, group, old, 77n), ErrorCode.INVALID_PRODUCER_EPOCH);
    const p = await fetchStable(group);
    assert.equal(p.errorCode, ErrorCode.NONE, 'no pending stale commit blocks require_stable fetches');
    assert.equal(p.committedOffset, -1n);
  });
}

for (const version of [3, 4]) {
  test(`TxnOffsetCommit v${version} from a producer whose transaction does not hold the group: ${version < 4 ? 'INVALID_TXN_STATE' : 'TRANSACTION_ABORTABLE'}, nothing pending`, async () => {
    const id = `no-add-offsets-${version}`;
    const group = `no-add-offsets-group-${version}`;
    await groupCoordinator(group);
    const p = await init(id);
    const add = await c.request(24, AddPartitionsToTxnRequestCodec, AddPartitionsToTxnResponseCodec, 3, {
      v3AndBelowTransactionalId: id,
      v3AndBelowProducerId: p.producerId,
      v3AndBelowProducerEpoch: p.producerEpoch,
      v3AndBelowTopics: [{ name: 'src', partitions: [0] }],
    });
    assert.equal(add.resultsByTopicV3AndBelow[0]!.resultsByPartition[0]!.partitionErrorCode, 0);
    assert.equal(await txnCommit(version, id, group, p, 3n), version < 4 ? ErrorCode.INVALID_TXN_STATE : ErrorCode.TRANSACTION_ABORTABLE);
    assert.equal((await fetchStable(group)).errorCode, ErrorCode.NONE);
  });
}

test('TxnOffsetCommit v3 checks the member of a known group (KIP-447): ILLEGAL_GENERATION, UNKNOWN_MEMBER_ID, FENCED_INSTANCE_ID', async () => {
  const group = 'members-447';
  await groupCoordinator(group);
  const join = await c.request(11, JoinGroupRequestCodec, JoinGroupResponseCodec, 7, {
    groupId: group,
    sessionTimeoutMs: 30000,
    rebalanceTimeoutMs: 30000,
    memberId: '',
    groupInstanceId: 'static-1',
    protocolType: 'consumer',
    protocols: [{ name: 'range', metadata: Buffer.alloc(0) }],
  });
  assert.equal(join.errorCode, 0);
  const sync = await c.request(14, SyncGroupRequestCodec, SyncGroupResponseCodec, 5, {
    groupId: group,
    generationId: join.generationId,
    memberId: join.memberId,
    groupInstanceId: 'static-1',
    protocolType: 'consumer',
    protocolName: 'range',
    assignments: [{ memberId: join.memberId, assignment: Buffer.alloc(0) }],
  });
  assert.equal(sync.errorCode, 0);
  const id = 'members-447-tx';
  const p = await init(id);
  assert.equal((await c.request(25, AddOffsetsToTxnRequestCodec, AddOffsetsToTxnResponseCodec, 3, { transactionalId: id, ...p, groupId: group })).errorCode, 0);
  const member = { generationId: join.generationId, memberId: join.memberId, groupInstanceId: 'static-1' };
  assert.equal(await txnCommit(3, id, group, p, 5n, { ...member, generationId: join.generationId + 1 }), ErrorCode.ILLEGAL_GENERATION);
  assert.equal(await txnCommit(3, id, group, p, 5n, { ...member, memberId: 'nobody', groupInstanceId: null }), ErrorCode.UNKNOWN_MEMBER_ID);
  assert.equal(await txnCommit(3, id, group, p, 5n, { ...member, memberId: 'impostor' }), ErrorCode.FENCED_INSTANCE_ID);
  assert.equal(await txnCommit(3, id, group, p, 5n, member), ErrorCode.NONE);
});
