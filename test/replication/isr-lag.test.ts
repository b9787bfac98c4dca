/**
 * The leader's ISR shrink (PartitionIsr) on a fake clock: each follower's lag window runs from
 * its own last caught-up time. An accepted ISR change must not restart the window of the
 * followers that stay in the ISR (issue 21, F4: with two followers cut at once the second left
 * the ISR a whole replica.lag.time.max.ms after the first). As Kafka, only a leader change
 * (Replica.resetReplicaState at makeLeader) resets it.
 */
import { test, mock } from 'node:test';
import assert from 'node:assert/strict';
import { PartitionIsr, type IsrChange, type IsrHost } from '../../src/replication/partition/isr/partition-isr.js';

const MAX_LAG_MS = 10_000;

interface Harness {
  isr: PartitionIsr;
  host: { -readonly [K in keyof IsrHost]: IsrHost[K] };
  writes: IsrChange[];
  /** Lets the writes' promises settle. */
  flush(): Promise<void>;
}

function harness(): Harness {
  const host = {
    topic: 't',
    partition: 0,
    isLeader: true,
    leaderId: 1,
    leaderEpoch: 3,
    logEndOffset: 100,
    logStartOffset: 0,
    highWatermark: 100,
    leaderEpochStartOffset: 0,
  };
  const writes: IsrChange[] = [];
  let version = 0;
  const isr = new PartitionIsr(host, () => {});
  isr.writer = {
    writeIsr: async (change) => {
      writes.push(change);
      return ++version;
    },
  };
  return { isr, host, writes, flush: () => new Promise((resolve) => setImmediate(resolve)) };
}

test('a second lagging follower leaves the ISR when its own lag window ends, not a window after the first', async (t) => {
  // settle() reads the wall clock; the fake one keeps both clocks the same.
  mock.timers.enable({ apis: ['Date'], now: 0 });
  t.after(() => mock.timers.reset());
  const { isr, host, writes, flush } = harness();
  isr.take([1, 2, 3], [1, 2, 3], 0, 1);
  isr.resetFollowers(1, true, 0);
  // Both followers fetch to the log end: 2 at t=0, 3 at t=4 s; then both are cut off while
  // the leader keeps appending.
  isr.updateFollowerFetchState(2, 100, 0, 0);
  mock.timers.tick(4000);
  isr.updateFollowerFetchState(3, 100, 4000, 0);
  host.logEndOffset = 120;

  // The leader checks every replica.lag.time.max.ms / 2.
  mock.timers.tick(1000);
  assert.deepEqual(isr.maybeShrink(5000, MAX_LAG_MS), [], 'no one lags 10 s at +5 s');
  mock.timers.tick(5001);
  assert.deepEqual(isr.maybeShrink(10_001, MAX_LAG_MS), [2], 'follower 2 last caught up at 0');
  await flush();
  assert.deepEqual(isr.isr, [1, 3], 'the shrink was accepted');

  // Follower 3 last caught up at +4 s: out once 14 s have passed, not at 20 s.
  mock.timers.tick(4000);
  assert.deepEqual(
    isr.maybeShrink(14_001, MAX_LAG_MS),
    [3],
    `follower 3 (caught up at 4000) is out at 14001; its last caught-up time reads ${isr.followerState(3)?.lastCaughtUpTimeMs}`,
  );
  await flush();
  assert.deepEqual(isr.isr, [1]);
  assert.deepEqual(
    writes.map((w) => w.isr),
    [[1, 3], [1]],
  );
});

test('a leader change still starts a fresh window for the followers in the ISR (Kafka resetReplicaState)', () => {
  const { isr, host } = harness();
  isr.take([1, 2, 3], [1, 2, 3], 0, 1);
  isr.resetFollowers(1, true, 0);
  host.logEndOffset = 120;
  // Re-elected at 9 s with 2 in the ISR and 3 not: 2 counts as caught up at 9 s, 3 as never.
  isr.take([1, 2], [1, 2, 3], 1, 1);
  isr.resetFollowers(1, false, 9000);
  assert.equal(isr.followerState(2)?.lastCaughtUpTimeMs, 9000);
  assert.equal(isr.followerState(3)?.lastCaughtUpTimeMs, 0);
  assert.deepEqual(isr.maybeShrink(15_000, MAX_LAG_MS), [], 'follower 2 is within its window from the leader change');
});
