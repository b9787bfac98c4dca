/**
 * The transaction coordinator's operations over an in-memory log, a fake clock and a fake
 * TxnMarkerWriter: epochs, fencing, KIP-360 resumption, EndTxn's prepare → markers → complete,
 * marker retries, timeouts, id expiry, reloading, and following leadership.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import pino from 'pino';
import { TxnCoordinator, TRANSACTION_STATE_TOPIC } from '../../../src/coordinator/txn/txn-coordinator.js';
import { decodeTxnRecord } from '../../../src/coordinator/txn/records.js';
import { TxnState, txnStateName } from '../../../src/coordinator/txn/txn-state.js';
import type { TxnMarkerRequest, TxnMarkerResult, TxnMarkerWriter } from '../../../src/coordinator/txn/markers.js';
import { defaultBrokerConfig } from '../../../src/server/config/build-broker-config.js';
import { ErrorCode } from '../../../src/protocol/errors.js';
import type { MetadataStore } from '../../../src/metadata/metadata-store.js';
import type { ReplicaManager } from '../../../src/replication/replica-manager.js';
import type { CoordinatorLog } from '../../../src/coordinator/runtime/types.js';
import { MemoryLog } from '../memory-log.js';

class FakeMarkers implements TxnMarkerWriter {
  readonly calls: TxnMarkerRequest[] = [];
  /** Per call, an error for some partitions ("t-0" → code); consumed in order. */
  readonly script: Map<string, number>[] = [];
  /** Runs as each call arrives (1-based). */
  onCall: (n: number) => void = () => undefined;
  async writeMarkers(req: TxnMarkerRequest): Promise<TxnMarkerResult[]> {
    this.calls.push(req);
    this.onCall(this.calls.length);
    const errs = this.script.shift() ?? new Map<string, number>();
    return req.partitions.map((p) => ({ ...p, errorCode: errs.get(`${p.topic}-${p.partition}`) ?? ErrorCode.NONE }));
  }
  close(): void {}
}

interface Harness {
  tc: TxnCoordinator;
  markers: FakeMarkers;
  log: MemoryLog;
  clock: { now: number };
  partitions: { partition: number; leader: number; leaderEpoch: number; replicas: number[]; isr: number[] }[];
  topics: Map<string, number>;
}

async function harness(opts: { log?: MemoryLog; clock?: { now: number }; wrapLog?: (l: MemoryLog) => CoordinatorLog } = {}): Promise<Harness> {
  const config = defaultBrokerConfig({ 'broker.id': '0', 'transaction.state.log.num.partitions': '1', 'transaction.max.timeout.ms': '60000' });
  const partitions = [{ partition: 0, leader: 0, leaderEpoch: 0, replicas: [0], isr: [0] }];
  const topics = new Map([
    ['t', 3],
    ['u', 1],
  ]);
  const metadata = {
    topic: (name: string) =>
      name === TRANSACTION_STATE_TOPIC
        ? { name, topicId: 'x', internal: true, partitions, configs: {} }
        : topics.has(name)
          ? {
              name,
              topicId: name,
              internal: false,
              partitions: Array.from({ length: topics.get(name)! }, (_, i) => ({ partition: i, leader: 0, leaderEpoch: 0, replicas: [0], isr: [0] })),
              configs: {},
            }
          : undefined,
    onChange: () => undefined,
    brokers: () => [],
  } as unknown as MetadataStore;
  const replicaManager = { syncTopic: async () => undefined, getPartition: () => ({ leaderEpoch: 4 }) } as unknown as ReplicaManager;
  let nextPid = 1000n;
  const log = opts.log ?? new MemoryLog();
  const clock = opts.clock ?? { now: 1_000_000 };
  const markers = new FakeMarkers();
  const tc = new TxnCoordinator({
    config,
    metadata,
    replicaManager,
    logger: pino({ level: 'silent' }),
    producerIds: { generate: async () => nextPid++ },
    markers,
    log: opts.wrapLog ? opts.wrapLog(log) : log,
    clock: () => clock.now,
    markerRetryBackoffMs: 1,
  });
  await tc.syncLeadership();
  return { tc, markers, log, clock, partitions, topics };
}

