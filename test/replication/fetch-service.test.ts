/**
 * The fetch service's one sequence (read → throttle → convert → respond) against a fake
 * ReplicaManager and quota: what a throttled answer keeps and gives back, and who is throttled.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ErrorCode } from '../../src/protocol/errors.js';
import { FetchService, type FetchCall, type FetchReplicas, type FetchThrottle } from '../../src/replication/fetch/fetch-service.js';
import type { FetchTarget, PartitionFetchResult } from '../../src/replication/fetch/fetch-reader.js';
import { fetchReadBuffers } from '../../src/storage/segment/read-buffer-pool.js';

const EMPTY = Buffer.alloc(0);

/** A ReplicaManager whose reads answer `next()` for every target, and counts them. */
function fakeReplicas(next: () => Buffer): FetchReplicas & { reads: FetchTarget[][] } {
  const reads: FetchTarget[][] = [];
  return {
    reads,
    fetch: async (targets) => {
      reads.push([...targets]);
      return targets.map(
        (): PartitionFetchResult => ({ errorCode: ErrorCode.NONE, highWatermark: 10, lastStableOffset: 10, logStartOffset: 0, records: next() }),
      );
    },
    hostedTopicName: () => undefined,
    getPartition: () => undefined,
  };
}

const names = { topic: () => ({ topicId: 'id-t' }), topicById: () => undefined };

function call(over: Partial<FetchCall> = {}): FetchCall {
  return {
    params: { maxWaitMs: 0, minBytes: 1, maxBytes: 1 << 20, readCommitted: false, hardMaxBytes: false, replicaId: -1 },
    topics: [
      {
        topic: 't',
        topicId: '',
        partitions: [{ partition: 0, fetchOffset: 0n, partitionMaxBytes: 1 << 20, currentLeaderEpoch: -1, lastFetchedEpoch: -1, logStartOffset: -1n }],
      },
    ],
    forgottenTopics: [],
    usesTopicIds: false,
    usesSessions: true,
    sessionId: 0,
    sessionEpoch: 0,
    downConvertTo: undefined,
    denied: undefined,
    ...over,
  };
}

/** A quota that throttles for `ms` and notes what it was told. */
function quota(ms: number): FetchThrottle & { counted: number[]; applied: number[] } {
  const counted: number[] = [];
  const applied: number[] = [];
  return {
    counted,
    applied,
    throttleMs: (bytes) => (counted.push(bytes), ms),
    apply: async (t) => void applied.push(t),
  };
}

test('a consumer over its quota gets an empty answer with the throttle time, its read buffers go back to the pool, and no session starts', async () => {
  const records = fetchReadBuffers.acquire(100_000);
  const replicas = fakeReplicas(() => records);
  const service = new FetchService(replicas, names);
  const freeBefore = fetchReadBuffers.freeBytes;
  const q = quota(250);
  const out = await service.fetch(call(), q);
  assert.deepEqual(out, { throttleTimeMs: 250, errorCode: ErrorCode.NONE, sessionId: 0, partitions: [] });
  assert.deepEqual(q.counted, [100_000]);
  assert.deepEqual(q.applied, [250]);
  assert.equal(fetchReadBuffers.freeBytes - freeBefore, records.buffer.byteLength, 'the read buffer was released');
  assert.equal(service.sessions.size, 0);
});

test('within quota a full fetch starts a session; incremental fetches carry only news, and a throttled one keeps the session', async () => {
  let records = Buffer.from('batch');
  const service = new FetchService(
    fakeReplicas(() => records),
    names,
  );
  const full = await service.fetch(call(), quota(0));
  assert.notEqual(full.sessionId, 0);
  assert.equal(full.partitions.length, 1);
  assert.equal(full.partitions[0]!.requested.topicId, 'id-t');
  assert.equal(full.partitions[0]!.result.records, records);
  records = EMPTY;
  const quiet = await service.fetch(call({ sessionId: full.sessionId, sessionEpoch: 1, topics: [] }), quota(0));
  assert.deepEqual(quiet, { throttleTimeMs: 0, errorCode: ErrorCode.NONE, sessionId: full.sessionId, partitions: [] });
  const throttled = await service.fetch(call({ sessionId: full.sessionId, sessionEpoch: 2, topics: [] }), quota(40));
  assert.deepEqual(throttled, { throttleTimeMs: 40, errorCode: ErrorCode.NONE, sessionId: full.sessionId, partitions: [] });
  assert.equal(service.sessions.get(full.sessionId)?.epoch, 3);
});

test('a follower is never throttled; session errors answer before any read', async () => {
  const replicas = fakeReplicas(() => Buffer.from('batch'));
  const service = new FetchService(replicas, names);
  const never: FetchThrottle = {
    throttleMs: () => assert.fail('a replica fetch asked the quota'),
    apply: async () => assert.fail('a replica fetch was throttled'),
  };
  const out = await service.fetch(call({ params: { ...call().params, replicaId: 2 }, usesSessions: false }), never);
  assert.equal(out.partitions.length, 1);
  assert.equal(replicas.reads.length, 1);
  const unknown = await service.fetch(call({ sessionId: 12345, sessionEpoch: 3 }), quota(0));
  assert.deepEqual(unknown, { throttleTimeMs: 0, errorCode: ErrorCode.FETCH_SESSION_ID_NOT_FOUND, sessionId: 0, partitions: [] });
  assert.equal(replicas.reads.length, 1);
});
