/**
 * Shard workers (issue 26, docs/threads.md step 1), embedded mode: WorkerShards over 2 worker
 * threads in a temp dir gives the same offsets and bytes as today's in-thread path for one
 * produce call spanning 4 partitions of 2 topics (acks 1, -1 and 0), hands the records over
 * without a structured-clone copy, keeps an idempotent producer's sequence checks, restarts with
 * 3 workers and reads everything back (the checkpoint files hold every shard's entries), opens
 * and deletes a topic's logs as the topic comes and goes, answers the seam's other calls from
 * the owning shards (internal topics on shard 0, in this thread), and a worker that throws fails
 * only its own partitions' calls, pending and later; after it, today's single-thread path
 * recovers every log from the shared files. Shared memory the records sit in is held by each
 * shard that reads it until that shard answers or dies. The built worker (dist/) starts too.
 */
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile, access } from 'node:fs/promises';
import { join } from 'node:path';
import { ErrorCode } from '../../../../src/protocol/errors.js';
import { WorkerShards } from '../../../../src/replication/shards/worker/worker-shards.js';
import { sharedCopy } from '../../../../src/replication/shards/worker/records-handover.js';
import { FETCH_ALL, PARTS, TOPICS, batch, fetchFrom, inThread, tempConfig, topic } from './shard-fixtures.js';
import type { AppendRequest } from '../../../../src/replication/append/leader-appends.js';

/** The lender of produce records' shared memory (the broker's is its frame pool): who holds what, now. */
const holds = new Map<SharedArrayBuffer, number>();
const lender = {
  retain: (m: SharedArrayBuffer) => void holds.set(m, (holds.get(m) ?? 0) + 1),
  release: (m: SharedArrayBuffer) => {
    const n = holds.get(m);
    assert.ok(n !== undefined && n > 0, 'released only what was retained');
    if (n === 1) holds.delete(m);
    else holds.set(m, n - 1);
  },
};

const config = await tempConfig('shards');
const dir = config.logDirs[0]!;
// The worker made to crash here stays offline (a crash limit of 1), so the last test reads what
// the single-thread path recovers after it; restarts are worker-restart.test.ts's.
let shards = await WorkerShards.open({ config, workers: 2, topics: TOPICS, sharedRecords: lender, restart: { crashLimit: 1 } });
after(() => shards.shutdown());

/** Each partition's log end when a worker was made to crash (the last test reads them back). */
let endsAtCrash: number[] = [];
const acks = (requiredAcks: number): AppendRequest => ({ requiredAcks, origin: 'client', produceVersion: 9 });
/** Three rounds of one batch per partition, each round one call: acks 1, -1, 0. */
const ROUNDS = [1, -1, 0].map((requiredAcks, round) => ({ req: acks(requiredAcks), batches: PARTS.map((p) => batch(`${p.topic}-${p.partition}-${round}`)) }));

test('one produce over 4 partitions of 2 topics on 2 workers: the offsets and bytes of the in-thread path', async () => {
  assert.deepEqual(
    new Set(PARTS.map((p) => shards.shardOf(p.topic, p.partition))),
    new Set([1, 2]),
    "the parts span both workers (shard 0 is the main thread's)",
  );
  const reference = await inThread(await tempConfig('inthread'));
  try {
    for (const { req, batches } of ROUNDS) {
      const expected = await Promise.all(PARTS.map((p, i) => reference.rm.appendRecords(p.topic, p.partition, Buffer.from(batches[i]!), req)));
      const messages = shards.stats.messages;
      const got = await shards.produce(
        PARTS.map((p, i) => ({ ...p, records: sharedCopy(batches[i]!) })),
        req,
      );
      assert.equal(shards.stats.messages - messages, 2, 'one message per shard');
      assert.deepEqual(
        got.map((o) => [o.errorCode, o.baseOffset]),
        expected.map((o) => [o.errorCode, o.baseOffset]),
      );
    }
    const mine = await shards.fetch(fetchFrom(), FETCH_ALL);
    const theirs = await reference.rm.fetch(fetchFrom(), FETCH_ALL);
    assert.deepEqual(
      mine.map((r) => [r.errorCode, r.highWatermark, r.logStartOffset]),
      PARTS.map(() => [ErrorCode.NONE, 9, 0]),
    );
    for (let i = 0; i < PARTS.length; i++) assert.ok(mine[i]!.records!.equals(theirs[i]!.records!), `same bytes for ${PARTS[i]!.topic}-${PARTS[i]!.partition}`);
  } finally {
    await reference.close();
  }
});

