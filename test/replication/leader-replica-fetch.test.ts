/**
 * Replica fetches at a leader (issue 12): errors and epoch fencing, diverging epochs, long polls,
 * fetches by topic id before UpdateMetadata, and parked fetches when leadership is taken.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ErrorCode } from '../../src/protocol/errors.js';
import { header, pstate } from '../metadata/zk/zk-broker-helpers.js';
import { TOPIC_ID, T, startLeader, batch, fetchVia, replicaFetch, part, produce } from './leader-harness.js';

test('replica fetch errors: unknown replica, fenced/unknown epochs, a follower partition, diverging epoch (v12+)', async () => {
  const l = await startLeader({ epoch: 1 });
  try {
    await produce(l, 2, 1); // epoch 1: offsets 0-1
    // Not a replica: NOT_LEADER_OR_FOLLOWER, or UNKNOWN_LEADER_EPOCH when it names an epoch (as Kafka).
    assert.equal(part(await replicaFetch(l, 7, 0)).errorCode, ErrorCode.NOT_LEADER_OR_FOLLOWER);
    assert.equal(part(await replicaFetch(l, 7, 0, { currentLeaderEpoch: 1 })).errorCode, ErrorCode.UNKNOWN_LEADER_EPOCH);
    assert.equal(l.partition().followerState(7), undefined);
    assert.equal(part(await replicaFetch(l, 2, 0, { currentLeaderEpoch: 0 })).errorCode, ErrorCode.FENCED_LEADER_EPOCH);
    assert.equal(part(await replicaFetch(l, 2, 0, { currentLeaderEpoch: 5 })).errorCode, ErrorCode.UNKNOWN_LEADER_EPOCH);
    assert.equal(l.partition().followerState(2)!.logEndOffset, -1, 'refused fetches record nothing');
    // New epoch 2 from offset 2.
    const s2 = pstate(T, 0, 1, 2, [1, 2, 3]);
    await l.control.leaderAndIsr(header(1), [{ ...s2, topicId: TOPIC_ID, zkVersion: 1 }]);
    assert.equal(l.partition().partitionEpoch, 1);
    await produce(l, 1, 1); // epoch 2: offset 2
    // A follower that holds an epoch-1 record at offset 2 (a former leader's tail): diverges at (1, 2).
    const d = await replicaFetch(l, 2, 3, { lastFetchedEpoch: 1, currentLeaderEpoch: 2 });
    assert.equal(part(d).errorCode, ErrorCode.NONE);
    assert.deepEqual([part(d).divergingEpoch.epoch, part(d).divergingEpoch.endOffset], [1, 2n]);
    assert.equal(part(d).records!.length, 0);
    assert.equal(l.partition().followerState(2)!.logEndOffset, -1, 'a diverging fetch records no position');
    // An epoch newer than the leader's latest: its end is unknown, OFFSET_OUT_OF_RANGE (Kafka's validateLastFetchedEpoch).
    const d2 = part(await replicaFetch(l, 3, 3, { lastFetchedEpoch: 4 }));
    assert.equal(d2.errorCode, ErrorCode.OFFSET_OUT_OF_RANGE);
    // One older than every epoch the leader holds: it ended where the first known one starts.
    const d3 = part(await replicaFetch(l, 3, 3, { lastFetchedEpoch: 0 }));
    assert.deepEqual([d3.errorCode, d3.divergingEpoch.epoch, d3.divergingEpoch.endOffset], [ErrorCode.NONE, 0, 0n]);
    // In line: records, no divergence.
    const ok = part(await replicaFetch(l, 2, 2, { lastFetchedEpoch: 1, currentLeaderEpoch: 2 }));
    assert.equal(ok.divergingEpoch.epoch, -1);
    assert.ok(ok.records!.length > 0);
    assert.equal(l.partition().followerState(2)!.logEndOffset, 2);
    // Beyond the log end: OFFSET_OUT_OF_RANGE, nothing recorded.
    assert.equal(part(await replicaFetch(l, 3, 9)).errorCode, ErrorCode.OFFSET_OUT_OF_RANGE);
    assert.equal(l.partition().followerState(3)!.logEndOffset, -1);
    // A follower partition answers replica fetches NOT_LEADER_OR_FOLLOWER.
    await l.control.leaderAndIsr(header(1), [{ ...pstate(T, 0, 2, 3, [1, 2, 3]), topicId: TOPIC_ID, zkVersion: 2 }]);
    assert.equal(part(await replicaFetch(l, 3, 0)).errorCode, ErrorCode.NOT_LEADER_OR_FOLLOWER);
  } finally {
    await l.close();
  }
});

test('a replica fetch at the log end long-polls and wakes on the next leader append', async () => {
  const l = await startLeader();
  try {
    await produce(l, 1, 1);
    await replicaFetch(l, 2, 1);
    const started = Date.now();
    const parked = replicaFetch(l, 2, 1, { maxWaitMs: 20_000 });
    await new Promise((r) => setImmediate(r));
    await produce(l, 1, 1);
    const r = part(await parked);
    assert.ok(r.records!.length > 0, 'woken with the new record');
    assert.ok(Date.now() - started < 10_000, 'woken by the append, not by its 20 s deadline');
  } finally {
    await l.close();
  }
});

test('a replica fetch by topic id (v13+) is served from LeaderAndIsr alone, before UpdateMetadata gives the image the topic; a consumer fetch is not', async () => {
  // A new topic: the follower fetches as soon as its own LeaderAndIsr is processed, usually before
  // the leader has the controller's UpdateMetadata. Answered UNKNOWN_TOPIC_ID, it would back off
  // replica.fetch.backoff.ms (1 s), stalling every acks=all produce to the topic that long.
  const l = await startLeader({ withoutUpdateMetadata: true });
  try {
    assert.equal(l.image.topicById(TOPIC_ID), undefined, 'the metadata image does not know the topic yet');
    // (Produce needs the image's topic; the leader's log takes the records directly.)
    assert.equal((await l.partition().appendAsLeader(batch(2))).errorCode, ErrorCode.NONE);
    for (const version of [13, 15, 17]) {
      const r = await replicaFetch(l, 2, 0, { version });
      assert.equal(part(r).errorCode, ErrorCode.NONE, `v${version}`);
      assert.ok(part(r).records!.length > 0, `v${version}: records`);
    }
    assert.equal(l.partition().followerState(2)!.logEndOffset, 0);
    await replicaFetch(l, 2, 2, { version: 13 });
    await replicaFetch(l, 3, 2, { version: 13 });
    assert.equal(l.partition().highWatermark, 2, 'the fetches count for the high watermark');
    // An id no hosted partition has (say, of a deleted topic of the same name) is still unknown.
    const other = await fetchVia(l, 13, {
      replicaId: 2,
      topics: [
        {
          topicId: 'AAAAAAAAAAAAAAAAAAAAQQ',
          partitions: [{ partition: 0, fetchOffset: 0n, partitionMaxBytes: 1 << 20, currentLeaderEpoch: -1, lastFetchedEpoch: -1, logStartOffset: -1n }],
        },
      ],
    });
    assert.equal(part(other).errorCode, ErrorCode.UNKNOWN_TOPIC_ID);
    // Consumers still resolve ids through the metadata image only, as before.
    const c = await fetchVia(l, 13, {
      replicaId: -1,
      topics: [
        {
          topicId: TOPIC_ID,
          partitions: [{ partition: 0, fetchOffset: 0n, partitionMaxBytes: 1 << 20, currentLeaderEpoch: -1, lastFetchedEpoch: -1, logStartOffset: -1n }],
        },
      ],
    });
    assert.equal(part(c).errorCode, ErrorCode.UNKNOWN_TOPIC_ID);
  } finally {
    await l.close();
  }
});

test("taking the lead of a partition answers its followers' parked fetches at once, and their fetches park only briefly until they fetch it", async () => {
  // A follower whose fetcher already fetches from this broker has a fetch parked here; the first
  // fetch that can name a partition this broker now leads is the next one. Left to its 20 s wait,
  // the new partition (and every acks=all produce to it) would wait that long.
  const l = await startLeader();
  const TOPIC2_ID = 'AAAAAAAAAAAAAAAAAAAABA';
  try {
    await produce(l, 1, 1);
    await replicaFetch(l, 2, 1);
    await replicaFetch(l, 3, 1);
    const started = Date.now();
    const parked = replicaFetch(l, 2, 1, { maxWaitMs: 20_000 });
    const registered = Date.now() + 10_000;
    while (l.partition().replicaWaiters.size === 0 && Date.now() < registered) await new Promise((r) => setImmediate(r));
    assert.equal(l.partition().replicaWaiters.size, 1, 'the fetch is parked');
    // LeaderAndIsr: broker 1 also leads rep2-0 now, followers 2 and 3.
    const s2 = pstate('rep2', 0, 1, 1, [1, 2, 3]);
    assert.equal((await l.control.leaderAndIsr(header(1), [{ ...s2, topicId: TOPIC2_ID }])).partitions[0]!.errorCode, ErrorCode.NONE);
    const answered = part(await parked);
    assert.equal(answered.errorCode, ErrorCode.NONE);
    assert.equal(answered.records!.length, 0, 'answered without data');
    assert.ok(Date.now() - started < 10_000, `answered by the new leadership, not its 20 s wait (${Date.now() - started} ms)`);
    // Follower 2's next fetch may still lack rep2-0 (it processes its own LeaderAndIsr later): it
    // parks briefly, not for 20 s.
    const t1 = Date.now();
    assert.equal(part(await replicaFetch(l, 2, 1, { maxWaitMs: 20_000 })).records!.length, 0);
    assert.ok(Date.now() - t1 < 10_000, `a brief park while rep2-0 awaits its first fetch (${Date.now() - t1} ms)`);
    // Once follower 2 fetched rep2-0, its fetches park for their whole wait again: woken here by an append.
    await fetchVia(l, 12, {
      replicaId: 2,
      topics: [
        {
          topic: 'rep2',
          partitions: [{ partition: 0, fetchOffset: 0n, partitionMaxBytes: 1 << 20, currentLeaderEpoch: -1, lastFetchedEpoch: -1, logStartOffset: -1n }],
        },
      ],
    });
    assert.equal(l.rm.getPartition('rep2', 0)!.followerState(2)!.logEndOffset, 0);
    const long = replicaFetch(l, 2, 1, { maxWaitMs: 20_000 });
    const early = await Promise.race([long.then(() => 'answered'), new Promise<string>((r) => setTimeout(() => r('parked'), 1000))]);
    assert.equal(early, 'parked', 'parks for its max wait again');
    await produce(l, 1, 1);
    assert.ok(part(await long).records!.length > 0, 'woken by the append with the record');
    // Follower 3 has not fetched rep2-0 either: still brief for it (within its max wait).
    const t3 = Date.now();
    await replicaFetch(l, 3, 2, { maxWaitMs: 20_000 });
    assert.ok(Date.now() - t3 < 10_000, 'follower 3 parks briefly too');
  } finally {
    await l.close();
  }
});
