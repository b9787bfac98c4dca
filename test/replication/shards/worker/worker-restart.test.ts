/**
 * A shard worker that ends is started again (docs/threads.md "A shard's failure stays in the
 * shard", worker-shards.ts, restart-policy.ts), WorkerShards over 2 workers in a temp dir: the new
 * worker recovers its partitions' records (an idempotent producer's retry of a batch written
 * before the crash is deduplicated, offsets continue) and starts from the metadata as it is now
 * (topics created and deleted as it crashed, while it was down or while the new one opened its
 * logs, and a config changed); a
 * crash loop leaves the shard offline after the limit with one log line saying why; a shutdown
 * while a restart waits for its backoff ends at once, one while the new worker opens its logs
 * waits for them; neither leaves a worker running. Also: a topic deleted and created again while
 * a worker is down, and a worker out of heap.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdir } from 'node:fs/promises';
import type { Worker } from 'node:worker_threads';
import { ErrorCode } from '../../../../src/protocol/errors.js';
import { WorkerShards } from '../../../../src/replication/shards/worker/worker-shards.js';
import { sharedCopy } from '../../../../src/replication/shards/worker/records-handover.js';
import { defaultLogConfig, type LogConfig } from '../../../../src/storage/config.js';
import type { StorageLogger } from '../../../../src/storage/logger.js';
import type { AppendRequest } from '../../../../src/replication/append/leader-appends.js';
import { waitFor } from '../../../helpers/wait-for.js';
import { FETCH_ALL, PARTS, TOPICS, batch, tempConfig, topic } from './shard-fixtures.js';

const ACKS_ALL: AppendRequest = { requiredAcks: -1, origin: 'client', produceVersion: 9 };

/** A logger that keeps its lines. */
function recordingLogger(): StorageLogger & { lines: string[] } {
  const lines: string[] = [];
  return { lines, info: (m) => void lines.push(m), warn: (m) => void lines.push(m), error: (m) => void lines.push(m) };
}

function exitOf(worker: Worker | undefined): Promise<void> {
  assert.ok(worker, 'a worker thread');
  return new Promise((resolve) => worker.once('exit', () => resolve()));
}

/**
 * Keeps the victim's new worker opening its logs for at least `ms` once it starts: the restart's
 * timer (0 ms, set in the channel's own exit listener, which runs first) fires before this one,
 * so the stall goes to the new worker, which handles it while its logs open. Without it the
 * opening may be over before a test looks.
 */
function holdNextOpening(shards: WorkerShards, victim: number, ms: number): void {
  shards.workerOf(victim)!.once('exit', () => setTimeout(() => shards.stall(victim, ms), 0));
}

async function crashAndWaitForExit(shards: WorkerShards, victim: number): Promise<void> {
  const exited = exitOf(shards.workerOf(victim));
  shards.crash(victim);
  await exited;
}

const idempotent = (tag: string, baseSequence: number): Buffer => batch(tag, { producerId: 4242n, producerEpoch: 0, baseSequence });

