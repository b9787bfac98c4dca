/**
 * TxnOffsetCommit is verified against the transaction coordinator (KIP-890 part 1) wherever it
 * lives: three in-process brokers (real ZooKeeper), `__consumer_offsets` with one partition (the
 * group coordinator is its leader) and `__transaction_state` with three single-replica
 * partitions, one led by each broker, so one transactional id's coordinator is the group
 * coordinator's broker and another's is a different broker. Found by other clients' suites: the
 * same request was answered INVALID_PRODUCER_ID_MAPPING when the two coordinators shared a
 * broker and NONE when they did not (12/12 each way). Kafka 3.9 asks the transaction
 * coordinator with AddPartitionsToTxn (v4+, verify_only, as a broker) in both cases, so the
 * answer must not depend on where the coordinators live: INVALID_PRODUCER_ID_MAPPING for an id
 * the coordinator does not know with that producer id, INVALID_TXN_STATE (TRANSACTION_ABORTABLE
 * from v4) for a transaction that does not hold the group's offsets partition, NONE once
 * AddOffsetsToTxn put it there. Verifications going to one broker are batched as Kafka's
 * AddPartitionsToTxnManager batches them: one request in flight per destination, the ones
 * arriving meanwhile sent together in the next. A transactional produce to a partition led
 * elsewhere than the id's coordinator is verified the same way (KIP-890 part 1 on produce).
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { InprocCluster } from '../helpers/inproc-cluster.js';
import { requirePeer } from '../helpers/peers.js';
import { RawClient } from '../helpers/raw-client.js';
import { partitionForGroup } from '../../src/coordinator/runtime/partition-for-group.js';
import { ErrorCode } from '../../src/protocol/errors.js';
import { encodeBatch } from '../../src/protocol/records/index.js';
import {
  AddOffsetsToTxnRequestCodec,
  AddOffsetsToTxnResponseCodec,
  AddPartitionsToTxnRequestCodec,
  AddPartitionsToTxnResponseCodec,
  FindCoordinatorRequestCodec,
  FindCoordinatorResponseCodec,
  InitProducerIdRequestCodec,
  InitProducerIdResponseCodec,
  MetadataRequestCodec,
  MetadataResponseCodec,
  ProduceRequestCodec,
  ProduceResponseCodec,
  TxnOffsetCommitRequestCodec,
  TxnOffsetCommitResponseCodec,
} from '../../src/protocol/messages/index.js';

const TXN_PARTITIONS = 3;
const ADD_PARTITIONS_TO_TXN = 24;
const GROUP = 'verify-group';

let c: InprocCluster | undefined;
const clients = new Map<number, RawClient>();
before(async () => {
  c = await InprocCluster.start({
    brokers: 3,
    props: {
      'transaction.state.log.num.partitions': String(TXN_PARTITIONS),
      'transaction.state.log.replication.factor': '1',
      'transaction.state.log.min.isr': '1',
      'offsets.topic.replication.factor': '1',
    },
  }).catch(() => undefined);
  if (c) for (const b of c.brokers) clients.set(b.id, await RawClient.connect(b.port));
});
after(async () => {
  for (const cl of clients.values()) cl.close();
  await c?.stop();
});

const client = (id: number): RawClient => clients.get(id)!;

async function coordinator(key: string, keyType: 0 | 1): Promise<number> {
  return c!.waitFor(`the ${keyType === 0 ? 'group' : 'transaction'} coordinator of ${key}`, 30_000, async () => {
    const r = await client(0).request(10, FindCoordinatorRequestCodec, FindCoordinatorResponseCodec, 3, { key, keyType });
    return r.errorCode === ErrorCode.NONE ? r.nodeId : undefined;
  });
}

/** The leader of each `__transaction_state` partition, once every broker's image shows all of them. */
async function txnLeaders(): Promise<number[]> {
  return c!.waitFor('__transaction_state led everywhere', 30_000, async () => {
    const seen: number[][] = [];
    for (const b of c!.brokers) {
      const md = await client(b.id).request(3, MetadataRequestCodec, MetadataResponseCodec, 9, {
        topics: [{ name: '__transaction_state' }],
        allowAutoTopicCreation: false,
      });
      const t = md.topics[0]!;
      if (t.errorCode !== 0 || t.partitions.length !== TXN_PARTITIONS || t.partitions.some((p) => p.leaderId < 0)) return undefined;
      seen.push([...t.partitions].sort((a, b) => a.partitionIndex - b.partitionIndex).map((p) => p.leaderId));
    }
    return seen.every((s) => s.join() === seen[0]!.join()) ? seen[0] : undefined;
  });
}