const states = (log: MemoryLog): string[] =>
  log.all().map((r) => {
    const d = decodeTxnRecord(r.key, r.value)!;
    return d.metadata === null ? `tombstone ${d.transactionalId}` : `${d.transactionalId} ${txnStateName(d.metadata.state)} e${d.metadata.producerEpoch}`;
  });

const init = (tc: TxnCoordinator, id = 'tx', producerId = -1n, producerEpoch = -1, transactionTimeoutMs = 30000) =>
  tc.initProducerId({ transactionalId: id, transactionTimeoutMs, producerId, producerEpoch });

test('a new transactional id gets a fresh producer id at epoch 0; InitProducerId again bumps the epoch', async () => {
  const { tc, log } = await harness();
  assert.deepEqual(await init(tc), { errorCode: 0, producerId: 1000n, producerEpoch: 0 });
  assert.deepEqual(await init(tc), { errorCode: 0, producerId: 1000n, producerEpoch: 1 });
  assert.deepEqual(await init(tc, 'other'), { errorCode: 0, producerId: 1001n, producerEpoch: 0 });
  assert.deepEqual(states(log), ['tx Empty e0', 'tx Empty e1', 'other Empty e0']);
  assert.equal((await init(tc, 'tx', -1n, -1, 60001)).errorCode, ErrorCode.INVALID_TRANSACTION_TIMEOUT);
  assert.equal((await init(tc, 'tx', -1n, -1, 0)).errorCode, ErrorCode.INVALID_TRANSACTION_TIMEOUT);
  assert.equal((await init(tc, '')).errorCode, ErrorCode.INVALID_REQUEST);
  tc.shutdown();
});

test('commit: AddPartitions starts the transaction, EndTxn writes PrepareCommit, the markers, then CompleteCommit', async () => {
  const { tc, log, markers } = await harness();
  const { producerId, producerEpoch } = await init(tc);
  const p = { transactionalId: 'tx', producerId, producerEpoch };
  assert.equal(
    await tc.addPartitions({
      ...p,
      partitions: [
        { topic: 't', partition: 0 },
        { topic: 't', partition: 2 },
      ],
    }),
    0,
  );
  assert.equal(await tc.addPartitions({ ...p, partitions: [{ topic: 't', partition: 0 }] }), 0, 'already in: no write');
  assert.equal(await tc.addOffsets({ ...p, groupId: 'g', offsetsPartition: 7 }), 0);
  let d = await tc.describe('tx');
  assert.equal(d.transactionState, 'Ongoing');
  assert.deepEqual(d.topics, [
    { topic: 't', partitions: [0, 2] },
    { topic: '__consumer_offsets', partitions: [7] },
  ]);
  assert.equal(d.transactionStartTimeMs, 1_000_000n);
  assert.deepEqual(
    (
      await tc.verifyPartitions({
        ...p,
        partitions: [
          { topic: 't', partition: 2 },
          { topic: 't', partition: 1 },
        ],
      })
    ).partitions.map((x) => x.errorCode),
    [0, ErrorCode.INVALID_TXN_STATE],
  );
  const end = await tc.endTxn({ ...p, commit: true });
  assert.equal(end.errorCode, 0);
  await tc.markersSettled();
  assert.equal(markers.calls.length, 1);
  const call = markers.calls[0]!;
  assert.equal(call.commit, true);
  assert.equal(call.producerId, producerId);
  assert.equal(call.producerEpoch, producerEpoch);
  assert.equal(call.coordinatorEpoch, 4, "the __transaction_state partition's leader epoch");
  assert.deepEqual(call.partitions.map((x) => `${x.topic}-${x.partition}`).sort(), ['__consumer_offsets-7', 't-0', 't-2']);
  d = await tc.describe('tx');
  assert.equal(d.transactionState, 'CompleteCommit');
  assert.deepEqual(d.topics, []);
  assert.deepEqual(states(log), ['tx Empty e0', 'tx Ongoing e0', 'tx Ongoing e0', 'tx PrepareCommit e0', 'tx CompleteCommit e0']);
  // A retried commit is fine, an abort now is not; a new transaction starts from CompleteCommit.
  assert.equal((await tc.endTxn({ ...p, commit: true })).errorCode, 0);
  assert.equal((await tc.endTxn({ ...p, commit: false })).errorCode, ErrorCode.INVALID_TXN_STATE);
  assert.equal(await tc.addPartitions({ ...p, partitions: [{ topic: 'u', partition: 0 }] }), 0);
  assert.equal((await tc.describe('tx')).transactionState, 'Ongoing');
  tc.shutdown();
});