test('a crashed worker comes back with its records and the metadata of now; the other shard serves throughout', async () => {
  const config = await tempConfig('restart');
  const dir = config.logDirs[0]!;
  const logger = recordingLogger();
  let alphaMaxBytes = defaultLogConfig().maxMessageBytes;
  // flush.messages=1: every append is a flush the shards count (logManagerStats).
  const logConfigFor = (name: string): LogConfig => ({
    ...defaultLogConfig(),
    flushMessages: 1,
    ...(name === 'alpha' ? { maxMessageBytes: alphaMaxBytes } : {}),
  });
  const flushes = async (): Promise<number> => (await shards.logManagerStats()).reduce((n, s) => n + s.flush.count, 0);
  const gamma = topic('gamma', 4, 'AAAAAAAAAAAAAAAAAAAAAw');
  const theta = topic('theta', 4, 'AAAAAAAAAAAAAAAAAAAABg');
  const shards = await WorkerShards.open({ config, workers: 2, topics: [...TOPICS, gamma, theta], logConfigFor, logger });
  try {
    const victim = shards.shardOf('alpha', 0);
    const onVictim = (t: string, p: number): boolean => shards.shardOf(t, p) === victim;
    for (const t of [gamma, theta, topic('zeta', 4, 'unused')]) {
      assert.ok(
        t.partitions.some((p) => onVictim(t.name, p.partition)),
        `${t.name} has a partition on the victim`,
      );
    }
    assert.ok(
      PARTS.some((p) => !onVictim(p.topic, p.partition)),
      'some partitions are on the other worker',
    );
    const first = await shards.produce(
      PARTS.map((p) => ({ ...p, records: sharedCopy(idempotent(`${p.topic}-${p.partition}-0`, 0)) })),
      ACKS_ALL,
    );
    assert.deepEqual(
      first.map((o) => [o.errorCode, o.baseOffset]),
      PARTS.map(() => [ErrorCode.NONE, 0]),
    );
    const flushedBefore = await flushes();
    assert.ok(flushedBefore >= PARTS.length, `${flushedBefore} flushes counted`);

    // While the victim is down (its exit seen, its restart not started): a topic created, one
    // deleted (the old worker never deleted its logs).
    const delta = topic('delta', 4, 'AAAAAAAAAAAAAAAAAAAABA');
    const exited = exitOf(shards.workerOf(victim));
    const postedWhileDown = new Promise<void>((resolve, reject) => {
      shards.workerOf(victim)!.once('exit', () => {
        assert.equal(shards.isServing(victim), false);
        Promise.all([shards.topicsChanged([delta]), shards.topicDeleted('gamma')]).then(() => resolve(), reject);
      });
    });
    // As the worker crashes: a topic being created and one being deleted (their posts in flight, in the crash's batch).
    const zeta = topic('zeta', 4, 'AAAAAAAAAAAAAAAAAAAABw');
    const inFlight = Promise.all([shards.topicsChanged([zeta]), shards.topicDeleted('theta')]);
    holdNextOpening(shards, victim, 3000);
    shards.crash(victim);
    await exited;
    await inFlight;
    // The other worker's partitions answer at once while the victim is away; the victim's NOT_LEADER_OR_FOLLOWER, for every call.
    const during = await shards.produce(
      PARTS.map((p) => ({ ...p, records: sharedCopy(idempotent(`${p.topic}-${p.partition}-1`, 3)) })),
      ACKS_ALL,
    );
    for (const [i, p] of PARTS.entries()) {
      assert.equal(
        during[i]!.errorCode,
        onVictim(p.topic, p.partition) ? ErrorCode.NOT_LEADER_OR_FOLLOWER : ErrorCode.NONE,
        `${p.topic}-${p.partition} while down`,
      );
    }
    await postedWhileDown;
    const listed = await shards.listOffsets(
      PARTS.map((p) => ({ ...p, timestamp: -1n, currentLeaderEpoch: -1 })),
      { isolationCommitted: false, fromReplica: false },
    );
    const fetched = await shards.fetch(
      PARTS.map((p) => ({ ...p, fetchOffset: 0, partitionMaxBytes: 1 << 20, currentLeaderEpoch: -1 })),
      FETCH_ALL,
    );
    for (const [i, p] of PARTS.entries()) {
      const expected = onVictim(p.topic, p.partition) ? ErrorCode.NOT_LEADER_OR_FOLLOWER : ErrorCode.NONE;
      assert.deepEqual([listed[i]!.errorCode, fetched[i]!.errorCode], [expected, expected], `${p.topic}-${p.partition}: ListOffsets and Fetch while down`);
    }

    // While the new worker opens its logs: another topic created, another deleted (posts queued to it).
    await waitFor('the new worker is opening its logs', 60_000, () => shards.isAlive(victim) && !shards.isServing(victim));
    const epsilon = topic('epsilon', 4, 'AAAAAAAAAAAAAAAAAAAABQ');
    // alpha's config changed now, not while down: the live worker would refuse the outage's produce above.
    alphaMaxBytes = 200;
    await Promise.all([shards.topicsChanged([epsilon, TOPICS[0]!]), shards.topicDeleted('beta')]);
    await waitFor('the victim serves again', 60_000, () => shards.isServing(victim));
    assert.equal(shards.restarts, 1);
    assert.equal(shards.offlineWorkers, 0);
    // Every append a flush: the other worker's appends during the outage on top of everything
    // counted before (the victim's among them: without retiredFlushes its count restarts at 0).
    const appendedDuring = PARTS.filter((p) => !onVictim(p.topic, p.partition)).length;
    const flushedAfter = await flushes();
    assert.ok(
      flushedAfter >= flushedBefore + appendedDuring,
      `${flushedAfter} flushes against ${flushedBefore} + ${appendedDuring}: the flushes the worker counted before its crash stay in the sum (a counter never goes back)`,
    );
    assert.deepEqual(
      shards.exits.map((e) => e.shard),
      [victim],
    );

    const alpha = PARTS.filter((p) => p.topic === 'alpha');
    // Recovered: the records written before the crash, and a retry of that batch is deduplicated.
    const ends = await shards.fetch(
      alpha.map((p) => ({ ...p, fetchOffset: 0, partitionMaxBytes: 4 << 20, currentLeaderEpoch: -1 })),
      FETCH_ALL,
    );
    for (const [i, p] of alpha.entries()) {
      assert.deepEqual([ends[i]!.errorCode, ends[i]!.highWatermark], [ErrorCode.NONE, onVictim(p.topic, p.partition) ? 3 : 6], `${p.topic}-${p.partition}`);
    }
    const victimAlpha = alpha.filter((p) => onVictim(p.topic, p.partition));
    // alpha's max.message.bytes as changed while the new worker opened its logs: a 3-record batch is too large now.
    const tooLarge = await shards.produce(
      victimAlpha.map((p) => ({ ...p, records: sharedCopy(idempotent(`${p.topic}-${p.partition}-1`, 3)) })),
      ACKS_ALL,
    );
    for (const o of tooLarge) assert.equal(o.errorCode, ErrorCode.MESSAGE_TOO_LARGE);
    alphaMaxBytes = defaultLogConfig().maxMessageBytes;
    await shards.topicsChanged([TOPICS[0]!]);
    const retried = await shards.produce(
      victimAlpha.map((p) => ({ ...p, records: sharedCopy(idempotent(`${p.topic}-${p.partition}-0`, 0)) })),
      ACKS_ALL,
    );
    assert.deepEqual(
      retried.map((o) => [o.errorCode, o.baseOffset]),
      victimAlpha.map(() => [ErrorCode.NONE, 0]),
      'the retry of a batch written before the crash is a duplicate: answered with its offset, not written again',
    );
    const next = await shards.produce(
      victimAlpha.map((p) => ({ ...p, records: sharedCopy(idempotent(`${p.topic}-${p.partition}-1`, 3)) })),
      ACKS_ALL,
    );
    assert.deepEqual(
      next.map((o) => [o.errorCode, o.baseOffset]),
      victimAlpha.map(() => [ErrorCode.NONE, 3]),
      'offsets continue where the log ended',
    );

    // Topics created while down or opening are open on every shard, the deleted ones are gone from disk.
    for (const t of [zeta, delta, epsilon]) {
      const out = await shards.produce(
        t.partitions.map((p) => ({ topic: t.name, partition: p.partition, records: sharedCopy(batch(`${t.name}-${p.partition}`)) })),
        ACKS_ALL,
      );
      assert.deepEqual(
        out.map((o) => o.errorCode),
        t.partitions.map(() => ErrorCode.NONE),
        t.name,
      );
    }
    const left = (await readdir(dir)).filter((f) => /^(gamma|beta|theta)-\d+$/.test(f));
    assert.deepEqual(left, [], 'the logs of the topics deleted as the worker crashed, while it was down, or opening');
    assert.ok(
      logger.lines.some((l) => l.startsWith(`shard worker ${victim} ended (shard worker crash requested): its partitions are offline; restarting it now`)),
      logger.lines.join('\n'),
    );
    assert.ok(logger.lines.includes(`shard worker ${victim} restarted: its partitions serve again`), logger.lines.join('\n'));
  } finally {
    await shards.shutdown();
  }
});

