import { test } from 'node:test';
import assert from 'node:assert/strict';
import { commitOffsets, deleteOffsets, fetchOffsets, type CommitRequest } from '../../../src/coordinator/group/offsets.js';
import { expireOffsets } from '../../../src/coordinator/group/expiry.js';
import { joinGroup, syncGroup } from '../../../src/coordinator/group/join-sync.js';
import { leaveGroup } from '../../../src/coordinator/group/heartbeat-leave.js';
import { decodeRecord } from '../../../src/coordinator/group/records.js';
import { ErrorCode, KafkaError } from '../../../src/protocol/errors.js';
import { harness, joinReq, type Harness } from './harness.js';

function commitReq(over: Partial<CommitRequest> = {}, offset = 10n, metadata: string | null = 'meta'): CommitRequest {
  return {
    groupId: 'g',
    generationId: -1,
    memberId: '',
    groupInstanceId: null,
    retentionTimeMs: -1n,
    apiVersion: 9,
    topics: [
      { name: 't', partitions: [{ partitionIndex: 0, committedOffset: offset, committedLeaderEpoch: 3, commitTimestamp: -1n, committedMetadata: metadata }] },
    ],
    ...over,
  };
}
const commit = (h: Harness, r: CommitRequest) => h.runtime.write(0, (s, now) => commitOffsets(s, r, now));
const fetchAll = (h: Harness, group = 'g') => h.runtime.read(0, (s) => fetchOffsets(s, group, null));

async function stableMember(h: Harness, consumerMetadata: Buffer = Buffer.alloc(0)): Promise<string> {
  const j = await h.runtime.write(0, (s, now) => joinGroup(s, joinReq({ apiVersion: 3, protocols: [{ name: 'range', metadata: consumerMetadata }] }), now));
  await h.runtime.write(0, (s, now) =>
    syncGroup(
      s,
      { groupId: 'g', generationId: j.generationId, memberId: j.memberId, groupInstanceId: null, protocolType: null, protocolName: null, assignments: [] },
      now,
    ),
  );
  return j.memberId;
}

/** A consumer-protocol Subscription v0 for `topics`. */
function subscription(topics: string[]): Buffer {
  const parts = [Buffer.from([0, 0]), Buffer.alloc(4)];
  parts[1]!.writeInt32BE(topics.length);
  for (const t of topics) {
    const len = Buffer.alloc(2);
    len.writeInt16BE(t.length);
    parts.push(len, Buffer.from(t));
  }
  parts.push(Buffer.from([0xff, 0xff, 0xff, 0xff]));
  return Buffer.concat(parts);
}

test('a standalone commit (generation -1) is stored, fetched with its metadata, and survives a reload', async () => {
  const h = await harness();
  assert.deepEqual(await commit(h, commitReq()), [{ name: 't', partitions: [{ partitionIndex: 0, errorCode: ErrorCode.NONE }] }]);
  const f = await fetchAll(h);
  assert.equal(f[0]!.partitions[0]!.committedOffset, 10n);
  assert.equal(f[0]!.partitions[0]!.metadata, 'meta');
  assert.equal(f[0]!.partitions[0]!.committedLeaderEpoch, 3);
  const unknown = await h.runtime.read(0, (s) => fetchOffsets(s, 'g', [{ name: 't', partitions: [5] }]));
  assert.equal(unknown[0]!.partitions[0]!.committedOffset, -1n);
  h.runtime.close();
  const h2 = await harness({}, h.log);
  assert.equal((await fetchAll(h2))[0]!.partitions[0]!.committedOffset, 10n);
});

test('commits are checked against the generation and the member', async () => {
  const h = await harness();
  const member = await stableMember(h);
  assert.equal((await commit(h, commitReq({ generationId: 1, memberId: 'ghost' })))[0]!.partitions[0]!.errorCode, ErrorCode.UNKNOWN_MEMBER_ID);
  assert.equal((await commit(h, commitReq({ generationId: 0, memberId: member })))[0]!.partitions[0]!.errorCode, ErrorCode.ILLEGAL_GENERATION);
  assert.equal((await commit(h, commitReq({ generationId: -1, memberId: '' })))[0]!.partitions[0]!.errorCode, ErrorCode.UNKNOWN_MEMBER_ID);
  assert.equal((await commit(h, commitReq({ generationId: 1, memberId: member })))[0]!.partitions[0]!.errorCode, ErrorCode.NONE);
  assert.equal(
    (await commit({ ...h }, commitReq({ groupId: 'fresh', generationId: 4, memberId: 'x' })))[0]!.partitions[0]!.errorCode,
    ErrorCode.ILLEGAL_GENERATION,
  );
});

test('metadata longer than offset.metadata.max.bytes is refused per partition', async () => {
  const h = await harness({ offsetMetadataMaxBytes: 4 });
  assert.equal((await commit(h, commitReq({}, 1n, 'toolong')))[0]!.partitions[0]!.errorCode, ErrorCode.OFFSET_METADATA_TOO_LARGE);
  assert.deepEqual(await fetchAll(h), []);
});