test('produce records cross without a copy: shared memory is read in place, an owned buffer is moved', async () => {
  const before = { ...shards.stats };
  const shared = PARTS.map((p) => sharedCopy(batch(`${p.topic}-shared`)));
  const producing = shards.produce(
    PARTS.map((p, i) => ({ ...p, records: shared[i]! })),
    acks(1),
  );
  // Each shard holds the memory it reads until it answers: the lender reuses none of it before.
  assert.deepEqual(
    shared.map((b) => holds.get(b.buffer as SharedArrayBuffer)),
    PARTS.map(() => 1),
  );
  const outcomes = await producing;
  assert.equal(holds.size, 0, 'every hold released once answered');
  // The worker assigned the offsets in the caller's shared bytes: the batch was not cloned.
  for (let i = 0; i < PARTS.length; i++) assert.equal(shared[i]!.readBigInt64BE(0), BigInt(outcomes[i]!.baseOffset));
  // Each batch alone in an ArrayBuffer of its own (as a frame the reader copied into a frame buffer).
  const owned = PARTS.map((p) => {
    const bytes = batch(`${p.topic}-owned`, { count: 1, valueBytes: 32 * 1024 });
    const own = Buffer.allocUnsafeSlow(bytes.length);
    bytes.copy(own);
    return own;
  });
  const sizes = owned.map((b) => b.length);
  const moved = await shards.produce(
    PARTS.map((p, i) => ({ ...p, records: owned[i]! })),
    acks(1),
  );
  assert.deepEqual(
    moved.map((o) => o.errorCode),
    PARTS.map(() => ErrorCode.NONE),
  );
  assert.ok(
    owned.every((b) => b.length === 0),
    'moved: the caller no longer holds the bytes',
  );
  const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);
  assert.equal(shards.stats.sharedBytes - before.sharedBytes, sum(shared.map((b) => b.length)));
  assert.equal(shards.stats.movedBytes - before.movedBytes, sum(sizes));
  assert.equal(shards.stats.copiedBytes, before.copiedBytes, 'nothing copied');
  // A slice of Node's 8 KiB pool cannot move: it is copied once, and counted.
  const small = batch('alpha-pool', { count: 1 });
  assert.ok(small.buffer.byteLength <= Buffer.poolSize);
  assert.equal((await shards.produce([{ topic: 'alpha', partition: 0, records: small }], acks(1)))[0]!.errorCode, ErrorCode.NONE);
  assert.equal(shards.stats.copiedBytes - before.copiedBytes, small.length);
});

test("an idempotent producer's sequence checks hold through a worker", async () => {
  const pid = { producerId: 4242n, producerEpoch: 0 };
  const first = batch('idem-0', { ...pid, baseSequence: 0 });
  const [a] = await shards.produce([{ topic: 'beta', partition: 1, records: sharedCopy(first) }], acks(-1));
  assert.equal(a!.errorCode, ErrorCode.NONE);
  const [dup] = await shards.produce([{ topic: 'beta', partition: 1, records: sharedCopy(first) }], acks(-1));
  assert.deepEqual([dup!.errorCode, dup!.baseOffset], [ErrorCode.NONE, a!.baseOffset], 'a duplicate batch answers its first offset');
  const [gap] = await shards.produce([{ topic: 'beta', partition: 1, records: sharedCopy(batch('idem-9', { ...pid, baseSequence: 9 })) }], acks(-1));
  assert.equal(gap!.errorCode, ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER);
});