test('a topic deleted and created again under its name while a worker is down: the new worker serves it from empty logs, not the old records', async () => {
  const kappa = topic('kappa', 4, 'AAAAAAAAAAAAAAAAAAAACA');
  const shards = await WorkerShards.open({ config: await tempConfig('restart-recreate'), workers: 2, topics: [...TOPICS, kappa], logger: recordingLogger() });
  try {
    const victim = shards.shardOf('alpha', 0);
    const kappaParts = kappa.partitions.map((p) => ({ topic: 'kappa', partition: p.partition }));
    const onVictim = kappaParts.filter((p) => shards.shardOf(p.topic, p.partition) === victim);
    assert.ok(onVictim.length > 0, 'kappa has a partition on the victim');
    const written = await shards.produce(
      kappaParts.map((p) => ({ ...p, records: sharedCopy(batch(`old-${p.partition}`)) })),
      ACKS_ALL,
    );
    assert.deepEqual(
      written.map((o) => o.errorCode),
      kappaParts.map(() => ErrorCode.NONE),
    );
    const kappaAgain = topic('kappa', 4, 'AAAAAAAAAAAAAAAAAAAACQ');
    const worker = shards.workerOf(victim);
    // In the exit's turn (before the restart's timer): the deletion reaches a dead shard, which never deletes the old logs.
    const recreated = new Promise<void>((resolve, reject) => {
      worker!.once('exit', () => {
        shards
          .topicDeleted('kappa')
          .then(() => shards.topicsChanged([kappaAgain]))
          .then(() => resolve(), reject);
      });
    });
    const exited = exitOf(worker);
    shards.crash(victim);
    await exited;
    await recreated;
    await waitFor('the victim serves again', 60_000, () => shards.isServing(victim));
    const fetched = await shards.fetch(
      kappaParts.map((p) => ({ ...p, fetchOffset: 0, partitionMaxBytes: 1 << 20, currentLeaderEpoch: -1 })),
      FETCH_ALL,
    );
    const latest = await shards.listOffsets(
      kappaParts.map((p) => ({ ...p, timestamp: -1n, currentLeaderEpoch: -1 })),
      { isolationCommitted: false, fromReplica: false },
    );
    for (const [i, p] of kappaParts.entries()) {
      assert.deepEqual(
        [fetched[i]!.errorCode, fetched[i]!.highWatermark, latest[i]!.errorCode, Number(latest[i]!.offset)],
        [ErrorCode.NONE, 0, ErrorCode.NONE, 0],
        `kappa-${p.partition}: the new topic starts empty (high watermark, log end)`,
      );
    }
  } finally {
    await shards.shutdown();
  }
});

