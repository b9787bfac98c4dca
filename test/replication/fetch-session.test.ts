import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FetchSession, FetchSessionCache } from '../../src/replication/fetch/fetch-session.js';

const part = (topic: string, partition: number, fetchOffset = 0) => ({
  topic,
  topicId: `id-${topic}`,
  partition,
  fetchOffset,
  partitionMaxBytes: 1024,
  currentLeaderEpoch: -1,
});

test('sessions get distinct non-zero ids and start at epoch 1', () => {
  const cache = new FetchSessionCache(10);
  const a = cache.create(false, 1)!;
  const b = cache.create(false, 1)!;
  assert.notEqual(a.id, 0);
  assert.notEqual(a.id, b.id);
  assert.equal(a.epoch, 1);
  a.advanceEpoch();
  assert.equal(a.epoch, 2);
  assert.equal(cache.get(a.id), a);
  assert.equal(cache.remove(a.id), true);
  assert.equal(cache.get(a.id), undefined);
});

test('a full cache evicts a stale session first, then a smaller one, else refuses', () => {
  let now = 0;
  const cache = new FetchSessionCache(2, 1000, () => now);
  const a = cache.create(false, 5)!;
  for (let i = 0; i < 5; i++) a.upsert(part('t', i));
  const b = cache.create(false, 5)!;
  for (let i = 0; i < 5; i++) b.upsert(part('u', i));
  // Both fresh and as big as the newcomer: no slot.
  assert.equal(cache.create(false, 3), undefined);
  // A bigger newcomer may evict a smaller session.
  now = 10;
  cache.get(b.id);
  const c = cache.create(false, 6)!;
  assert.ok(c);
  assert.equal(cache.size, 2);
  assert.equal(cache.get(a.id) === undefined || cache.get(b.id) === undefined, true);
  // Stale sessions go before anything else.
  now = 5000;
  cache.get(c.id);
  const d = cache.create(false, 1);
  assert.ok(d);
  assert.ok(cache.get(c.id));
});

test('incremental inclusion: data, errors, or moved offsets only', () => {
  const s = new FetchSession(1, false, 0);
  const p = s.upsert(part('t', 0));
  const r = { errorCode: 0, highWatermark: 10, lastStableOffset: 10, logStartOffset: 0, bytes: 0 };
  assert.equal(s.noteResponse(p, r), true); // first time: everything is news
  assert.equal(s.noteResponse(p, r), false);
  assert.equal(s.noteResponse(p, { ...r, bytes: 100 }), true);
  assert.equal(s.noteResponse(p, { ...r, highWatermark: 11, lastStableOffset: 11 }), true);
  assert.equal(s.noteResponse(p, { ...r, highWatermark: 11, lastStableOffset: 11, errorCode: 1 }), true);
  s.upsert(part('t', 0, 50));
  assert.equal(s.partitions.get(FetchSession.key('t', 0))!.fetchOffset, 50);
  s.forget('t', 0);
  assert.equal(s.partitions.size, 0);
});

test('topic-id sessions key partitions by topic id', () => {
  const s = new FetchSession(1, true, 0);
  s.upsert(part('t', 0));
  s.forget('t', 0);
  assert.equal(s.partitions.size, 1);
  s.forget('id-t', 0);
  assert.equal(s.partitions.size, 0);
});

test('a diverging-epoch answer does not count its offsets as delivered: the follower discards them and truncates', () => {
  // Found by test/replication/replication-properties.test.ts (seed 1707682679): a restarted
  // follower truncated at the leader's log end after a diverging answer carrying HW 3; nothing
  // changed on the leader after that, so no later incremental answer included the partition and
  // the follower's high watermark stayed at 2 for good.
  const s = new FetchSession(1, false, 0);
  const p = s.upsert(part('t', 0));
  const r = { errorCode: 0, highWatermark: 2, lastStableOffset: 2, logStartOffset: 0, bytes: 0 };
  assert.equal(s.noteResponse(p, r), true);
  const moved = { ...r, highWatermark: 3, lastStableOffset: 3 };
  assert.equal(s.noteResponse(p, { ...moved, divergingEpoch: { epoch: 0, endOffset: 3 } }), true);
  // The follower truncated and fetches again: the same offsets are news to it.
  assert.equal(s.noteResponse(p, moved), true);
  assert.equal(s.noteResponse(p, moved), false);
});