/** A transactional id whose coordinator is (or is not) on broker `broker`; `tag` keeps ids apart between tests. */
function idCoordinatedBy(leaders: number[], tag: string, onBroker: boolean, broker: number): string {
  for (let i = 0; ; i++) {
    const id = `${tag}-${i}`;
    if ((leaders[partitionForGroup(id, TXN_PARTITIONS)] === broker) === onBroker) return id;
  }
}

async function initPid(id: string): Promise<{ producerId: bigint; producerEpoch: number }> {
  const coord = await coordinator(id, 1);
  const r = await c!.waitFor(`InitProducerId of ${id}`, 30_000, async () => {
    const x = await client(coord).request(22, InitProducerIdRequestCodec, InitProducerIdResponseCodec, 4, {
      transactionalId: id,
      transactionTimeoutMs: 60_000,
      producerId: -1n,
      producerEpoch: -1,
    });
    return x.errorCode === ErrorCode.COORDINATOR_LOAD_IN_PROGRESS || x.errorCode === ErrorCode.CONCURRENT_TRANSACTIONS ? undefined : x;
  });
  assert.equal(r.errorCode, ErrorCode.NONE);
  return { producerId: r.producerId, producerEpoch: r.producerEpoch };
}

async function addPartition(id: string, p: { producerId: bigint; producerEpoch: number }): Promise<void> {
  const coord = await coordinator(id, 1);
  const r = await client(coord).request(24, AddPartitionsToTxnRequestCodec, AddPartitionsToTxnResponseCodec, 3, {
    v3AndBelowTransactionalId: id,
    v3AndBelowProducerId: p.producerId,
    v3AndBelowProducerEpoch: p.producerEpoch,
    v3AndBelowTopics: [{ name: 'src', partitions: [0] }],
  });
  assert.equal(r.resultsByTopicV3AndBelow[0]!.resultsByPartition[0]!.partitionErrorCode, ErrorCode.NONE);
}

async function addOffsets(id: string, p: { producerId: bigint; producerEpoch: number }): Promise<void> {
  const coord = await coordinator(id, 1);
  const r = await client(coord).request(25, AddOffsetsToTxnRequestCodec, AddOffsetsToTxnResponseCodec, 3, { transactionalId: id, ...p, groupId: GROUP });
  assert.equal(r.errorCode, ErrorCode.NONE);
}

function txnCommit(groupCoordinator: number, version: number, id: string, p: { producerId: bigint; producerEpoch: number }): Promise<number> {
  return client(groupCoordinator)
    .request(28, TxnOffsetCommitRequestCodec, TxnOffsetCommitResponseCodec, version, {
      transactionalId: id,
      groupId: GROUP,
      ...p,
      generationId: -1,
      memberId: '',
      groupInstanceId: null,
      topics: [{ name: 'src', partitions: [{ partitionIndex: 0, committedOffset: 5n, committedLeaderEpoch: -1, committedMetadata: '' }] }],
    })
    .then((r) => r.topics[0]!.partitions[0]!.errorCode);
}

interface Setup {
  groupCoordinator: number;
  leaders: number[];
}

let setup: Setup | undefined;
async function ready(): Promise<Setup> {
  if (setup) return setup;
  const cluster = c!;
  const admin = cluster.admin();
  try {
    const res = await admin.createTopics([{ name: 'src', numPartitions: 1, replicationFactor: 1 }], { timeoutMs: 10_000 });
    assert.equal(res.get('src') ?? null, null);
  } finally {
    await admin.close();
  }
  const groupCoordinator = await coordinator(GROUP, 0);
  await coordinator('any-txn-id', 1); // creates __transaction_state
  const leaders = await txnLeaders();
  assert.equal(new Set(leaders).size, TXN_PARTITIONS, `one __transaction_state partition led by each broker: ${leaders.join(',')}`);
  setup = { groupCoordinator, leaders };
  return setup;
}