test('state errors: unknown id, wrong producer id, old epoch, EndTxn with no transaction, requests during PrepareCommit', async () => {
  const { tc, log } = await harness();
  const { producerId } = await init(tc);
  assert.equal(
    await tc.addPartitions({ transactionalId: 'nope', producerId, producerEpoch: 0, partitions: [{ topic: 't', partition: 0 }] }),
    ErrorCode.INVALID_PRODUCER_ID_MAPPING,
  );
  assert.equal(
    await tc.addPartitions({ transactionalId: 'tx', producerId: producerId + 1n, producerEpoch: 0, partitions: [{ topic: 't', partition: 0 }] }),
    ErrorCode.INVALID_PRODUCER_ID_MAPPING,
  );
  await init(tc); // epoch 1
  assert.equal(
    await tc.addPartitions({ transactionalId: 'tx', producerId, producerEpoch: 0, partitions: [{ topic: 't', partition: 0 }] }),
    ErrorCode.PRODUCER_FENCED,
  );
  assert.equal((await tc.endTxn({ transactionalId: 'tx', producerId, producerEpoch: 1, commit: true })).errorCode, ErrorCode.INVALID_TXN_STATE);
  assert.equal(await tc.addPartitions({ transactionalId: 'tx', producerId, producerEpoch: 1, partitions: [{ topic: 't', partition: 0 }] }), 0);
  log.hold = true; // the PrepareCommit append waits: the answer too, and the state shows PrepareCommit
  const ending = tc.endTxn({ transactionalId: 'tx', producerId, producerEpoch: 1, commit: true });
  assert.equal(
    await tc.addPartitions({ transactionalId: 'tx', producerId, producerEpoch: 1, partitions: [{ topic: 't', partition: 1 }] }),
    ErrorCode.CONCURRENT_TRANSACTIONS,
  );
  assert.equal((await init(tc)).errorCode, ErrorCode.CONCURRENT_TRANSACTIONS);
  log.release();
  assert.equal((await ending).errorCode, 0);
  tc.shutdown();
});

test('a second producer with the same id fences the first: its open transaction is aborted under a bumped epoch', async () => {
  const { tc, log, markers } = await harness();
  const a = await init(tc);
  const pa = { transactionalId: 'tx', producerId: a.producerId, producerEpoch: a.producerEpoch };
  assert.equal(await tc.addPartitions({ ...pa, partitions: [{ topic: 't', partition: 1 }] }), 0);
  // Producer B: CONCURRENT_TRANSACTIONS until the abort is complete.
  assert.equal((await init(tc)).errorCode, ErrorCode.CONCURRENT_TRANSACTIONS);
  await tc.markersSettled();
  assert.equal(markers.calls.length, 1);
  assert.equal(markers.calls[0]!.commit, false);
  assert.equal(markers.calls[0]!.producerEpoch, 1, 'the abort markers carry the bumped epoch (fencing A at the partitions)');
  const b = await init(tc);
  assert.deepEqual(b, { errorCode: 0, producerId: a.producerId, producerEpoch: 2 });
  assert.deepEqual(states(log).slice(1), ['tx Ongoing e0', 'tx PrepareAbort e1', 'tx CompleteAbort e1', 'tx Empty e2']);
  // A is fenced.
  assert.equal(await tc.addPartitions({ ...pa, partitions: [{ topic: 't', partition: 1 }] }), ErrorCode.PRODUCER_FENCED);
  assert.equal((await tc.endTxn({ ...pa, commit: true })).errorCode, ErrorCode.PRODUCER_FENCED);
  tc.shutdown();
});

