import { test } from 'node:test';
import assert from 'node:assert/strict';
import { LeaderEpochCache } from '../../src/storage/log/leader-epoch-cache.js';
import { withTempDir } from './helpers.js';

test('leader epoch cache: assign, end offsets, truncation both ways, persistence', async () => {
  await withTempDir(async (dir) => {
    const cache = new LeaderEpochCache(dir);
    assert.ok(cache.assign(0, 0));
    assert.ok(!cache.assign(0, 5), 'same epoch again is ignored');
    assert.ok(cache.assign(2, 10));
    assert.ok(cache.assign(5, 20));
    assert.deepEqual(cache.endOffsetFor(0, 30), { epoch: 0, endOffset: 10 });
    assert.deepEqual(cache.endOffsetFor(3, 30), { epoch: 2, endOffset: 20 });
    assert.deepEqual(cache.endOffsetFor(5, 30), { epoch: 5, endOffset: 30 });
    await cache.persist();
    const again = new LeaderEpochCache(dir);
    await again.load(() => assert.fail('no problem expected'));
    assert.equal(again.latestEpoch(), 5);
    assert.ok(again.truncateFromEnd(20));
    assert.equal(again.latestEpoch(), 2);
    assert.ok(again.truncateFromStart(12));
    assert.deepEqual(again.all(), [{ epoch: 2, startOffset: 12 }]);
  });
});

test('leader epoch cache: a newer epoch at the same start replaces the epochs that hold no data (Kafka assign)', async () => {
  await withTempDir(async (dir) => {
    const cache = new LeaderEpochCache(dir);
    assert.ok(cache.assign(1, 0));
    assert.ok(cache.assign(3, 5)); // taken by a leader at its log end, nothing written
    assert.ok(cache.assign(4, 5)); // the next leader's first batch starts there too
    assert.deepEqual(cache.all(), [
      { epoch: 1, startOffset: 0 },
      { epoch: 4, startOffset: 5 },
    ]);
    assert.deepEqual(cache.endOffsetFor(3, 9), { epoch: 1, endOffset: 5 });
  });
});

test('leader epoch cache: endOffsetFor an epoch below every known one is the first known start; above the latest, undefined (Kafka)', async () => {
  await withTempDir(async (dir) => {
    const cache = new LeaderEpochCache(dir);
    assert.deepEqual(cache.endOffsetFor(0, 0), { epoch: -1, endOffset: -1 }, 'nothing known');
    assert.ok(cache.assign(1, 0));
    assert.ok(cache.assign(3, 40));
    // A replica that led epoch 0 alone asks: its epoch ended where the first one known here starts.
    assert.deepEqual(cache.endOffsetFor(0, 90), { epoch: 0, endOffset: 0 });
    assert.deepEqual(cache.endOffsetFor(2, 90), { epoch: 1, endOffset: 40 });
    assert.deepEqual(cache.endOffsetFor(3, 90), { epoch: 3, endOffset: 90 });
    assert.deepEqual(cache.endOffsetFor(4, 90), { epoch: -1, endOffset: -1 }, 'newer than the latest: undefined');
    assert.deepEqual(cache.endOffsetFor(-1, 90), { epoch: -1, endOffset: -1 });
  });
});
