/**
 * PartitionShards.partitionStates (issue 26): the state of hosted partitions as plain data, the
 * same at num.io.threads=1 (in-thread) and 3 (two workers host the user topics): a filter's
 * partitions in its order with the ones not hosted left out, every hosted partition without a
 * filter, the log's config only when asked, parked fetches counted; at 3, one message per shard;
 * a worker that ended leaves its partitions out and the others answer.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestBroker, type TestBroker } from '../../helpers/broker.js';
import { batchOf, createTopic } from '../../server/handlers/data-plane-helpers.js';
import { shardsOf } from '../../../src/server/broker-services.js';
import { WorkerShards } from '../../../src/replication/shards/worker/worker-shards.js';
import type { PartitionShards } from '../../../src/replication/shards/partition-shards.js';
import { PARTS, TOPICS, tempConfig } from './worker/shard-fixtures.js';

const ACKS_ALL = { requiredAcks: -1, origin: 'client', produceVersion: 9, timeoutMs: 5000 } as const;

for (const threads of [1, 3]) {
  let b: TestBroker;
  let shards: PartitionShards;
  before(async () => {
    b = await startTestBroker({ 'num.io.threads': String(threads) });
    shards = shardsOf(b.broker.services);
    await createTopic(b, 'st', 4, { 'retention.ms': '3600000' });
    // Partition p holds p + 1 records.
    const produced = await shards.produce(
      [0, 1, 2, 3].map((partition) => ({ topic: 'st', partition, records: batchOf(Array.from({ length: partition + 1 }, (_, k) => `v${k}`)) })),
      ACKS_ALL,
    );
    assert.deepEqual(
      produced.map((o) => o.errorCode),
      [0, 0, 0, 0],
    );
  });
  after(() => b.stop());

  test(`at ${threads} thread(s): a filter's hosted partitions in its order, the others left out`, async () => {
    assert.equal(shards.count, threads, 'the shards the setting asks for');
    const filter = [
      { topic: 'st', partition: 3 },
      { topic: 'nope', partition: 0 },
      { topic: 'st', partition: 0 },
      { topic: 'st', partition: 9 },
      { topic: 'st', partition: 2 },
    ];
    const states = await shards.partitionStates(filter);
    assert.deepEqual(
      states.map((s) => [s.topic, s.partition, s.logStartOffset, s.logEndOffset, s.highWatermark, s.lastStableOffset, s.segmentCount]),
      [
        ['st', 3, 0, 4, 4, 4, 1],
        ['st', 0, 0, 1, 1, 1, 1],
        ['st', 2, 0, 3, 3, 3, 1],
      ],
    );
    for (const s of states) {
      assert.equal(s.leader, true);
      assert.equal(s.leaderEpoch, 0);
      assert.equal(s.offline, false);
      assert.equal(s.fetchWaiters, 0);
      assert.ok(s.sizeBytes > 0, `${s.partition} has bytes on disk`);
      assert.ok(s.logDir.startsWith(b.dir) && s.logDir.endsWith(`st-${s.partition}`), s.logDir);
      assert.equal(s.config, undefined, 'no config unless asked');
    }
    // Bigger logs for more records: the size is each log's own.
    assert.ok(states[0]!.sizeBytes > states[1]!.sizeBytes);
  });

  test(`at ${threads} thread(s): the log's effective config when asked (topic override over the broker default)`, async () => {
    const [s] = await shards.partitionStates([{ topic: 'st', partition: 1 }], { config: true });
    assert.equal(s!.config!.retentionMs, 3600000);
    assert.equal(s!.config!.segmentBytes, 1024 * 1024 * 1024);
    assert.deepEqual(s!.config!.cleanupPolicy, ['delete']);
  });

  test(`at ${threads} thread(s): without a filter, every hosted partition once, internal topics included`, async () => {
    await b.broker.services.metadata.createTopic({ name: '__consumer_offsets', numPartitions: 2, replicationFactor: 1 });
    await b.broker.services.replicaManager.syncTopic('__consumer_offsets');
    const states = await shards.partitionStates();
    const names = states.map((s) => `${s.topic}-${s.partition}`).sort();
    assert.deepEqual(names, ['__consumer_offsets-0', '__consumer_offsets-1', 'st-0', 'st-1', 'st-2', 'st-3']);
    assert.deepEqual(
      states
        .filter((s) => s.topic === 'st')
        .map((s) => s.logEndOffset)
        .sort(),
      [1, 2, 3, 4],
    );
  });

  test(`at ${threads} thread(s): one message per shard asked, not per partition`, { skip: threads === 1 && 'no messages at 1' }, async () => {
    assert.ok(shards instanceof WorkerShards);
    const owning = new Set([0, 1, 2, 3].map((p) => shards.shardOf('st', p)));
    let before = shards.stats.messages;
    await shards.partitionStates([0, 1, 2, 3].map((partition) => ({ topic: 'st', partition })));
    assert.equal(shards.stats.messages - before, owning.size, 'the shards owning st');
    before = shards.stats.messages;
    await shards.partitionStates();
    assert.equal(shards.stats.messages - before, shards.count, 'every shard once');
  });

  test(`at ${threads} thread(s): a parked fetch is counted on its partition until an append answers it`, async () => {
    const parked = shards.fetch([{ topic: 'st', partition: 0, fetchOffset: 1, partitionMaxBytes: 1 << 20, currentLeaderEpoch: -1 }], {
      maxWaitMs: 30_000,
      minBytes: 1,
      maxBytes: 1 << 20,
      readCommitted: false,
      hardMaxBytes: false,
    });
    const deadline = Date.now() + 10_000;
    let waiters = 0;
    while (waiters === 0 && Date.now() < deadline) {
      waiters = (await shards.partitionStates([{ topic: 'st', partition: 0 }]))[0]!.fetchWaiters;
      if (waiters === 0) await new Promise((r) => setImmediate(r));
    }
    assert.equal(waiters, 1, 'the long poll waits on st-0');
    const [appended] = await shards.produce([{ topic: 'st', partition: 0, records: batchOf(['late']) }], ACKS_ALL);
    assert.equal(appended!.errorCode, 0);
    const [answer] = await parked;
    assert.equal(answer!.highWatermark, 2);
    assert.ok(answer!.records && answer!.records.length > 0, 'the parked fetch got the appended record');
    assert.equal((await shards.partitionStates([{ topic: 'st', partition: 0 }]))[0]!.fetchWaiters, 0);
  });
}

test("a worker that ended: its partitions are left out, the other shards' answered", async () => {
  const shards = await WorkerShards.open({ config: await tempConfig('states-crash'), workers: 2, topics: TOPICS });
  try {
    const victim = shards.shardOf('alpha', 0);
    const all = (await shards.partitionStates()).map((s) => `${s.topic}-${s.partition}`).sort();
    assert.deepEqual(all, PARTS.map((p) => `${p.topic}-${p.partition}`).sort());
    const exited = new Promise((resolve) => shards.workerOf(victim)!.once('exit', resolve));
    shards.crash(victim);
    await exited;
    const survivors = PARTS.filter((p) => shards.shardOf(p.topic, p.partition) !== victim);
    assert.ok(survivors.length > 0 && survivors.length < PARTS.length, 'the partitions span both workers');
    const left = await shards.partitionStates(PARTS);
    assert.deepEqual(
      left.map((s) => `${s.topic}-${s.partition}`),
      survivors.map((p) => `${p.topic}-${p.partition}`),
    );
    assert.deepEqual((await shards.partitionStates()).map((s) => `${s.topic}-${s.partition}`).sort(), survivors.map((p) => `${p.topic}-${p.partition}`).sort());
  } finally {
    await shards.shutdown();
  }
});

test('a worker whose loop is stuck: with a deadline it is left out of partitionStates, and logManagerStats keeps its last answer', async () => {
  const shards = await WorkerShards.open({ config: await tempConfig('states-stall'), workers: 2, topics: TOPICS });
  try {
    const victim = shards.shardOf('alpha', 0);
    const before = await shards.logManagerStats();
    assert.equal(before.length, 3, 'shard 0 and two workers answered');
    shards.stall(victim, 4_000);
    const started = Date.now();
    const left = await shards.partitionStates(undefined, { deadlineMs: 300 });
    const waited = Date.now() - started;
    assert.ok(waited < 3_000, `answered without the stuck worker (${waited} ms)`);
    const survivors = PARTS.filter((p) => shards.shardOf(p.topic, p.partition) !== victim);
    assert.deepEqual(left.map((s) => `${s.topic}-${s.partition}`).sort(), survivors.map((p) => `${p.topic}-${p.partition}`).sort());
    // The stuck shard's last answer stands in: summed flush counters never go back.
    const during = await shards.logManagerStats({ deadlineMs: 300 });
    assert.deepEqual(during, before);
    // Without a deadline the call waits for it, and every partition is there again.
    assert.equal((await shards.partitionStates()).length, PARTS.length);
  } finally {
    await shards.shutdown();
  }
});