test('KIP-360: a producer passing its id and epoch gets a bump; a retry of that bump gets the same answer; anything else is fenced', async () => {
  const { tc } = await harness();
  const a = await init(tc);
  const bumped = await init(tc, 'tx', a.producerId, a.producerEpoch);
  assert.deepEqual(bumped, { errorCode: 0, producerId: a.producerId, producerEpoch: 1 });
  assert.deepEqual(await init(tc, 'tx', a.producerId, a.producerEpoch), bumped, 'the answer was lost: the retry gets it again');
  assert.equal((await init(tc, 'tx', a.producerId, 7)).errorCode, ErrorCode.PRODUCER_FENCED);
  assert.equal((await init(tc, 'tx', 55n, 1)).errorCode, ErrorCode.PRODUCER_FENCED);
  tc.shutdown();
});

test('markers: retriable errors are retried until written; a deleted partition is dropped; fencing stops the sender', async () => {
  const { tc, markers, topics } = await harness();
  const { producerId, producerEpoch } = await init(tc);
  const p = { transactionalId: 'tx', producerId, producerEpoch };
  await tc.addPartitions({
    ...p,
    partitions: [
      { topic: 't', partition: 0 },
      { topic: 'u', partition: 0 },
    ],
  });
  markers.script.push(
    new Map([
      ['t-0', ErrorCode.NOT_LEADER_OR_FOLLOWER],
      ['u-0', ErrorCode.UNKNOWN_TOPIC_OR_PARTITION],
    ]),
  );
  markers.script.push(
    new Map([
      ['t-0', ErrorCode.NOT_ENOUGH_REPLICAS],
      ['u-0', ErrorCode.UNKNOWN_TOPIC_OR_PARTITION],
    ]),
  );
  // Deleted during the second attempt: its UNKNOWN_TOPIC_OR_PARTITION then drops it (the first one was retried).
  markers.onCall = (n) => void (n === 2 && topics.delete('u'));
  markers.script.push(new Map([['u-0', ErrorCode.UNKNOWN_TOPIC_OR_PARTITION]]));
  await tc.endTxn({ ...p, commit: false });
  await tc.markersSettled();
  assert.deepEqual(
    markers.calls.map((c) => c.partitions.length),
    [2, 2, 1],
  );
  assert.equal((await tc.describe('tx')).transactionState, 'CompleteAbort');

  // A newer coordinator/epoch answered: this one stops, the transaction stays prepared.
  await tc.addPartitions({ ...p, partitions: [{ topic: 't', partition: 1 }] });
  markers.script.push(new Map([['t-1', ErrorCode.TRANSACTION_COORDINATOR_FENCED]]));
  await tc.endTxn({ ...p, commit: true });
  await tc.markersSettled();
  assert.equal((await tc.describe('tx')).transactionState, 'PrepareCommit');
  tc.shutdown();
});

test('a transaction past its timeout is aborted with a bumped epoch; idle ids expire with a tombstone', async () => {
  const { tc, log, clock, markers } = await harness();
  const { producerId } = await init(tc, 'tx', -1n, -1, 10_000);
  await tc.addPartitions({ transactionalId: 'tx', producerId, producerEpoch: 0, partitions: [{ topic: 't', partition: 0 }] });
  await init(tc, 'idle');
  clock.now += 10_000;
  assert.deepEqual(await tc.abortTimedOutNow(), [], 'not past the timeout yet');
  clock.now += 1;
  assert.deepEqual(await tc.abortTimedOutNow(), ['tx']);
  await tc.markersSettled();
  assert.equal(markers.calls[0]!.commit, false);
  const d = await tc.describe('tx');
  assert.equal(d.transactionState, 'CompleteAbort');
  assert.equal(d.producerEpoch, 1, 'the producer of the timed-out transaction is fenced');
  assert.equal(
    await tc.addPartitions({ transactionalId: 'tx', producerId, producerEpoch: 0, partitions: [{ topic: 't', partition: 0 }] }),
    ErrorCode.PRODUCER_FENCED,
  );
  // transactional.id.expiration.ms (7 days by default) after the last update: removed.
  clock.now += 7 * 24 * 3600_000;
  assert.deepEqual((await tc.expireNow()).sort(), ['idle', 'tx']);
  assert.equal((await tc.describe('tx')).errorCode, ErrorCode.TRANSACTIONAL_ID_NOT_FOUND);
  assert.deepEqual(states(log).slice(-2).sort(), ['tombstone idle', 'tombstone tx']);
  tc.shutdown();
});