test('a crash loop: backed off, then after the limit the partitions stay offline and one line says why', async () => {
  const logger = recordingLogger();
  const shards = await WorkerShards.open({
    config: await tempConfig('restart-loop'),
    workers: 2,
    topics: TOPICS,
    logger,
    restart: { backoffMs: 50, crashLimit: 3 },
  });
  try {
    const victim = shards.shardOf('alpha', 0);
    await crashAndWaitForExit(shards, victim);
    await waitFor('the first restart serves', 60_000, () => shards.isServing(victim));
    await crashAndWaitForExit(shards, victim);
    assert.ok(
      logger.lines.some((l) => l.endsWith('restarting it in 50 ms (it crashed again soon after its restart)')),
      logger.lines.join('\n'),
    );
    await waitFor('the second restart serves', 60_000, () => shards.isServing(victim));
    await crashAndWaitForExit(shards, victim);
    assert.equal(shards.restarts, 2, 'the third crash is not restarted');
    assert.equal(shards.isHosting(victim), false);
    assert.equal(shards.offlineWorkers, 1);
    const why = logger.lines.filter((l) => l.includes('is not restarted'));
    assert.deepEqual(why, [
      `shard worker ${victim} ended (shard worker crash requested) and is not restarted: 3 crashes within 10 min (the limit is 3); its partitions stay offline until the broker restarts`,
    ]);
    const out = await shards.produce(
      PARTS.map((p) => ({ ...p, records: sharedCopy(batch(`${p.topic}-${p.partition}`)) })),
      ACKS_ALL,
    );
    for (const [i, p] of PARTS.entries()) {
      const mine = shards.shardOf(p.topic, p.partition) === victim;
      assert.equal(out[i]!.errorCode, mine ? ErrorCode.NOT_LEADER_OR_FOLLOWER : ErrorCode.NONE, `${p.topic}-${p.partition}`);
    }
  } finally {
    await shards.shutdown();
  }
});

test('a worker out of heap ends alone (its resource limit), is restarted, and its records are there', async () => {
  const logger = recordingLogger();
  const shards = await WorkerShards.open({ config: await tempConfig('restart-heap'), workers: 2, topics: TOPICS, logger, workerHeapMb: 64 });
  try {
    const victim = shards.shardOf('alpha', 0);
    const before = await shards.produce(
      PARTS.map((p) => ({ ...p, records: sharedCopy(batch(`${p.topic}-${p.partition}-before`)) })),
      ACKS_ALL,
    );
    assert.deepEqual(
      before.map((o) => o.errorCode),
      PARTS.map(() => ErrorCode.NONE),
    );
    const exited = exitOf(shards.workerOf(victim));
    shards.crash(victim, 'heap');
    await exited;
    // This thread (the test's, the broker's main thread) is still here to see it.
    assert.equal(shards.exits.length, 1);
    assert.match(shards.exits[0]!.reason, /memory/i, shards.exits[0]!.reason);
    await waitFor('the restarted worker serves', 60_000, () => shards.isServing(victim));
    assert.equal(shards.restarts, 1);
    const after = await shards.produce(
      PARTS.map((p) => ({ ...p, records: sharedCopy(batch(`${p.topic}-${p.partition}-after`)) })),
      ACKS_ALL,
    );
    assert.deepEqual(
      after.map((o) => [o.errorCode, o.baseOffset]),
      before.map((o) => [ErrorCode.NONE, o.baseOffset + 3]),
    );
  } finally {
    await shards.shutdown();
  }
});

