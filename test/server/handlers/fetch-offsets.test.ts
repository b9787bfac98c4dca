import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestBroker, type TestBroker } from '../../helpers/broker.js';
import { RawClient } from '../../helpers/raw-client.js';
import { partitionState } from '../../helpers/partition-state.js';
import { waitFor } from '../../helpers/wait-for.js';
import { ErrorCode } from '../../../src/protocol/errors.js';
import {
  ListOffsetsRequestCodec,
  ListOffsetsResponseCodec,
  OffsetForLeaderEpochRequestCodec,
  OffsetForLeaderEpochResponseCodec,
} from '../../../src/protocol/messages/index.js';
import { ZERO_UUID, randomUuid } from '../../../src/protocol/primitives/index.js';
import { batchOf, createTopic, fetch, fetchOne, produce, valuesOf } from './data-plane-helpers.js';

let b: TestBroker;
let c: RawClient;
before(async () => {
  b = await startTestBroker({ 'auto.create.topics.enable': 'false' });
  c = await RawClient.connect(b.port);
});
after(async () => {
  c.close();
  await b.stop();
});

test('a long-poll fetch is woken by an append, not by its deadline', async () => {
  await createTopic(b, 'lp');
  const c2 = await RawClient.connect(b.port);
  const started = Date.now();
  const pending = fetchOne(c2, 11, 'lp', 0, 0, { maxWaitMs: 20_000, minBytes: 1 });
  let settled = false;
  void pending.then(() => (settled = true));
  // The fetch is parked until data arrives.
  await waitFor('the fetch parked on lp-0', 5000, async () => (await partitionState(b, 'lp', 0))?.fetchWaiters === 1);
  assert.equal(settled, false);
  await produce(c, 9, 'lp', 0, batchOf(['wake']));
  const res = await pending;
  assert.ok(Date.now() - started < 10_000);
  assert.deepEqual(valuesOf(res.responses[0]!.partitions[0]!.records), ['wake']);
  c2.close();
});

test('a fetch that finds less than min.bytes answers at max.wait.ms with what it has', async () => {
  await createTopic(b, 'lp2');
  await produce(c, 9, 'lp2', 0, batchOf(['one']));
  const started = Date.now();
  const res = await fetchOne(c, 11, 'lp2', 0, 0, { maxWaitMs: 300, minBytes: 1_000_000 });
  assert.ok(Date.now() - started >= 250);
  assert.deepEqual(valuesOf(res.responses[0]!.partitions[0]!.records), ['one']);
});

test('OFFSET_OUT_OF_RANGE outside [logStart, logEnd]; partition limit still returns a whole first batch', async () => {
  await createTopic(b, 'oor');
  await produce(c, 9, 'oor', 0, batchOf(['x'.repeat(300), 'y'.repeat(300)]));
  await produce(c, 9, 'oor', 0, batchOf(['z']));
  const res = await fetchOne(c, 11, 'oor', 0, 99);
  assert.equal(res.responses[0]!.partitions[0]!.errorCode, ErrorCode.OFFSET_OUT_OF_RANGE);
  assert.equal(res.responses[0]!.partitions[0]!.highWatermark, 3n);
  const small = await fetch(c, 11, {
    maxWaitMs: 0,
    minBytes: 0,
    topics: [{ topic: 'oor', partitions: [{ partition: 0, fetchOffset: 0n, partitionMaxBytes: 10 }] }],
  });
  assert.deepEqual(valuesOf(small.responses[0]!.partitions[0]!.records), ['x'.repeat(300), 'y'.repeat(300)]);
  // Response max.bytes spent on the first partition: the next one gets nothing.
  await createTopic(b, 'oor2');
  await produce(c, 9, 'oor2', 0, batchOf(['w']));
  const two = await fetch(c, 11, {
    maxWaitMs: 0,
    minBytes: 0,
    maxBytes: 10,
    topics: [
      { topic: 'oor', partitions: [{ partition: 0, fetchOffset: 0n, partitionMaxBytes: 1 << 20 }] },
      { topic: 'oor2', partitions: [{ partition: 0, fetchOffset: 0n, partitionMaxBytes: 1 << 20 }] },
    ],
  });
  assert.equal(valuesOf(two.responses[0]!.partitions[0]!.records).length, 2);
  assert.equal(valuesOf(two.responses[1]!.partitions[0]!.records).length, 0);
});