test('ListTransactions filters by state, producer id and duration', async () => {
  const { tc, clock } = await harness();
  const a = await init(tc, 'a');
  const b = await init(tc, 'b');
  await tc.addPartitions({ transactionalId: 'a', producerId: a.producerId, producerEpoch: 0, partitions: [{ topic: 't', partition: 0 }] });
  clock.now += 5000;
  const all = tc.list({ states: new Set(), producerIds: new Set(), minDurationMs: -1 });
  assert.deepEqual(all.transactions.map((t) => `${t.transactionalId} ${t.transactionState}`).sort(), ['a Ongoing', 'b Empty']);
  assert.deepEqual(
    tc.list({ states: new Set([TxnState.Ongoing]), producerIds: new Set(), minDurationMs: -1 }).transactions.map((t) => t.transactionalId),
    ['a'],
  );
  assert.deepEqual(
    tc.list({ states: new Set(), producerIds: new Set([b.producerId]), minDurationMs: -1 }).transactions.map((t) => t.transactionalId),
    ['b'],
  );
  assert.deepEqual(
    tc.list({ states: new Set(), producerIds: new Set(), minDurationMs: 4000 }).transactions.map((t) => t.transactionalId),
    ['a'],
  );
  assert.deepEqual(tc.list({ states: new Set(), producerIds: new Set(), minDurationMs: 6000 }).transactions, []);
  tc.shutdown();
});

test('reloading the partition restores every id; a transaction left in PrepareCommit gets its markers and completes', async () => {
  const first = await harness();
  const { producerId } = await init(first.tc);
  await init(first.tc, 'other');
  await first.tc.addPartitions({ transactionalId: 'tx', producerId, producerEpoch: 0, partitions: [{ topic: 't', partition: 2 }] });
  // The coordinator dies between PrepareCommit and the markers: they are never answered.
  first.markers.writeMarkers = () => new Promise(() => undefined);
  await first.tc.endTxn({ transactionalId: 'tx', producerId, producerEpoch: 0, commit: true });
  first.tc.shutdown();

  const second = await harness({ log: first.log, clock: first.clock });
  await second.tc.markersSettled();
  assert.equal(second.markers.calls.length, 1, 'the new coordinator sends the markers of the prepared transaction');
  assert.equal(second.markers.calls[0]!.commit, true);
  assert.deepEqual(second.markers.calls[0]!.partitions, [{ topic: 't', partition: 2 }]);
  assert.equal((await second.tc.describe('tx')).transactionState, 'CompleteCommit');
  assert.equal((await second.tc.describe('other')).transactionState, 'Empty');
  // The epoch continues from the log.
  assert.deepEqual(await init(second.tc), { errorCode: 0, producerId, producerEpoch: 1 });
  second.tc.shutdown();
});

test('NOT_COORDINATOR when the partition is not led here, COORDINATOR_LOAD_IN_PROGRESS while it loads', async () => {
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  let gated = false;
  const h = await harness({
    wrapLog: (l) => ({
      append: l.append.bind(l),
      replay: async (p, on) => {
        if (gated) await gate;
        return l.replay(p, on);
      },
    }),
  });
  assert.equal((await init(h.tc)).errorCode, 0);
  h.partitions[0]!.leader = 1;
  await h.tc.syncLeadership();
  assert.equal((await init(h.tc)).errorCode, ErrorCode.NOT_COORDINATOR);
  assert.equal((await h.tc.describe('tx')).errorCode, ErrorCode.NOT_COORDINATOR);
  h.partitions[0]!.leader = 0;
  gated = true;
  const loading = h.tc.syncLeadership();
  await new Promise((r) => setImmediate(r));
  assert.equal((await init(h.tc)).errorCode, ErrorCode.COORDINATOR_LOAD_IN_PROGRESS);
  assert.equal(h.tc.list({ states: new Set(), producerIds: new Set(), minDurationMs: -1 }).errorCode, ErrorCode.COORDINATOR_LOAD_IN_PROGRESS);
  release();
  await loading;
  assert.equal((await init(h.tc)).producerEpoch, 1);
  h.tc.shutdown();
});