test('shutdown while a restart waits for its backoff: at once, and no worker is started after it', async () => {
  const shards = await WorkerShards.open({ config: await tempConfig('restart-backoff'), workers: 2, topics: TOPICS, restart: { backoffMs: 60_000 } });
  const victim = shards.shardOf('alpha', 0);
  await crashAndWaitForExit(shards, victim);
  await waitFor('the first restart serves', 60_000, () => shards.isServing(victim));
  await crashAndWaitForExit(shards, victim);
  assert.equal(shards.restartsWaiting, 1, 'a quick second crash waits 60 s');
  const started = Date.now();
  await shards.shutdown();
  assert.ok(Date.now() - started < 20_000, `shut down in ${Date.now() - started} ms`);
  assert.equal(shards.restartsWaiting, 0, 'the waiting restart is cancelled');
  assert.equal(shards.restarts, 1);
});

test('shutdown while the new worker opens its logs: it is shut down with the others, not left running', async () => {
  const shards = await WorkerShards.open({ config: await tempConfig('restart-opening'), workers: 2, topics: TOPICS });
  const victim = shards.shardOf('alpha', 0);
  holdNextOpening(shards, victim, 3000);
  await crashAndWaitForExit(shards, victim);
  await waitFor('the new worker is opening its logs', 60_000, () => shards.isAlive(victim) && !shards.isServing(victim));
  let ended = false;
  void exitOf(shards.workerOf(victim)).then(() => (ended = true));
  await shards.shutdown();
  assert.equal(ended, true, 'the new worker ended before shutdown resolved');
  assert.equal(shards.restarts, 1);
});

test('partitions a StopReplica deleted while their worker was down (cluster mode): the restarted worker deletes their logs before it serves, and only theirs', async () => {
  const lambda = topic('lambda', 4, 'AAAAAAAAAAAAAAAAAAAACg');
  const shards = await WorkerShards.open({
    config: await tempConfig('restart-stale-parts'),
    workers: 2,
    topics: [...TOPICS, lambda],
    logger: recordingLogger(),
  });
  try {
    const victim = shards.shardOf('alpha', 0);
    const parts = lambda.partitions.map((p) => ({ topic: 'lambda', partition: p.partition }));
    const onVictim = parts.filter((p) => shards.shardOf(p.topic, p.partition) === victim);
    assert.ok(onVictim.length > 0 && onVictim.length < parts.length, 'lambda on both shards');
    const written = await shards.produce(
      parts.map((p) => ({ ...p, records: sharedCopy(batch(`old-${p.partition}`)) })),
      ACKS_ALL,
    );
    assert.ok(written.every((o) => o.errorCode === ErrorCode.NONE));
    const worker = shards.workerOf(victim);
    // In the exit's turn (before the restart's timer), as shard-roles.ts marks a deletion its shard did not answer.
    const marked = new Promise<void>((resolve) =>
      worker!.once('exit', () => {
        for (const p of onVictim) shards.deletingPartition(victim, p.topic, p.partition);
        resolve();
      }),
    );
    shards.crash(victim);
    await marked;
    await waitFor('the victim serves again', 60_000, () => shards.isServing(victim));
    // The metadata still names lambda (embedded mode): a deleted partition's log opens again, empty.
    const fetched = await shards.fetch(
      parts.map((p) => ({ ...p, fetchOffset: 0, partitionMaxBytes: 1 << 20, currentLeaderEpoch: -1 })),
      FETCH_ALL,
    );
    for (const [i, p] of parts.entries()) {
      const deleted = shards.shardOf(p.topic, p.partition) === victim;
      assert.equal(fetched[i]!.errorCode, ErrorCode.NONE);
      assert.equal(
        fetched[i]!.highWatermark === 0,
        deleted,
        `lambda-${p.partition}: ${deleted ? 'deleted: empty' : 'kept: its records'} (HW ${fetched[i]!.highWatermark})`,
      );
    }
  } finally {
    await shards.shutdown();
  }
});