test('the commit is answered only once durable, and undone when the append fails', async () => {
  const h = await harness();
  await commit(h, commitReq({}, 5n));
  h.log.hold = true;
  let answered = false;
  const pending = commit(h, commitReq({}, 6n)).then(() => (answered = true));
  await new Promise((r) => setImmediate(r));
  assert.equal(answered, false, 'not answered before the append completes');
  h.log.failNext = 1;
  h.log.release();
  await assert.rejects(pending, (e: unknown) => e instanceof KafkaError && e.code === ErrorCode.NOT_ENOUGH_REPLICAS);
  assert.equal((await fetchAll(h))[0]!.partitions[0]!.committedOffset, 5n, 'the failed commit was undone');
  await commit(h, commitReq({}, 7n));
  assert.equal((await fetchAll(h))[0]!.partitions[0]!.committedOffset, 7n);
});

test('v1 commit timestamps and v2–v4 retention times become expire timestamps (value v1); v5+ do not', async () => {
  const h = await harness({ offsetsRetentionMs: 1000 });
  await commit(h, commitReq({ apiVersion: 2, retentionTimeMs: 500n }));
  const last = () => {
    const r = h.log.all().at(-1)!;
    return { version: r.value!.readInt16BE(0), rec: decodeRecord(r.key, r.value) };
  };
  let l = last();
  assert.equal(l.version, 1);
  assert.ok(l.rec?.type === 'offset' && l.rec.value!.expireTimestamp === l.rec.value!.commitTimestamp + 500n);
  await commit(
    h,
    commitReq({
      apiVersion: 1,
      topics: [
        { name: 't', partitions: [{ partitionIndex: 1, committedOffset: 1n, committedLeaderEpoch: -1, commitTimestamp: 1234n, committedMetadata: null }] },
      ],
    }),
  );
  l = last();
  assert.ok(l.rec?.type === 'offset' && l.rec.value!.commitTimestamp === 1234n && l.rec.value!.expireTimestamp === 2234n);
  await commit(h, commitReq({ apiVersion: 8 }));
  l = last();
  assert.equal(l.version, 3);
});

test('expiry: an empty group expires retention after it became empty, then its group record is tombstoned', async () => {
  const h = await harness({ offsetsRetentionMs: 1000 });
  const member = await stableMember(h);
  await commit(h, commitReq({ generationId: 1, memberId: member }));
  h.clock.now += 5000;
  assert.equal(await h.runtime.write(0, (s, now) => expireOffsets(s, now)), 0, 'a live group keeps its offsets');
  await h.runtime.write(0, (s, now) => leaveGroup(s, 'g', [{ memberId: member, groupInstanceId: null }], now));
  h.clock.now += 999;
  assert.equal(await h.runtime.write(0, (s, now) => expireOffsets(s, now)), 0, 'not yet: retention counts from when the group became empty');
  h.clock.now += 1;
  assert.equal(await h.runtime.write(0, (s, now) => expireOffsets(s, now)), 1);
  assert.deepEqual(await fetchAll(h), []);
  assert.equal(h.shard().groups.has('g'), false);
  const tail = h.log
    .all()
    .slice(-2)
    .map((r) => decodeRecord(r.key, r.value));
  assert.deepEqual(
    tail.map((r) => [r?.type, r?.value]),
    [
      ['offset', null],
      ['group', null],
    ],
  );
});

test('expiry: standalone commits expire retention after each commit; stable groups lose only unsubscribed topics', async () => {
  const h = await harness({ offsetsRetentionMs: 1000 });
  await commit(h, commitReq({ groupId: 'solo' }));
  const member = await stableMember(h, subscription(['t']));
  await commit(
    h,
    commitReq({
      generationId: 1,
      memberId: member,
      topics: [
        { name: 't', partitions: [{ partitionIndex: 0, committedOffset: 1n, committedLeaderEpoch: -1, commitTimestamp: -1n, committedMetadata: '' }] },
        { name: 'old', partitions: [{ partitionIndex: 0, committedOffset: 1n, committedLeaderEpoch: -1, commitTimestamp: -1n, committedMetadata: '' }] },
      ],
    }),
  );
  h.clock.now += 1000;
  assert.equal(await h.runtime.write(0, (s, now) => expireOffsets(s, now)), 2);
  assert.deepEqual(await fetchAll(h, 'solo'), []);
  assert.deepEqual(
    (await fetchAll(h)).map((t) => t.name),
    ['t'],
  );
});

test('OffsetDelete refuses subscribed topics and tombstones the others', async () => {
  const h = await harness();
  const member = await stableMember(h, subscription(['t']));
  await commit(
    h,
    commitReq({
      generationId: 1,
      memberId: member,
      topics: [
        { name: 't', partitions: [{ partitionIndex: 0, committedOffset: 1n, committedLeaderEpoch: -1, commitTimestamp: -1n, committedMetadata: '' }] },
        { name: 'u', partitions: [{ partitionIndex: 0, committedOffset: 1n, committedLeaderEpoch: -1, commitTimestamp: -1n, committedMetadata: '' }] },
      ],
    }),
  );
  const res = await h.runtime.write(0, (s) =>
    deleteOffsets(s, 'g', [
      { name: 't', partitions: [0] },
      { name: 'u', partitions: [0] },
    ]),
  );
  assert.equal(res.topics[0]!.partitions[0]!.errorCode, ErrorCode.GROUP_SUBSCRIBED_TO_TOPIC);
  assert.equal(res.topics[1]!.partitions[0]!.errorCode, ErrorCode.NONE);
  assert.deepEqual(
    (await fetchAll(h)).map((t) => t.name),
    ['t'],
  );
  const missing = await h.runtime.write(0, (s) => deleteOffsets(s, 'nope', []));
  assert.equal(missing.errorCode, ErrorCode.GROUP_ID_NOT_FOUND);
});