test('fetch sessions: full fetch creates one, incremental fetches carry only news, errors have Kafka semantics', async () => {
  await createTopic(b, 'fs', 2);
  await produce(c, 9, 'fs', 0, batchOf(['p0']));
  const full = await fetch(c, 12, {
    maxWaitMs: 0,
    minBytes: 0,
    sessionId: 0,
    sessionEpoch: 0,
    topics: [{ topic: 'fs', partitions: [0, 1].map((p) => ({ partition: p, fetchOffset: 0n, partitionMaxBytes: 1 << 20 })) }],
  });
  assert.notEqual(full.sessionId, 0);
  assert.equal(full.responses[0]!.partitions.length, 2);
  const sid = full.sessionId;
  // Nothing changed, partition 0 advanced by the client: the response is empty.
  const inc1 = await fetch(c, 12, {
    maxWaitMs: 0,
    minBytes: 0,
    sessionId: sid,
    sessionEpoch: 1,
    topics: [{ topic: 'fs', partitions: [{ partition: 0, fetchOffset: 1n, partitionMaxBytes: 1 << 20 }] }],
  });
  assert.equal(inc1.errorCode, ErrorCode.NONE);
  assert.equal(inc1.sessionId, sid);
  assert.equal(inc1.responses.length, 0);
  await produce(c, 9, 'fs', 1, batchOf(['p1']));
  const inc2 = await fetch(c, 12, { maxWaitMs: 0, minBytes: 0, sessionId: sid, sessionEpoch: 2, topics: [] });
  assert.deepEqual(
    inc2.responses.map((t) => t.partitions.map((p) => p.partitionIndex)),
    [[1]],
  );
  assert.deepEqual(valuesOf(inc2.responses[0]!.partitions[0]!.records), ['p1']);
  // Wrong epoch, unknown session.
  const stale = await fetch(c, 12, { maxWaitMs: 0, minBytes: 0, sessionId: sid, sessionEpoch: 2, topics: [] });
  assert.equal(stale.errorCode, ErrorCode.INVALID_FETCH_SESSION_EPOCH);
  assert.equal(stale.sessionId, 0);
  const unknown = await fetch(c, 12, { maxWaitMs: 0, minBytes: 0, sessionId: sid + 1 === 0 ? 2 : sid + 1, sessionEpoch: 1, topics: [] });
  assert.equal(unknown.errorCode, ErrorCode.FETCH_SESSION_ID_NOT_FOUND);
  // Forget partition 1, then data on it is not reported.
  const inc3 = await fetch(c, 12, {
    maxWaitMs: 0,
    minBytes: 0,
    sessionId: sid,
    sessionEpoch: 3,
    topics: [],
    forgottenTopicsData: [{ topic: 'fs', partitions: [1] }],
  });
  assert.equal(inc3.errorCode, ErrorCode.NONE);
  await produce(c, 9, 'fs', 1, batchOf(['p1b']));
  const inc4 = await fetch(c, 12, { maxWaitMs: 0, minBytes: 0, sessionId: sid, sessionEpoch: 4, topics: [] });
  assert.equal(inc4.responses.length, 0);
  // Epoch -1 closes the session and answers as a sessionless fetch.
  const close = await fetch(c, 12, {
    maxWaitMs: 0,
    minBytes: 0,
    sessionId: sid,
    sessionEpoch: -1,
    topics: [{ topic: 'fs', partitions: [{ partition: 1, fetchOffset: 0n, partitionMaxBytes: 1 << 20 }] }],
  });
  assert.equal(close.sessionId, 0);
  assert.deepEqual(valuesOf(close.responses[0]!.partitions[0]!.records), ['p1', 'p1b']);
  const gone = await fetch(c, 12, { maxWaitMs: 0, minBytes: 0, sessionId: sid, sessionEpoch: 5, topics: [] });
  assert.equal(gone.errorCode, ErrorCode.FETCH_SESSION_ID_NOT_FOUND);
});

test('Fetch v13+ addresses topics by id; an unknown id is UNKNOWN_TOPIC_ID', async () => {
  await createTopic(b, 'ids');
  await produce(c, 9, 'ids', 0, batchOf(['by-id']));
  const topicId = b.broker.services.metadata.topic('ids')!.topicId;
  for (const v of [13, 15, 17]) {
    const res = await fetchOne(c, v, '', 0, 0, {}, topicId);
    assert.equal(res.responses[0]!.topicId, topicId);
    assert.deepEqual(valuesOf(res.responses[0]!.partitions[0]!.records), ['by-id']);
  }
  const bad = await fetchOne(c, 13, '', 0, 0, {}, randomUuid());
  assert.equal(bad.responses[0]!.partitions[0]!.errorCode, ErrorCode.UNKNOWN_TOPIC_ID);
  assert.notEqual(topicId, ZERO_UUID);
});