test("the seam's other calls reach the owning shards; the internal topics live on shard 0, in this thread", async () => {
  const ends = (await shards.fetch(fetchFrom(), FETCH_ALL)).map((r) => r.highWatermark);
  const latest = await shards.listOffsets(
    PARTS.map((p) => ({ ...p, timestamp: -1n, currentLeaderEpoch: -1 })),
    { isolationCommitted: false, fromReplica: false },
  );
  assert.deepEqual(
    latest.map((r) => [r.errorCode, r.offset]),
    ends.map((e) => [ErrorCode.NONE, e]),
  );
  const epochs = await shards.offsetsForLeaderEpoch(
    PARTS.map((p) => ({ ...p, currentLeaderEpoch: -1, leaderEpoch: 0 })),
    false,
  );
  assert.deepEqual(
    epochs.map((r) => [r.errorCode, r.endOffset]),
    ends.map((e) => [ErrorCode.NONE, e]),
  );
  const [producers] = await shards.describeProducers([{ topic: 'beta', partition: 1 }]);
  assert.deepEqual(
    producers!.activeProducers.map((p) => p.producerId),
    [4242n],
  );
  const [cut] = await shards.deleteRecords([{ topic: 'alpha', partition: 1, offset: 2 }], 1000);
  assert.deepEqual(cut, { errorCode: ErrorCode.NONE, lowWatermark: 2 });
  const dirs = await shards.logDirs();
  assert.deepEqual(
    dirs.map((d) => [d.online, d.logs.map((l) => `${l.topic}-${l.partition}`).sort()]),
    [[true, PARTS.map((p) => `${p.topic}-${p.partition}`).sort()]],
  );
  const offsets = { ...topic('__consumer_offsets', 1, 'AAAAAAAAAAAAAAAAAAAABA'), internal: true };
  await shards.topicsChanged([offsets]);
  assert.equal(shards.shardOf('__consumer_offsets', 0), 0);
  assert.equal(shards.workerOf(0), undefined, 'shard 0 is no worker');
  const copied = shards.stats.copiedBytes;
  const commits = [batch('offsets-commit-0'), batch('offsets-commit-1')];
  const appended = await shards.produce(
    commits.map((records) => ({ topic: '__consumer_offsets', partition: 0, records })),
    { requiredAcks: -1, origin: 'coordinator' },
  );
  assert.deepEqual(
    appended.map((o) => [o.errorCode, o.baseOffset]),
    [
      [ErrorCode.NONE, 0],
      [ErrorCode.NONE, 3],
    ],
  );
  assert.equal(commits[1]!.readBigInt64BE(0), 3n, "appended from the caller's own buffer, by reference");
  assert.equal(shards.stats.copiedBytes, copied);
  await shards.topicDeleted('__consumer_offsets');
});

test('a restart with 3 workers reads every partition back from the checkpointed logs', async () => {
  const endsBefore = (await shards.fetch(fetchFrom(), FETCH_ALL)).map((r) => r.highWatermark);
  const bytesBefore = (await shards.fetch(fetchFrom(), FETCH_ALL)).map((r) => Buffer.from(r.records!));
  await shards.shutdown();
  await access(join(dir, '.kafka_cleanshutdown'));
  const recovery = await readFile(join(dir, 'recovery-point-offset-checkpoint'), 'utf8');
  for (const [i, p] of PARTS.entries())
    assert.match(recovery, new RegExp(`^${p.topic} ${p.partition} ${endsBefore[i]}$`, 'm'), 'every shard handed its entries');
  shards = await WorkerShards.open({ config, workers: 3, topics: TOPICS, sharedRecords: lender, restart: { crashLimit: 1 } });
  const after3 = await shards.fetch(fetchFrom(), FETCH_ALL);
  assert.deepEqual(
    after3.map((r) => r.highWatermark),
    endsBefore,
  );
  for (let i = 0; i < PARTS.length; i++) assert.ok(after3[i]!.records!.equals(bytesBefore[i]!));
  const more = await shards.produce(
    PARTS.map((p) => ({ ...p, records: sharedCopy(batch(`${p.topic}-after`)) })),
    acks(1),
  );
  assert.deepEqual(
    more.map((o) => o.baseOffset),
    endsBefore,
  );
});

test('a topic created opens its logs in the owning workers; deleted, they are gone', async () => {
  const gamma = topic('gamma', 3, 'AAAAAAAAAAAAAAAAAAAAAw');
  await shards.topicsChanged([gamma]);
  const parts = gamma.partitions.map((p) => ({ topic: 'gamma', partition: p.partition }));
  assert.equal(new Set(parts.map((p) => shards.shardOf(p.topic, p.partition))).size, 3, 'one partition on each of the 3 workers');
  for (const p of parts) await access(join(dir, `gamma-${p.partition}`));
  const produced = await shards.produce(
    parts.map((p) => ({ ...p, records: sharedCopy(batch(`gamma-${p.partition}`)) })),
    acks(1),
  );
  assert.deepEqual(
    produced.map((o) => [o.errorCode, o.baseOffset]),
    parts.map(() => [ErrorCode.NONE, 0]),
  );
  await shards.topicDeleted('gamma');
  for (const p of parts) await assert.rejects(access(join(dir, `gamma-${p.partition}`)), { code: 'ENOENT' });
  const after = await shards.produce(
    parts.map((p) => ({ ...p, records: sharedCopy(batch('gamma-late')) })),
    acks(1),
  );
  assert.deepEqual(
    after.map((o) => o.errorCode),
    parts.map(() => ErrorCode.UNKNOWN_TOPIC_OR_PARTITION),
  );
});

