/**
 * The replica fetcher's state machine against a fake leader served from real logs: copying,
 * truncation by diverging epoch (Fetch v12+) and by OffsetForLeaderEpoch (older leaders), to the
 * high watermark without epochs, out-of-range recovery both ways, fencing, backoff and
 * reconnection, and removal waiting for an append in progress.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ErrorCode } from '../../src/protocol/errors.js';
import { silentLogger } from '../../src/server/logger.js';
import { ReplicaFetcher } from '../../src/replication/fetcher/replica-fetcher.js';
import { ReplicaFetcherManager, fetcherIdFor, followerReplicaOf } from '../../src/replication/fetcher/manager.js';
import { truncationPoint } from '../../src/replication/fetcher/truncation.js';
import type { FollowerReplica } from '../../src/replication/fetcher/types.js';
import type { Partition } from '../../src/replication/partition/partition.js';
import { FakeLeader, TEST_FETCHER_CONFIG, epochBatch, logBytes, openPartition, tempDir, waitFor } from './fetcher-helpers.js';

interface Setup {
  leader: Partition;
  follower: Partition;
  fake: FakeLeader;
  fetcher: ReplicaFetcher;
  close(): Promise<void>;
}

async function setup(opts: { truncationOnFetch?: boolean; fetchBackoffMs?: number } = {}): Promise<Setup> {
  const l = await tempDir('fjord-leader-');
  const f = await tempDir('fjord-follower-');
  const leader = await openPartition(l.dir);
  const follower = await openPartition(f.dir);
  const fake = new FakeLeader(new Map([['t-0', leader]]));
  fake.truncationOnFetch = opts.truncationOnFetch ?? true;
  const fetcher = new ReplicaFetcher(
    fake,
    0,
    { ...TEST_FETCHER_CONFIG, fetchBackoffMs: opts.fetchBackoffMs ?? TEST_FETCHER_CONFIG.fetchBackoffMs },
    silentLogger(),
  );
  fetcher.start();
  return {
    leader,
    follower,
    fake,
    fetcher,
    async close() {
      await fetcher.shutdown();
      await leader.log.close();
      await follower.log.close();
      await l.remove();
      await f.remove();
    },
  };
}

function add(s: Setup, fetchOffset: number, leaderEpoch = s.fake.leaderEpoch): void {
  s.fetcher.addPartitions([{ replica: followerReplicaOf(s.follower), topicId: 'id', leaderId: 1, leaderEpoch, fetchOffset }]);
}

async function caughtUp(s: Setup): Promise<void> {
  await waitFor(
    `follower at the leader's end ${s.leader.logEndOffset}`,
    () => s.follower.logEndOffset === s.leader.logEndOffset && s.follower.highWatermark === s.leader.logEndOffset,
  );
  assert.ok((await logBytes(s.follower.log)).equals(await logBytes(s.leader.log)), "the follower's log is byte-identical to the leader's");
}

test("truncationPoint follows Kafka's getOffsetTruncationState", () => {
  const replica = (entries: { epoch: number; startOffset: number }[], leo: number) => ({
    logEndOffset: leo,
    endOffsetForEpoch(epoch: number) {
      let idx = -1;
      for (let i = 0; i < entries.length; i++) if (entries[i]!.epoch <= epoch) idx = i;
      if (idx < 0) return undefined;
      return { epoch: entries[idx]!.epoch, endOffset: entries[idx + 1]?.startOffset ?? leo };
    },
  });
  const r = replica(
    [
      { epoch: 1, startOffset: 0 },
      { epoch: 3, startOffset: 10 },
    ],
    15,
  );
  assert.deepEqual(truncationPoint({ leaderEpoch: 3, endOffset: 12 }, r, 15), { offset: 12, complete: true });
  assert.deepEqual(truncationPoint({ leaderEpoch: 3, endOffset: 40 }, r, 15), { offset: 15, complete: true });
  // The leader's epoch 2 is unknown here: cut to the end of our epoch 1 and ask again.
  assert.deepEqual(truncationPoint({ leaderEpoch: 2, endOffset: 12 }, r, 15), { offset: 10, complete: false });
  assert.deepEqual(truncationPoint({ leaderEpoch: 0, endOffset: 7 }, r, 15), { offset: 7, complete: true });
  assert.deepEqual(truncationPoint({ leaderEpoch: -1, endOffset: 7 }, r, 15), { offset: 7, complete: true });
  assert.deepEqual(truncationPoint({ leaderEpoch: 3, endOffset: -1 }, r, 9), { offset: 9, complete: true });
});

test("fetcherIdFor is Kafka's getFetcherId", () => {
  // Values from Java's arithmetic: abs(31 * "topic".hashCode() + p) % 3 and the same for __consumer_offsets % 4.
  assert.deepEqual(
    [0, 1, 2, 3, 4, 5].map((p) => fetcherIdFor('topic', p, 3)),
    [1, 0, 2, 1, 0, 2],
  );
  assert.deepEqual(
    [0, 1, 2, 3, 4, 5].map((p) => fetcherIdFor('__consumer_offsets', p, 4)),
    [3, 2, 1, 0, 3, 2],
  );
  assert.equal(fetcherIdFor('anything', 7, 1), 0);
});

test('a follower copies the leader byte for byte, sends its replica fields, and follows the HW', async () => {
  const s = await setup();
  try {
    await s.leader.appendAsFollower(Buffer.concat([epochBatch(0, 5, 0), epochBatch(5, 5, 0)]));
    s.fake.hw.set('t-0', 7);
    add(s, 0);
    await waitFor('follower at 10', () => s.follower.logEndOffset === 10);
    await waitFor('follower HW 7', () => s.follower.highWatermark === 7);
    const sent = s.fake.fetches.at(-1)![0]!;
    assert.equal(sent.currentLeaderEpoch, 0);
    assert.equal(sent.fetchOffset, 10);
    assert.equal(sent.lastFetchedEpoch, 0, 'last_fetched_epoch is the epoch of the last batch appended');
    assert.equal(sent.maxBytes, TEST_FETCHER_CONFIG.fetchMaxBytes);
    s.fake.hw.delete('t-0');
    await s.leader.appendAsFollower(epochBatch(10, 3, 0));
    await caughtUp(s);
    assert.deepEqual(s.follower.log.epochs.all(), s.leader.log.epochs.all());
  } finally {
    await s.close();
  }
});

test("diverging_epoch: a former leader's unreplicated tail is cut and replaced by the new leader's", async () => {
  const s = await setup();
  try {
    // Both had epoch 1 up to 10; the follower (old leader) wrote 10..14 at epoch 1 alone;
    // the new leader wrote 10..19 at epoch 2.
    await s.leader.appendAsFollower(Buffer.concat([epochBatch(0, 10, 1), epochBatch(10, 10, 2, 'new')]));
    await s.follower.appendAsFollower(Buffer.concat([epochBatch(0, 10, 1), epochBatch(10, 5, 1, 'lost')]));
    s.fake.leaderEpoch = 2;
    add(s, s.follower.logEndOffset, 2);
    await caughtUp(s);
    const first = s.fake.fetches[0]![0]!;
    assert.equal(first.fetchOffset, 15);
    assert.equal(first.lastFetchedEpoch, 1);
    assert.equal(s.fake.epochRequests.length, 0, 'no OffsetForLeaderEpoch round with a v12+ leader');
    assert.ok(
      s.fake.fetches.some((f) => f[0]!.fetchOffset === 10),
      'fetched again from the divergence point',
    );
    assert.deepEqual(s.follower.log.epochs.all(), [
      { epoch: 1, startOffset: 0 },
      { epoch: 2, startOffset: 10 },
    ]);
  } finally {
    await s.close();
  }
});

test('a former leader that wrote epoch 0 alone, back under a leader whose history starts at epoch 1: cut to 0 and caught up', async () => {
  // The fault suite's stuck rejoin: a partition's first leader took 687 records no follower
  // fetched, died, and the next leader began epoch 1 at offset 0. The old leader, back as a
  // follower, fetched at 687 with last_fetched_epoch 0 for good: the leader's epoch cache
  // answered "unknown" for an epoch below its first, which is OFFSET_OUT_OF_RANGE, and the
  // out-of-range handling kept 687. Kafka answers (0, start of epoch 1) and the follower cuts there.
  for (const truncationOnFetch of [true, false]) {
    const s = await setup({ truncationOnFetch });
    try {
      await s.leader.appendAsFollower(epochBatch(0, 900, 1, 'new'));
      await s.follower.appendAsFollower(epochBatch(0, 687, 0, 'lost'));
      s.fake.leaderEpoch = 1;
      add(s, s.follower.logEndOffset, 1);
      await caughtUp(s);
      assert.deepEqual(s.follower.log.epochs.all(), [{ epoch: 1, startOffset: 0 }], `truncationOnFetch ${truncationOnFetch}`);
      assert.deepEqual(await logBytes(s.follower.log), await logBytes(s.leader.log));
    } finally {
      await s.close();
    }
  }
});

test('an old leader (no diverging_epoch): truncation by OffsetForLeaderEpoch before fetching', async () => {
  const s = await setup({ truncationOnFetch: false });
  try {
    // Both hold 0..7 of epoch 1. We also wrote 8..9 at epoch 1 and 10..13 at epoch 3, never
    // replicated; the leader has epoch 2 from 8 and epoch 4 from 12.
    await s.leader.appendAsFollower(Buffer.concat([epochBatch(0, 8, 1), epochBatch(8, 4, 2, 'new'), epochBatch(12, 4, 4, 'new')]));
    await s.follower.appendAsFollower(Buffer.concat([epochBatch(0, 8, 1), epochBatch(8, 2, 1, 'lost'), epochBatch(10, 4, 3, 'lost')]));
    s.fake.leaderEpoch = 4;
    add(s, s.follower.logEndOffset, 4);
    await caughtUp(s);
    // Epoch 3 -> the leader's largest below it is 2, unknown here: cut to our epoch 1's end (10), ask for 1 -> it ends at 8.
    assert.deepEqual(
      s.fake.epochRequests.map((r) => r.leaderEpoch),
      [3, 1],
    );
    assert.ok(
      s.fake.fetches.every((f) => f[0]!.lastFetchedEpoch === -1),
      'no last_fetched_epoch below Fetch v12',
    );
    assert.ok(s.fake.fetches[0]![0]!.fetchOffset === 8, 'first fetch from the divergence point');
  } finally {
    await s.close();
  }
});

test('without epochs the follower truncates to its high watermark before fetching', async () => {
  const s = await setup();
  try {
    await s.leader.appendAsFollower(Buffer.concat([epochBatch(0, 3, -1), epochBatch(3, 3, -1, 'new')]));
    await s.follower.appendAsFollower(Buffer.concat([epochBatch(0, 3, -1), epochBatch(3, 5, -1, 'lost')]));
    assert.equal(s.follower.log.epochs.latestEpoch(), -1);
    s.follower.setFollowerHighWatermark(3);
    add(s, s.follower.highWatermark);
    await waitFor('follower at 6', () => s.follower.logEndOffset === 6 && s.follower.highWatermark === 6);
    const { records } = await s.follower.log.read(3, 1 << 20);
    assert.ok(records.toString('latin1').includes('new3'), 'the tail after the HW came from the leader');
    assert.ok(!records.toString('latin1').includes('lost'), 'the tail beyond the HW was removed');
  } finally {
    await s.close();
  }
});

test('a shorter leader log cuts ours (diverging epoch); a leader start beyond our end restarts our log there (out of range)', async () => {
  const s = await setup();
  try {
    // The leader's epoch 0 ends at 4; we hold 9 offsets of epoch 0.
    await s.leader.appendAsFollower(epochBatch(0, 4, 0));
    await s.follower.appendAsFollower(Buffer.concat([epochBatch(0, 4, 0), epochBatch(4, 5, 0, 'lost')]));
    s.fetcher.addPartitions([{ replica: followerReplicaOf(s.follower), topicId: 'id', leaderId: 1, leaderEpoch: 0, fetchOffset: 9 }]);
    await waitFor('follower cut to 4', () => s.follower.logEndOffset === 4);
    await s.fetcher.removePartitions(['t-0']);

    // Now the leader deleted everything before 100 and we are at 4.
    await s.leader.truncateFullyAndStartAt(100);
    await s.leader.appendAsFollower(epochBatch(100, 5, 1));
    s.fake.leaderEpoch = 1;
    s.fetcher.addPartitions([{ replica: followerReplicaOf(s.follower), topicId: 'id', leaderId: 1, leaderEpoch: 1, fetchOffset: 4 }]);
    await waitFor("follower restarted at the leader's start and caught up", () => s.follower.logStartOffset === 100 && s.follower.logEndOffset === 105);
    assert.ok((await logBytes(s.follower.log)).equals(await logBytes(s.leader.log)));
  } finally {
    await s.close();
  }
});

test("OFFSET_OUT_OF_RANGE from the leader (no epochs): the leader's log end decides", async () => {
  const s = await setup({ truncationOnFetch: false });
  try {
    await s.leader.appendAsFollower(epochBatch(0, 4, -1));
    await s.follower.appendAsFollower(Buffer.concat([epochBatch(0, 4, -1), epochBatch(4, 5, -1, 'lost')]));
    // No epochs: the follower truncates to the fetch offset given (its HW, 9 here: a stale checkpoint)
    // and the leader answers out of range; ListOffsets latest says 4.
    add(s, 9);
    await waitFor("follower cut to the leader's end", () => s.follower.logEndOffset === 4);
    await s.leader.appendAsFollower(epochBatch(4, 2, -1, 'more'));
    await caughtUp(s);
  } finally {
    await s.close();
  }
});

test('FENCED_LEADER_EPOCH fails the partition until re-added; other errors back off and retry', async () => {
  const s = await setup();
  try {
    await s.leader.appendAsFollower(epochBatch(0, 3, 0));
    s.fake.leaderEpoch = 1;
    add(s, 0, 0);
    await waitFor('partition failed', () => s.fetcher.failed.has('t-0'));
    assert.equal(s.fetcher.has('t-0'), false);
    assert.equal(s.follower.logEndOffset, 0);
    // The next LeaderAndIsr brings epoch 1; two transient errors first.
    s.fake.scriptedErrors.set('t-0', [ErrorCode.NOT_LEADER_OR_FOLLOWER, ErrorCode.UNKNOWN_LEADER_EPOCH]);
    add(s, 0, 1);
    assert.equal(s.fetcher.failed.has('t-0'), false);
    await caughtUp(s);
    assert.equal(s.fake.scriptedErrors.get('t-0')!.length, 0, 'both errors were met and retried');
  } finally {
    await s.close();
  }
});

test('a partition just added is asked again soon while its leader is not ready for it; once answered, errors wait the whole backoff', async () => {
  const s = await setup({ fetchBackoffMs: 30_000 });
  try {
    await s.leader.appendAsFollower(epochBatch(0, 3, 0));
    // The follower asked before the leader processed its LeaderAndIsr (or had the topic's id).
    s.fake.scriptedErrors.set('t-0', [ErrorCode.UNKNOWN_TOPIC_ID, ErrorCode.NOT_LEADER_OR_FOLLOWER, ErrorCode.UNKNOWN_LEADER_EPOCH]);
    const started = Date.now();
    add(s, 0, 0);
    await caughtUp(s);
    assert.ok(Date.now() - started < 15_000, `caught up in ${Date.now() - started} ms, not after 30 s backoffs`);
    assert.equal(s.fake.scriptedErrors.get('t-0')!.length, 0);
    // Answered once: the same error now waits replica.fetch.backoff.ms.
    s.fake.scriptedErrors.set('t-0', [ErrorCode.NOT_LEADER_OR_FOLLOWER]);
    await s.leader.appendAsFollower(epochBatch(3, 1, 0));
    await waitFor('the error met', () => s.fake.scriptedErrors.get('t-0')!.length === 0 && s.fetcher.stateOf('t-0')!.delayUntil > Date.now());
    assert.ok(s.fetcher.stateOf('t-0')!.delayUntil - Date.now() > 20_000, 'backs off the whole replica.fetch.backoff.ms');
  } finally {
    await s.close();
  }
});

for (const truncationOnFetch of [true, false]) {
  test(`a write racing the fetch (a produce accepted as leader) is caught by leader epochs (truncation on fetch: ${truncationOnFetch})`, async () => {
    const s = await setup({ truncationOnFetch });
    try {
      await s.leader.appendAsFollower(Buffer.concat([epochBatch(0, 5, 0), epochBatch(5, 5, 1, 'new')]));
      await s.follower.appendAsFollower(epochBatch(0, 5, 0));
      s.fake.leaderEpoch = 1;
      // While the first fetch is out, the old leader's last produce lands in the follower's log.
      s.fake.beforeAnswer = async () => {
        await s.follower.appendAsFollower(epochBatch(5, 2, 0, 'stray'));
      };
      add(s, 5, 1);
      await caughtUp(s);
      assert.equal(s.fetcher.failed.size, 0, 'not failed: fetching went on');
    } finally {
      await s.close();
    }
  });
}

test('connection failures back off and reconnect', async () => {
  const s = await setup();
  try {
    await s.leader.appendAsFollower(epochBatch(0, 3, 0));
    s.fake.connectFailures = 3;
    const t0 = Date.now();
    add(s, 0);
    await caughtUp(s);
    assert.ok(s.fake.connects >= 4, `${s.fake.connects} connection attempts`);
    // Three backoffs of 20 ms at least.
    assert.ok(Date.now() - t0 >= 3 * TEST_FETCHER_CONFIG.fetchBackoffMs, 'backed off between attempts');
  } finally {
    await s.close();
  }
});

test('removing a partition waits for its append in progress; no append happens after', async () => {
  const s = await setup();
  try {
    await s.leader.appendAsFollower(epochBatch(0, 3, 0));
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    let started = false;
    let finished = false;
    let appendsAfterRemoval = 0;
    let removed = false;
    const real = followerReplicaOf(s.follower);
    const slow: FollowerReplica = {
      ...real,
      get topic() {
        return real.topic;
      },
      get partition() {
        return real.partition;
      },
      get logStartOffset() {
        return real.logStartOffset;
      },
      get logEndOffset() {
        return real.logEndOffset;
      },
      get highWatermark() {
        return real.highWatermark;
      },
      async appendAsFollower(records) {
        if (removed) appendsAfterRemoval++;
        started = true;
        await gate;
        const r = await real.appendAsFollower(records);
        finished = true;
        return r;
      },
    };
    s.fetcher.addPartitions([{ replica: slow, topicId: 'id', leaderId: 1, leaderEpoch: 0, fetchOffset: 0 }]);
    await waitFor('append started', () => started);
    let removalDone = false;
    const removal = s.fetcher.removePartitions(['t-0']).then(() => (removalDone = true));
    removed = true;
    await new Promise((r) => setImmediate(r));
    assert.equal(removalDone, false, 'removal waits for the append');
    release();
    await removal;
    assert.equal(finished, true, 'the append was complete when removal returned');
    assert.equal(appendsAfterRemoval, 0);
    assert.equal(s.follower.logEndOffset, 3);
    assert.equal(s.fetcher.has('t-0'), false);
  } finally {
    await s.close();
  }
});

test('the manager puts partitions on fetchers by (leader, fetcher id), moves them between leaders and stops idle fetchers', async () => {
  const l = await tempDir('fjord-leader-');
  const f = await tempDir('fjord-follower-');
  const leaderParts = new Map<string, Partition>();
  const followers: Partition[] = [];
  for (let p = 0; p < 4; p++) {
    const lp = await openPartition(l.dir, 'topic', p);
    await lp.appendAsFollower(epochBatch(0, 2 + p, 0));
    leaderParts.set(`topic-${p}`, lp);
    followers.push(await openPartition(f.dir, 'topic', p));
  }
  const fakes: FakeLeader[] = [];
  const mgr = new ReplicaFetcherManager({
    config: { ...TEST_FETCHER_CONFIG, numFetchers: 3 },
    logger: silentLogger(),
    endpointOf: () => undefined,
    createLeader: (leaderId) => {
      const fake = new FakeLeader(leaderParts);
      Object.defineProperty(fake, 'leaderId', { value: leaderId });
      fakes.push(fake);
      return fake;
    },
  });
  try {
    await mgr.addFetcherForPartitions(followers.map((p) => ({ replica: followerReplicaOf(p), topicId: 'id', leaderId: 1, leaderEpoch: 0, fetchOffset: 0 })));
    assert.deepEqual([...mgr.allFetchers().keys()].sort(), ['1:0', '1:1', '1:2']);
    assert.equal(mgr.fetcherOf('topic', 0)!.fetcherId, fetcherIdFor('topic', 0, 3));
    await waitFor('all caught up', () => followers.every((p, i) => p.logEndOffset === 2 + i));
    // Partition 0 moves to leader 5.
    await mgr.addFetcherForPartitions([{ replica: followerReplicaOf(followers[0]!), topicId: 'id', leaderId: 5, leaderEpoch: 0, fetchOffset: 2 }]);
    assert.equal(mgr.fetcherOf('topic', 0)!.leader.leaderId, 5);
    assert.ok(mgr.isFetching('topic', 0));
    await mgr.removeFetcherForPartitions(['topic-0', 'topic-1', 'topic-2', 'topic-3']);
    assert.equal(mgr.allFetchers().size, 0, 'idle fetchers are shut down');
    assert.ok(
      fakes.every((x) => x.closed),
      'their connections are closed',
    );
  } finally {
    await mgr.shutdown();
    for (const p of [...leaderParts.values(), ...followers]) await p.log.close();
    await l.remove();
    await f.remove();
  }
});

test('shutdown does not wait for a leader that never answers (a frozen process): LeaderAndIsr stops idle fetchers', async () => {
  const s = await setup();
  add(s, 0);
  let release!: () => void;
  const never = new Promise<void>((resolve) => (release = resolve));
  // The next round's connect hangs, as a connect to a SIGSTOPped broker does until the socket timeout.
  const connect = s.fake.connect.bind(s.fake);
  let stuck = 0;
  s.fake.connect = async () => {
    stuck++;
    await never;
    return connect();
  };
  await waitFor('the fetcher stuck connecting', () => stuck > 0);
  const started = Date.now();
  await s.fetcher.shutdown();
  const took = Date.now() - started;
  assert.ok(took < 1000, `shutdown took ${took} ms`);
  release();
  await s.fetcher.stopped;
  await s.close();
});