for (const colocated of [true, false]) {
  const where = colocated ? 'on the group coordinator' : 'on another broker';
  test(`TxnOffsetCommit with the transaction coordinator ${where}: INVALID_PRODUCER_ID_MAPPING, INVALID_TXN_STATE/TRANSACTION_ABORTABLE, then NONE`, {
    timeout: 60_000,
  }, async (t) => {
    if (!requirePeer(t, 'zookeeper') || !c) return;
    const { groupCoordinator, leaders } = await ready();
    const tag = colocated ? 'here' : 'there';
    // An id the coordinator does not know (no InitProducerId): Kafka's coordinator answers INVALID_PRODUCER_ID_MAPPING.
    const unknown = idCoordinatedBy(leaders, `${tag}-unknown`, colocated, groupCoordinator);
    for (const v of [0, 3, 4])
      assert.equal(
        await txnCommit(groupCoordinator, v, unknown, { producerId: 4242n, producerEpoch: 0 }),
        ErrorCode.INVALID_PRODUCER_ID_MAPPING,
        `v${v}, unknown id`,
      );

    // A transaction that holds a data partition but not the group's offsets partition.
    const id = idCoordinatedBy(leaders, `${tag}-txn`, colocated, groupCoordinator);
    const p = await initPid(id);
    await addPartition(id, p);
    assert.equal(await txnCommit(groupCoordinator, 3, id, p), ErrorCode.INVALID_TXN_STATE, 'v3 without AddOffsetsToTxn');
    assert.equal(await txnCommit(groupCoordinator, 4, id, p), ErrorCode.TRANSACTION_ABORTABLE, 'v4 without AddOffsetsToTxn');
    // A producer id the coordinator maps to another id.
    assert.equal(
      await txnCommit(groupCoordinator, 3, id, { producerId: p.producerId + 1000n, producerEpoch: p.producerEpoch }),
      ErrorCode.INVALID_PRODUCER_ID_MAPPING,
      'wrong producer id',
    );
    // A fenced epoch (Kafka turns the coordinator's PRODUCER_FENCED into INVALID_PRODUCER_EPOCH).
    const fresh = await initPid(id);
    assert.equal(await txnCommit(groupCoordinator, 3, id, p), ErrorCode.INVALID_PRODUCER_EPOCH, 'old epoch');

    await addOffsets(id, fresh);
    assert.equal(await txnCommit(groupCoordinator, 3, id, fresh), ErrorCode.NONE, 'after AddOffsetsToTxn');
  });
}

test('verifications for one remote coordinator are batched: one AddPartitionsToTxn in flight, the ones arriving meanwhile sent together', {
  timeout: 60_000,
}, async (t) => {
  if (!requirePeer(t, 'zookeeper') || !c) return;
  const cluster = c;
  const { groupCoordinator, leaders } = await ready();
  const remote = leaders.find((l) => l !== groupCoordinator)!;
  // Ids coordinated by the one remote broker `remote`.
  const ids: string[] = [];
  for (let i = 0; ids.length < 4; i++) if (leaders[partitionForGroup(`batch-${i}`, TXN_PARTITIONS)] === remote) ids.push(`batch-${i}`);
  const pids: { producerId: bigint; producerEpoch: number }[] = [];
  for (const id of ids) {
    const p = await initPid(id);
    await addOffsets(id, p);
    pids.push(p);
  }
  const key = `${groupCoordinator}>${remote}:${ADD_PARTITIONS_TO_TXN}`;
  const before = cluster.faults.seen.get(key) ?? 0;
  const held = cluster.faults.hold({ api: ADD_PARTITIONS_TO_TXN, from: groupCoordinator, to: remote });
  try {
    const first = txnCommit(groupCoordinator, 3, ids[0]!, pids[0]!);
    await cluster.waitFor('the first verification to be held', 10_000, () => held.hits === 1);
    // Three more, each on its own connection, while the first is in flight.
    const extra = await Promise.all([1, 2, 3, 4].map(() => RawClient.connect(cluster.broker(groupCoordinator).port)));
    const commitOn = (cl: RawClient, i: number) =>
      cl
        .request(28, TxnOffsetCommitRequestCodec, TxnOffsetCommitResponseCodec, 3, {
          transactionalId: ids[i]!,
          groupId: GROUP,
          ...pids[i]!,
          generationId: -1,
          memberId: '',
          groupInstanceId: null,
          topics: [{ name: 'src', partitions: [{ partitionIndex: 0, committedOffset: 7n, committedLeaderEpoch: -1, committedMetadata: '' }] }],
        })
        .then((r) => r.topics[0]!.partitions[0]!.errorCode);
    const rest = [1, 2, 3].map((i) => commitOn(extra[i - 1]!, i));
    const verifier = cluster.broker(groupCoordinator).broker!.services.txnVerification;
    await cluster.waitFor('three verifications waiting for the next request', 10_000, () => verifier.waiting(remote) === 3);
    // The same transactional id again (a client retrying): it takes the earlier one's place, which
    // is answered NETWORK_EXCEPTION, seen by the client as the retriable COORDINATOR_LOAD_IN_PROGRESS.
    const again = commitOn(extra[3]!, 3);
    assert.equal(await rest[2], ErrorCode.COORDINATOR_LOAD_IN_PROGRESS, 'the replaced verification');
    assert.equal(verifier.waiting(remote), 3);
    held.release();
    assert.deepEqual(await Promise.all([first, rest[0], rest[1], again]), [0, 0, 0, 0]);
    for (const x of extra) x.close();
    assert.equal((cluster.faults.seen.get(key) ?? 0) - before, 2, 'five verifications in two AddPartitionsToTxn requests');
  } finally {
    held.release();
  }
});