test('a worker that throws fails only its own partitions, pending calls and later ones', async () => {
  const victim = shards.shardOf('alpha', 0);
  const ends = (await shards.fetch(fetchFrom(), FETCH_ALL)).map((r) => r.highWatermark);
  endsAtCrash = ends;
  // A long poll on every partition past its end: parked in each shard until the crash.
  const parked = shards.fetch(
    PARTS.map((p, i) => ({ ...p, fetchOffset: ends[i]!, partitionMaxBytes: 1 << 20, currentLeaderEpoch: -1 })),
    { ...FETCH_ALL, maxWaitMs: 1000 },
  );
  shards.crash(victim);
  const gone = await parked;
  const later = await shards.produce(
    PARTS.map((p) => ({ ...p, records: sharedCopy(batch(`${p.topic}-late`)) })),
    acks(1),
  );
  for (const [i, p] of PARTS.entries()) {
    const mine = shards.shardOf(p.topic, p.partition) === victim;
    if (mine) assert.equal(gone[i]!.errorCode, ErrorCode.NOT_LEADER_OR_FOLLOWER);
    assert.equal(later[i]!.errorCode, mine ? ErrorCode.NOT_LEADER_OR_FOLLOWER : ErrorCode.NONE, `${p.topic}-${p.partition}`);
    if (!mine) assert.equal(later[i]!.baseOffset, ends[i]);
  }
  assert.deepEqual(
    shards.exits.map((e) => [e.shard, /crash requested/.test(e.reason)]),
    [[victim, true]],
  );
});

test('a worker that dies with records in flight gives its hold on their shared memory back', async () => {
  const own = await tempConfig('dying');
  const dying = await WorkerShards.open({ config: own, workers: 1, topics: TOPICS, sharedRecords: lender });
  try {
    const records = PARTS.map((p) => sharedCopy(batch(`${p.topic}-in-flight`)));
    const inFlight = dying.produce(
      PARTS.map((p, i) => ({ ...p, records: records[i]! })),
      acks(1),
    );
    assert.equal(holds.size, PARTS.length, 'held by the worker from the message on');
    dying.crash(1);
    const outcomes = await inFlight;
    assert.equal(holds.size, 0, 'released with the answer or with the end of the worker');
    // Appended before the crash, or failed with it: either way, an answer for every part.
    for (const o of outcomes) assert.ok(o.errorCode === ErrorCode.NONE || o.errorCode === ErrorCode.NOT_LEADER_OR_FOLLOWER);
    assert.equal(dying.exits.length, 1);
  } finally {
    await dying.shutdown();
  }
});

test('from dist/ (the built broker), a worker starts from shard-worker.js and appends', async () => {
  type Module = typeof import('../../../../src/replication/shards/worker/worker-shards.js');
  const built = (await import(new URL('../../../../dist/replication/shards/worker/worker-shards.js', import.meta.url).href)) as Module;
  const own = await tempConfig('dist');
  const fromDist = await built.WorkerShards.open({ config: own, workers: 1, topics: TOPICS });
  try {
    const [o] = await fromDist.produce([{ topic: 'alpha', partition: 1, records: sharedCopy(batch('dist')) }], acks(1));
    assert.deepEqual([o!.errorCode, o!.baseOffset], [ErrorCode.NONE, 0]);
  } finally {
    await fromDist.shutdown();
  }
});

test("after a worker crashed, today's single-thread path recovers every log from the shared files", async () => {
  // alpha-1 starts at 2 since the DeleteRecords above.
  const targets = fetchFrom().map((t) => (t.topic === 'alpha' && t.partition === 1 ? { ...t, fetchOffset: 2 } : t));
  const live = await shards.fetch(targets, FETCH_ALL);
  await shards.shutdown();
  await assert.rejects(access(join(dir, '.kafka_cleanshutdown')), { code: 'ENOENT' }, 'a crashed shard: no clean shutdown marker');
  const single = await inThread(config);
  try {
    const read = await single.rm.fetch(targets, FETCH_ALL);
    for (const [i, p] of PARTS.entries()) {
      // The crashed shard's partitions end where they were at the crash; the others took one more batch.
      const expected = live[i]!.errorCode === ErrorCode.NONE ? live[i]!.highWatermark : endsAtCrash[i];
      assert.deepEqual([read[i]!.errorCode, read[i]!.highWatermark], [ErrorCode.NONE, expected], `${p.topic}-${p.partition}`);
    }
    assert.equal(read[PARTS.findIndex((p) => p.topic === 'alpha' && p.partition === 1)]!.logStartOffset, 2, 'the log start offset checkpointed by its shard');
  } finally {
    await single.close();
  }
});