test('ListOffsets: latest, earliest, max timestamp, by timestamp, v0 old-style offsets, leader epoch', async () => {
  await createTopic(b, 'lo');
  await produce(c, 9, 'lo', 0, batchOf(['a', 'b'], { ts: 1000n }));
  await produce(c, 9, 'lo', 0, batchOf(['c'], { ts: 5000n }));
  await produce(c, 9, 'lo', 0, batchOf(['d'], { ts: 3000n }));
  const ask = async (v: number, timestamp: bigint) => {
    const res = await c.request(2, ListOffsetsRequestCodec, ListOffsetsResponseCodec, v, {
      replicaId: -1,
      isolationLevel: 0,
      topics: [{ name: 'lo', partitions: [{ partitionIndex: 0, timestamp, maxNumOffsets: 1, currentLeaderEpoch: -1 }] }],
    });
    return res.topics[0]!.partitions[0]!;
  };
  for (let v = 1; v <= 10; v++) {
    assert.equal((await ask(v, -1n)).offset, 4n);
    assert.equal((await ask(v, -2n)).offset, 0n);
    const byTs = await ask(v, 2000n);
    assert.equal(byTs.offset, 2n);
    assert.equal(byTs.timestamp, 5000n);
    assert.equal((await ask(v, 9999n)).offset, -1n);
  }
  const max = await ask(7, -3n);
  assert.deepEqual([max.offset, max.timestamp], [2n, 5000n]);
  const latest = await ask(9, -1n);
  assert.equal(latest.leaderEpoch, (await partitionState(b, 'lo', 0))!.leaderEpoch);
  assert.deepEqual((await ask(0, -1n)).oldStyleOffsets, [4n]);
  assert.deepEqual((await ask(0, -2n)).oldStyleOffsets, [0n]);
  const fenced = await c.request(2, ListOffsetsRequestCodec, ListOffsetsResponseCodec, 9, {
    replicaId: -1,
    isolationLevel: 0,
    topics: [{ name: 'lo', partitions: [{ partitionIndex: 0, timestamp: -1n, currentLeaderEpoch: 999 }] }],
  });
  assert.equal(fenced.topics[0]!.partitions[0]!.errorCode, ErrorCode.UNKNOWN_LEADER_EPOCH);
});

test('OffsetForLeaderEpoch answers the end offset of an epoch from the leader-epoch cache', async () => {
  await createTopic(b, 'ofle');
  await produce(c, 9, 'ofle', 0, batchOf(['a', 'b', 'c']));
  const epoch = (await partitionState(b, 'ofle', 0))!.leaderEpoch;
  for (const v of [0, 2, 3, 4]) {
    const res = await c.request(23, OffsetForLeaderEpochRequestCodec, OffsetForLeaderEpochResponseCodec, v, {
      replicaId: -1,
      topics: [
        {
          topic: 'ofle',
          partitions: [
            { partition: 0, currentLeaderEpoch: -1, leaderEpoch: epoch },
            { partition: 7, leaderEpoch: 0 },
          ],
        },
      ],
    });
    const [p0, p7] = res.topics[0]!.partitions;
    assert.equal(p0!.errorCode, ErrorCode.NONE);
    assert.equal(p0!.endOffset, 3n);
    if (v >= 1) assert.equal(p0!.leaderEpoch, epoch);
    assert.equal(p7!.errorCode, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
  }
});

test('data, high watermark and idempotent-producer state survive a restart', async () => {
  const dir = b.dir;
  await createTopic(b, 'durable');
  const first = batchOf(['a'], { producerId: 77n, epoch: 0, seq: 0 });
  await produce(c, 9, 'durable', 0, Buffer.from(first));
  await produce(c, 9, 'durable', 0, batchOf(['b'], { producerId: 77n, epoch: 0, seq: 1 }));
  c.close();
  await b.stop({ keepDir: true });
  b = await startTestBroker({ 'auto.create.topics.enable': 'false' }, dir);
  c = await RawClient.connect(b.port);
  const dup = (await produce(c, 9, 'durable', 0, Buffer.from(first))).responses[0]!.partitionResponses[0]!;
  assert.equal(dup.baseOffset, 0n);
  const gap = (await produce(c, 9, 'durable', 0, batchOf(['x'], { producerId: 77n, epoch: 0, seq: 5 }))).responses[0]!.partitionResponses[0]!;
  assert.equal(gap.errorCode, ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER);
  const res = await fetchOne(c, 11, 'durable', 0, 0);
  assert.equal(res.responses[0]!.partitions[0]!.highWatermark, 2n);
  assert.deepEqual(valuesOf(res.responses[0]!.partitions[0]!.records), ['a', 'b']);
});

test('deleting a topic deletes its logs; re-creating it starts empty', async () => {
  await createTopic(b, 'del');
  await produce(c, 9, 'del', 0, batchOf(['old']));
  await b.broker.services.metadata.deleteTopic('del');
  await b.broker.services.replicaManager.syncTopic('del');
  assert.equal(await partitionState(b, 'del', 0), undefined, 'no shard hosts its log any more');
  await createTopic(b, 'del');
  const res = await fetchOne(c, 11, 'del', 0, 0);
  assert.equal(res.responses[0]!.partitions[0]!.highWatermark, 0n);
});