test('a transaction coordinator that cannot be reached: the retriable COORDINATOR_LOAD_IN_PROGRESS', { timeout: 60_000 }, async (t) => {
  if (!requirePeer(t, 'zookeeper') || !c) return;
  const cluster = c;
  const { groupCoordinator, leaders } = await ready();
  const id = idCoordinatedBy(leaders, 'unreachable', false, groupCoordinator);
  const p = await initPid(id);
  await addOffsets(id, p);
  const remote = leaders[partitionForGroup(id, TXN_PARTITIONS)]!;
  const dropped = cluster.faults.drop({ api: ADD_PARTITIONS_TO_TXN, from: groupCoordinator, to: remote });
  try {
    assert.equal(await txnCommit(groupCoordinator, 3, id, p), ErrorCode.COORDINATOR_LOAD_IN_PROGRESS);
    assert.equal(dropped.hits, 1);
  } finally {
    dropped.remove();
  }
  assert.equal(await txnCommit(groupCoordinator, 3, id, p), ErrorCode.NONE, 'once it can be asked');
});

test('a transactional produce is verified with the transaction coordinator on another broker (KIP-890 part 1 on produce)', { timeout: 60_000 }, async (t) => {
  if (!requirePeer(t, 'zookeeper') || !c) return;
  const cluster = c;
  const { leaders } = await ready();
  const md = await client(0).request(3, MetadataRequestCodec, MetadataResponseCodec, 9, { topics: [{ name: 'src' }], allowAutoTopicCreation: false });
  const leader = md.topics[0]!.partitions[0]!.leaderId;
  const id = idCoordinatedBy(leaders, 'produce', false, leader);
  const remote = leaders[partitionForGroup(id, TXN_PARTITIONS)]!;
  const p = await initPid(id);
  const batch = (seq: number) =>
    encodeBatch({
      records: [{ attributes: 0, timestampDelta: 0, offsetDelta: 0, key: null, value: Buffer.from(`v${seq}`), headers: [] }],
      baseTimestamp: BigInt(Date.now()),
      ...p,
      baseSequence: seq,
      isTransactional: true,
    });
  const produce = (seq: number) =>
    client(leader)
      .request(0, ProduceRequestCodec, ProduceResponseCodec, 9, {
        transactionalId: id,
        acks: -1,
        timeoutMs: 5000,
        topicData: [{ name: 'src', partitionData: [{ index: 0, records: batch(seq) }] }],
      })
      .then((r) => r.responses[0]!.partitionResponses[0]!.errorCode);
  const key = `${leader}>${remote}:${ADD_PARTITIONS_TO_TXN}`;
  const asked = () => cluster.faults.seen.get(key) ?? 0;
  const before = asked();
  assert.equal(await produce(0), ErrorCode.INVALID_TXN_STATE, 'src-0 is not in the transaction');
  await addPartition(id, p);
  assert.equal(await produce(0), ErrorCode.NONE, 'once AddPartitionsToTxn put it there');
  assert.equal(await produce(1), ErrorCode.NONE, 'the open transaction is not verified again');
  assert.equal(asked() - before, 2, 'two verify_only AddPartitionsToTxn to the coordinator');
});
