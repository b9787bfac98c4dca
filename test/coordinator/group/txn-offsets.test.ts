/**
 * Transactional offset commits (TxnOffsetCommit): written as a transactional batch of the
 * producer, invisible to OffsetFetch (UNSTABLE_OFFSET_COMMIT with require_stable) until the
 * transaction's marker: COMMIT makes them the committed offsets, ABORT drops them. Loading
 * replays the same from the log's transactional batches and control records.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { harness } from './harness.js';
import { MemoryLog } from '../memory-log.js';
import { commitOffsets, fetchOffsets, txnCommitOffsets, type TxnCommitRequest } from '../../../src/coordinator/group/offsets.js';
import { expireOffsets } from '../../../src/coordinator/group/expiry.js';
import { ErrorCode } from '../../../src/protocol/errors.js';

const txnReq = (producerId: bigint, offset: bigint, over: Partial<TxnCommitRequest> = {}): TxnCommitRequest => ({
  groupId: 'g',
  producerId,
  producerEpoch: 2,
  generationId: -1,
  memberId: '',
  groupInstanceId: null,
  topics: [{ name: 't', partitions: [{ partitionIndex: 0, committedOffset: offset, committedLeaderEpoch: -1, committedMetadata: 'm' }] }],
  ...over,
});

const offsetOf = (h: Awaited<ReturnType<typeof harness>>, requireStable = false) =>
  h.runtime.read(0, (s) => fetchOffsets(s, 'g', [{ name: 't', partitions: [0] }], requireStable)[0]!.partitions[0]!);

test('a transactional commit is pending until COMMIT; ABORT drops it; require_stable sees UNSTABLE_OFFSET_COMMIT meanwhile', async () => {
  const h = await harness();
  await h.runtime.write(0, (s, now) =>
    commitOffsets(
      s,
      {
        groupId: 'g',
        generationId: -1,
        memberId: '',
        groupInstanceId: null,
        retentionTimeMs: -1n,
        apiVersion: 8,
        topics: [
          { name: 't', partitions: [{ partitionIndex: 0, committedOffset: 5n, committedLeaderEpoch: -1, commitTimestamp: -1n, committedMetadata: '' }] },
        ],
      },
      now,
    ),
  );
  const res = await h.runtime.write(0, (s, now) => txnCommitOffsets(s, txnReq(77n, 10n), now));
  assert.deepEqual(res, [{ name: 't', partitions: [{ partitionIndex: 0, errorCode: 0 }] }]);
  assert.equal((await offsetOf(h)).committedOffset, 5n, 'not visible before the commit');
  assert.equal((await offsetOf(h, true)).errorCode, ErrorCode.UNSTABLE_OFFSET_COMMIT);
  await h.runtime.write(0, (s) => (s.replayEndTransaction(77n, true, false), { records: [], response: undefined }));
  assert.equal((await offsetOf(h, true)).committedOffset, 10n, 'visible after COMMIT');

  await h.runtime.write(0, (s, now) => txnCommitOffsets(s, txnReq(78n, 20n), now));
  await h.runtime.write(0, (s) => (s.replayEndTransaction(78n, false, false), { records: [], response: undefined }));
  const after = await offsetOf(h, true);
  assert.deepEqual([after.committedOffset, after.errorCode], [10n, 0], 'ABORT drops it');
});

test('loading: transactional batches stay pending until their marker in the log; without one they stay pending', async () => {
  const log = new MemoryLog();
  const h1 = await harness({}, log);
  await h1.runtime.write(0, (s, now) => txnCommitOffsets(s, txnReq(1n, 11n), now));
  await h1.runtime.write(0, (s, now) =>
    txnCommitOffsets(
      s,
      txnReq(2n, 22n, {
        topics: [{ name: 't', partitions: [{ partitionIndex: 1, committedOffset: 22n, committedLeaderEpoch: -1, committedMetadata: null }] }],
      }),
      now,
    ),
  );
  await h1.runtime.write(0, (s, now) =>
    txnCommitOffsets(
      s,
      txnReq(3n, 33n, {
        topics: [{ name: 't', partitions: [{ partitionIndex: 2, committedOffset: 33n, committedLeaderEpoch: -1, committedMetadata: null }] }],
      }),
      now,
    ),
  );
  log.appendMarker(0, 1n, true);
  log.appendMarker(0, 2n, false);
  const h2 = await harness({}, log);
  const got = await h2.runtime.read(0, (s) =>
    fetchOffsets(s, 'g', [{ name: 't', partitions: [0, 1, 2] }], true)[0]!.partitions.map((p) => [p.committedOffset, p.errorCode]),
  );
  assert.deepEqual(got, [
    [11n, 0],
    [-1n, 0],
    [-1n, ErrorCode.UNSTABLE_OFFSET_COMMIT],
  ]);
});

test('member checks of TxnOffsetCommit v3+: an unknown member or generation of a live group is refused', async () => {
  const h = await harness();
  const res = await h.runtime.write(0, (s, now) => txnCommitOffsets(s, txnReq(5n, 1n, { groupId: 'fresh', generationId: 3, memberId: 'm' }), now));
  assert.equal(res[0]!.partitions[0]!.errorCode, ErrorCode.ILLEGAL_GENERATION);
  await h.runtime.write(0, (s, now) => txnCommitOffsets(s, txnReq(5n, 1n), now));
  const res2 = await h.runtime.write(0, (s, now) => txnCommitOffsets(s, txnReq(5n, 1n, { generationId: 0, memberId: 'nobody' }), now));
  assert.equal(res2[0]!.partitions[0]!.errorCode, ErrorCode.UNKNOWN_MEMBER_ID);
});

test('expiry keeps a partition (and its group) while a transactional commit of it is pending', async () => {
  const h = await harness();
  await h.runtime.write(0, (s, now) =>
    commitOffsets(
      s,
      {
        groupId: 'g',
        generationId: -1,
        memberId: '',
        groupInstanceId: null,
        retentionTimeMs: -1n,
        apiVersion: 8,
        topics: [
          { name: 't', partitions: [{ partitionIndex: 0, committedOffset: 5n, committedLeaderEpoch: -1, commitTimestamp: -1n, committedMetadata: '' }] },
        ],
      },
      now,
    ),
  );
  await h.runtime.write(0, (s, now) => txnCommitOffsets(s, txnReq(9n, 10n), now));
  h.clock.now += 8 * 24 * 3600_000;
  assert.equal(await h.runtime.write(0, (s, now) => expireOffsets(s, now)), 0, 'nothing expires while the commit is pending');
  assert.ok(h.shard().groups.has('g'));
  await h.runtime.write(0, (s) => (s.replayEndTransaction(9n, false, false), { records: [], response: undefined }));
  assert.equal(await h.runtime.write(0, (s, now) => expireOffsets(s, now)), 1, 'once aborted, the old commit expires');
  assert.ok(!h.shard().groups.has('g'), 'and the group left with nothing goes');
});
