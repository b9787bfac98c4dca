/**
 * The leader side of replication (issue 12): the high watermark, acks=all, ISR shrink and expand,
 * coordinator writes, embedded mode. Followers are played by replica fetches (leader-harness.ts).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ErrorCode, KafkaError } from '../../src/protocol/errors.js';
import { ReplicaManagerCoordinatorLog, coordinatorAppendError } from '../../src/coordinator/runtime/partition-log.js';
import { header, pstate } from '../metadata/zk/zk-broker-helpers.js';
import { startTestBroker } from '../helpers/broker.js';
import { partitionState } from '../helpers/partition-state.js';
import { shardsOf } from '../../src/server/broker-services.js';
import { TOPIC_ID, T, startLeader, batch, replicaFetch, consumerFetch, part, produce } from './leader-harness.js';

test('leader state from LeaderAndIsr: ISR, replicas, partition epoch; the HW waits for every ISR member and consumers read only below it', async () => {
  const l = await startLeader();
  try {
    const p = l.partition();
    assert.deepEqual([p.isLeader, [...p.isr], [...p.replicas], p.partitionEpoch, p.controllerEpoch], [true, [1, 2, 3], [1, 2, 3], 0, 1]);
    const res = await produce(l, 3, 1);
    assert.equal(res.errorCode, ErrorCode.NONE);
    assert.equal(p.logEndOffset, 3);
    assert.equal(p.highWatermark, 0, 'no follower has it yet');
    // A consumer sees nothing below the HW.
    const c0 = part(await consumerFetch(l, 0));
    assert.equal(c0.records!.length, 0);
    assert.equal(c0.highWatermark, 0n);
    // A follower reads up to the log end: all 3 records.
    const f2 = part(await replicaFetch(l, 2, 0));
    assert.equal(f2.errorCode, ErrorCode.NONE);
    assert.ok(f2.records!.length > 0, 'the follower gets records above the HW');
    assert.equal(f2.highWatermark, 0n);
    // Follower 2 has all three; 3 still has none: HW stays.
    await replicaFetch(l, 2, 3);
    assert.equal(p.followerState(2)!.logEndOffset, 3);
    assert.equal(p.highWatermark, 0);
    await replicaFetch(l, 3, 2);
    assert.equal(p.highWatermark, 2, 'min over the ISR');
    const f3 = part(await replicaFetch(l, 3, 3, { version: 15 }));
    assert.equal(f3.errorCode, ErrorCode.NONE, 'v15: replica id from replica_state');
    assert.equal(p.highWatermark, 3);
    assert.equal(f3.highWatermark, 3n, 'the response carries the HW the fetch itself advanced');
    const c1 = part(await consumerFetch(l, 0));
    assert.ok(c1.records!.length > 0);
    assert.equal(c1.highWatermark, 3n);
  } finally {
    await l.close();
  }
});

test('acks=all is answered once the ISR has the data; a parked consumer fetch wakes on the HW advance; the wait times out with REQUEST_TIMED_OUT', async () => {
  const l = await startLeader();
  try {
    const p = l.partition();
    const parked = consumerFetch(l, 0, 20_000);
    let answered = false;
    const pending = produce(l, 2, -1).then((r) => ((answered = true), r));
    // The append is in the log, but not acknowledged.
    const deadline = Date.now() + 10_000;
    while (p.logEndOffset < 2 && Date.now() < deadline) await new Promise((r) => setImmediate(r));
    assert.equal(p.logEndOffset, 2);
    await replicaFetch(l, 2, 2);
    await new Promise((r) => setImmediate(r));
    assert.equal(answered, false, 'one follower of two is not enough');
    const started = Date.now();
    await replicaFetch(l, 3, 2);
    const res = await pending;
    assert.equal(res.errorCode, ErrorCode.NONE);
    assert.equal(res.baseOffset, 0);
    const c = part(await parked);
    assert.ok(c.records!.length > 0, 'the consumer fetch was woken with the records');
    assert.ok(Date.now() - started < 10_000, 'woken by the HW, not by its 20 s deadline');
    // Nobody fetches: the produce times out.
    const t0 = Date.now();
    const timedOut = await produce(l, 1, -1, 300);
    assert.equal(timedOut.errorCode, ErrorCode.REQUEST_TIMED_OUT);
    assert.ok(Date.now() - t0 >= 250, 'waited for its timeout');
    // acks=1 answers after the local append, HW or not.
    assert.equal((await produce(l, 1, 1)).errorCode, ErrorCode.NONE);
  } finally {
    await l.close();
  }
});

test('ISR shrink and expand through the writer; NOT_ENOUGH_REPLICAS below min.insync.replicas; a BAD_VERSION gives the change up', async () => {
  const l = await startLeader({ configs: { 'min.insync.replicas': '2' } });
  try {
    const p = l.partition();
    await produce(l, 2, 1);
    await replicaFetch(l, 2, 2); // 2 caught up; 3 never fetches
    const lag = 30_000;
    // Not yet lagging long enough: nothing changes.
    l.rm.maybeShrinkIsr(Date.now());
    assert.equal(l.writer.changes.length, 0);
    l.rm.maybeShrinkIsr(Date.now() + lag + 1_000);
    assert.equal(l.writer.changes.length, 1);
    assert.deepEqual(l.writer.changes[0], { topic: T, partition: 0, leader: 1, leaderEpoch: 1, isr: [1, 2], controllerEpoch: 1, partitionEpoch: 0 });
    await new Promise((r) => setImmediate(r));
    assert.deepEqual([[...p.isr], p.partitionEpoch], [[1, 2], 1]);
    assert.equal(p.highWatermark, 2, 'the HW no longer waits for 3');
    // acks=all with ISR 2 >= min.insync 2: answered once 2 has it.
    const pending = produce(l, 1, -1);
    await new Promise((r) => setImmediate(r));
    await replicaFetch(l, 2, 3);
    assert.equal((await pending).errorCode, ErrorCode.NONE);
    // 3 catches up to the HW: it rejoins.
    await replicaFetch(l, 3, 3);
    assert.equal(l.writer.changes.length, 2);
    assert.deepEqual([l.writer.changes[1]!.isr, l.writer.changes[1]!.partitionEpoch], [[1, 2, 3], 1]);
    await new Promise((r) => setImmediate(r));
    assert.deepEqual([[...p.isr], p.partitionEpoch], [[1, 2, 3], 2]);
    // Both followers fall behind: ISR [1] < 2, and the controller moved the state meanwhile (BAD_VERSION): given up.
    await produce(l, 1, 1);
    l.writer.answer = () => 'BAD_VERSION';
    l.rm.maybeShrinkIsr(Date.now() + lag + 1_000);
    await new Promise((r) => setImmediate(r));
    assert.deepEqual(l.writer.changes[2]!.isr, [1]);
    assert.deepEqual([[...p.isr], p.partitionEpoch], [[1, 2, 3], 2], 'unchanged after BAD_VERSION');
    l.writer.answer = (c) => c.partitionEpoch + 1;
    // While it waits, the ISR shrinks below min.insync.replicas: NOT_ENOUGH_REPLICAS_AFTER_APPEND.
    const waiting = produce(l, 1, -1);
    await new Promise((r) => setImmediate(r));
    l.rm.maybeShrinkIsr(Date.now() + lag + 1_000);
    assert.equal((await waiting).errorCode, ErrorCode.NOT_ENOUGH_REPLICAS_AFTER_APPEND);
    assert.deepEqual([...p.isr], [1]);
    // And before the append now: NOT_ENOUGH_REPLICAS, nothing appended.
    const end = p.logEndOffset;
    assert.equal((await produce(l, 1, -1)).errorCode, ErrorCode.NOT_ENOUGH_REPLICAS);
    assert.equal(p.logEndOffset, end);
  } finally {
    await l.close();
  }
});

test('losing leadership answers waiting acks=all produces NOT_LEADER_OR_FOLLOWER', async () => {
  const l = await startLeader();
  try {
    const pending = produce(l, 1, -1);
    await new Promise((r) => setImmediate(r));
    await l.control.leaderAndIsr(header(1), [{ ...pstate(T, 0, 2, 2, [1, 2, 3]), topicId: TOPIC_ID, zkVersion: 1 }]);
    assert.equal((await pending).errorCode, ErrorCode.NOT_LEADER_OR_FOLLOWER);
  } finally {
    await l.close();
  }
});

test('coordinator writes (acks=-1, origin coordinator) are acknowledged only once replicated, and time out after offsets.commit.timeout.ms', async () => {
  const l = await startLeader({ configs: { 'offsets.commit.timeout.ms': '300' } });
  try {
    const log = new ReplicaManagerCoordinatorLog(l.rm, T);
    let done = false;
    const pending = log.append(0, [{ key: Buffer.from('k'), value: Buffer.from('v') }], Date.now()).then(() => (done = true));
    const deadline = Date.now() + 10_000;
    while (l.partition().logEndOffset < 1 && Date.now() < deadline) await new Promise((r) => setImmediate(r));
    await replicaFetch(l, 2, 1);
    await new Promise((r) => setImmediate(r));
    assert.equal(done, false, 'not acknowledged before the whole ISR has it');
    await replicaFetch(l, 3, 1);
    await pending;
    assert.equal(l.partition().highWatermark, 1);
    // Nobody replicates the next one: the coordinator hears COORDINATOR_NOT_AVAILABLE (Kafka's mapping of the timeout's error).
    await assert.rejects(
      log.append(0, [{ key: Buffer.from('k'), value: Buffer.from('v2') }], Date.now()),
      (e: unknown) => e instanceof KafkaError && e.code === coordinatorAppendError(ErrorCode.REQUEST_TIMED_OUT),
    );
  } finally {
    await l.close();
  }
});

test('embedded mode is unchanged: ISR = replicas = [self], no ISR writer, HW = LEO as soon as an acks=all append completes', async () => {
  const b = await startTestBroker({ 'min.insync.replicas': '1' });
  try {
    // Through the seam (PartitionShards), so this holds whichever shard owns the partition
    // (num.io.threads > 1: a worker, whose ReplicaManager is built with no ISR writer either).
    const { metadata, replicaManager } = b.broker.services;
    const shards = shardsOf(b.broker.services);
    await metadata.createTopic({ name: 'solo', numPartitions: 1, replicationFactor: 1 });
    await replicaManager.syncTopic('solo');
    const self = b.broker.services.config.brokerId;
    const before = await partitionState(b, 'solo', 0);
    assert.deepEqual([before?.leader, before?.isr, before?.replicas], [true, [self], [self]]);
    assert.equal(replicaManager.isrChangeCounts, undefined, 'no ISR writer');
    const [res] = await shards.produce([{ topic: 'solo', partition: 0, records: batch(5) }], {
      requiredAcks: -1,
      origin: 'client',
      produceVersion: 9,
      timeoutMs: 0,
    });
    assert.equal(res?.errorCode, ErrorCode.NONE, 'answered at once even with timeout 0: the ISR is only the leader');
    const after = await partitionState(b, 'solo', 0);
    assert.deepEqual([after?.logEndOffset, after?.highWatermark], [5, 5]);
    replicaManager.maybeShrinkIsr(Date.now() + 3_600_000);
    assert.deepEqual((await partitionState(b, 'solo', 0))?.isr, [self]);
  } finally {
    await b.stop();
  }
});

test('while an ISR change is being written the HW waits for the larger ISR: a pending shrink does not advance it, a pending expand already counts the new member', async () => {
  const l = await startLeader({ isr: [1, 2] });
  try {
    const p = l.partition();
    let release!: (v: number) => void;
    l.writer.writeIsr = (change) => {
      l.writer.changes.push(change);
      return new Promise((resolve) => (release = resolve));
    };
    await produce(l, 2, 1);
    // Expand: 3 reaches the HW (0) and is proposed; until accepted, the HW needs it too.
    await replicaFetch(l, 3, 0);
    assert.deepEqual(
      l.writer.changes.map((c) => c.isr),
      [[1, 2, 3]],
    );
    assert.equal(p.isrUpdateInFlight, true);
    await replicaFetch(l, 2, 2);
    assert.equal(p.highWatermark, 0, 'the pending member 3 holds the HW back');
    release(1);
    await new Promise((r) => setImmediate(r));
    assert.deepEqual([[...p.isr], p.partitionEpoch, p.isrUpdateInFlight], [[1, 2, 3], 1, false]);
    await replicaFetch(l, 3, 2);
    assert.equal(p.highWatermark, 2);
    // Shrink: 3 falls behind; until the change is accepted the HW still waits for 3.
    await produce(l, 1, 1);
    await replicaFetch(l, 2, 3);
    l.rm.maybeShrinkIsr(Date.now() + 60_000);
    assert.deepEqual(l.writer.changes.at(-1)!.isr, [1, 2]);
    assert.equal(p.highWatermark, 2, 'not advanced on a shrink that may yet fail');
    l.rm.maybeShrinkIsr(Date.now() + 60_000);
    assert.equal(l.writer.changes.length, 2, 'one change in flight at a time');
    release(2);
    await new Promise((r) => setImmediate(r));
    assert.deepEqual([[...p.isr], p.highWatermark], [[1, 2], 3]);
  } finally {
    await l.close();
  }
});

test("a LeaderAndIsr of the same leader epoch with an older partition epoch (zkVersion) does not undo the leader's own ISR change", async () => {
  // Property test seed 1563065635: the leader shrank its ISR to [1,2] (zkVersion 5); a new
  // controller's failover LeaderAndIsr, read from ZooKeeper before that write (same leader epoch,
  // zkVersion 4, ISR [1,2,0]), arrived afterwards and put the lagging replica back, so the high
  // watermark stood past the log end of an ISR member. Kafka's Partition.makeLeader/makeFollower
  // skip a state whose partition epoch is older than the one they know.
  const l = await startLeader();
  try {
    const p = l.partition();
    await produce(l, 2, 1);
    await replicaFetch(l, 2, 2);
    l.rm.maybeShrinkIsr(Date.now() + 31_000);
    await new Promise((r) => setImmediate(r));
    assert.deepEqual([[...p.isr], p.partitionEpoch], [[1, 2], 1]);
    const stale = pstate(T, 0, 1, 1, [1, 2, 3]); // zkVersion 0, ISR [1,2,3]
    const res = await l.control.leaderAndIsr(header(1), [{ ...stale, topicId: TOPIC_ID }]);
    assert.equal(res.partitions[0]!.errorCode, ErrorCode.NONE);
    assert.deepEqual([[...p.isr], p.partitionEpoch, p.isLeader, p.leaderEpoch], [[1, 2], 1, true, 1], 'the newer ISR stays');
    // A newer partition epoch of the same leader epoch is taken.
    const newer = { ...pstate(T, 0, 1, 1, [1, 2, 3], [1, 2, 3]), zkVersion: 2 };
    await l.control.leaderAndIsr(header(1), [{ ...newer, topicId: TOPIC_ID }]);
    assert.deepEqual([[...p.isr], p.partitionEpoch], [[1, 2, 3], 2]);
  } finally {
    await l.close();
  }
});
