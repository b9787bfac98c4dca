/**
 * A shard worker crash under load, seen by real clients (kafkajs), on a broker at
 * num.io.threads=3 (docs/threads.md "A shard's failure stays in the shard"): an idempotent
 * producer writes to every partition of a topic spread over both workers; one worker is made to
 * crash, comes back, and crashes again soon after (so its restart waits a backoff, made 20 s here). Meanwhile the
 * other worker's partitions answer without an error and keep taking records, the crashed
 * worker's partitions answer NOT_LEADER_OR_FOLLOWER and then serve again, a topic created and
 * one deleted during the outage reach the new worker, and in the end a consumer reads every
 * acknowledged record exactly once, at consecutive offsets. The restarts are counted in
 * fjord_shard_worker_restarts_total.
 */
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { readdir } from 'node:fs/promises';
import { Kafka, logLevel, type Producer } from 'kafkajs';
import { startTestBroker, type TestBroker } from '../../helpers/broker.js';
import { waitFor } from '../../helpers/wait-for.js';
import { WorkerShards } from '../../../src/replication/shards/worker/worker-shards.js';

const TOPIC = 'restart-load';
const PROBE = 'restart-probe';
const PARTITIONS = 6;
const OUTAGE_MS = 20_000;

let b: TestBroker | undefined;
after(async () => {
  await b?.stop();
});

async function scrape(port: number, family: string): Promise<number> {
  const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith(`${family} `));
  assert.ok(line, `${family} is served`);
  return Number(line.split(' ')[1]);
}

/** One loop per partition, each sending one record at a time and keeping what was acknowledged. */
function loadOf(producer: Producer) {
  const acked: string[][] = Array.from({ length: PARTITIONS }, () => []);
  let stopping = false;
  const loops = acked.map(async (mine, partition) => {
    for (let i = 0; !stopping; i++) {
      const value = `${partition}-${i}`;
      await producer.send({ topic: TOPIC, acks: -1, messages: [{ partition, value }] });
      mine.push(value);
    }
  });
  return {
    acked,
    stop: async () => {
      stopping = true;
      await Promise.all(loops);
    },
  };
}

test('a worker crash under load: the other shard keeps serving, the crashed one comes back, every acknowledged record is there once', {
  timeout: 180_000,
}, async () => {
  // A quick second crash waits 20 s for its restart: an outage long enough to look into on a loaded machine.
  b = await startTestBroker({ 'num.io.threads': '3', 'metrics.listener': 'http://127.0.0.1:0', 'auto.create.topics.enable': 'false' }, undefined, {
    shardRestart: { backoffMs: OUTAGE_MS },
  });
  const shards = b.broker.services.shards;
  assert.ok(shards instanceof WorkerShards, 'num.io.threads=3 puts the partitions on shard workers');
  const metricsPort = b.broker.observability.port!;
  const kafka = new Kafka({
    clientId: 'restart',
    brokers: [b.bootstrap],
    logLevel: logLevel.NOTHING,
    retry: { retries: 200, initialRetryTime: 50, maxRetryTime: 500 },
  });
  const admin = kafka.admin();
  await admin.connect();
  const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1 });
  // A producer that does not retry: it shows what a client gets from each partition.
  const probe = kafka.producer({ retry: { retries: 0 } });
  const consumer = kafka.consumer({ groupId: 'restart-readers' });
  let load: ReturnType<typeof loadOf> | undefined;
  try {
    await admin.createTopics({ topics: [TOPIC, PROBE, 'doomed'].map((topic) => ({ topic, numPartitions: PARTITIONS })), waitForLeaders: true });
    const victim = shards.shardOf(TOPIC, 0);
    const onVictim = (topic: string, p: number): boolean => shards.shardOf(topic, p) === victim;
    const all = [...Array(PARTITIONS).keys()];
    const crashed = all.filter((p) => onVictim(TOPIC, p));
    const healthy = all.filter((p) => !onVictim(TOPIC, p));
    assert.ok(crashed.length > 0 && healthy.length > 0, 'the topic has partitions on both workers');
    await producer.connect();
    await probe.connect();
    load = loadOf(producer);
    const acked = load.acked;
    const atLeast = (n: number, parts: number[]) => () => parts.every((p) => acked[p]!.length >= n);
    await waitFor('records on every partition', 30_000, atLeast(5, all));

    const crash = async (): Promise<void> => {
      const worker = shards.workerOf(victim)!;
      const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
      shards.crash(victim);
      await exited;
    };
    // First crash: restarted at once. Its partitions take records again through the client's retries.
    await crash();
    await waitFor('the first restart serves', 60_000, () => shards.isServing(victim));
    const afterFirst = crashed.map((p) => acked[p]!.length);
    await waitFor('the crashed partitions take records again', 30_000, () => crashed.every((p, i) => acked[p]!.length >= afterFirst[i]! + 3));

    // Second crash within a minute of the restart: its restart waits OUTAGE_MS, an outage the test can look into.
    await crash();
    assert.equal(shards.isServing(victim), false);
    const outageStarted = Date.now();
    const healthyAtCrash = healthy.map((p) => acked[p]!.length);
    await waitFor('the other worker takes records during the outage', 30_000, () => healthy.every((p, i) => acked[p]!.length >= healthyAtCrash[i]! + 3));
    const probed = await Promise.allSettled(all.map((partition) => probe.send({ topic: PROBE, acks: -1, messages: [{ partition, value: 'probe' }] })));
    await admin.createTopics({ topics: [{ topic: 'born-in-outage', numPartitions: PARTITIONS }] });
    await admin.deleteTopics({ topics: ['doomed'] });
    assert.equal(await scrape(metricsPort, 'fjord_shard_workers_offline'), 1);
    assert.equal(shards.isServing(victim), false, `all of the above within the outage (${Date.now() - outageStarted} ms so far)`);
    for (const [p, r] of probed.entries()) {
      if (onVictim(PROBE, p)) {
        assert.equal(r.status, 'rejected', `${PROBE}-${p} is offline`);
        assert.match(String((r as PromiseRejectedResult).reason), /leader/i, `${PROBE}-${p}: NOT_LEADER_OR_FOLLOWER`);
      } else assert.equal(r.status, 'fulfilled', `${PROBE}-${p} on the other worker answers without an error`);
    }
    await waitFor('the second restart serves', 60_000, () => shards.isServing(victim));
    const afterSecond = crashed.map((p) => acked[p]!.length);
    await waitFor('the crashed partitions take records again', 30_000, () => crashed.every((p, i) => acked[p]!.length >= afterSecond[i]! + 3));
    await load.stop();
    assert.equal(await scrape(metricsPort, 'fjord_shard_worker_restarts_total'), 2);
    assert.equal(await scrape(metricsPort, 'fjord_shard_workers_offline'), 0);

    // The topic created during the outage serves on every partition; the deleted one left nothing on disk.
    await producer.send({ topic: 'born-in-outage', acks: -1, messages: all.map((partition) => ({ partition, value: 'new' })) });
    await waitFor('the deleted topic is gone from disk', 30_000, async () => !(await readdir(b!.dir)).some((f) => f.startsWith('doomed-')));

    // Every acknowledged record, once, at consecutive offsets, in the order it was acknowledged.
    const read: { value: string; offset: number }[][] = all.map(() => []);
    await consumer.connect();
    await consumer.subscribe({ topic: TOPIC, fromBeginning: true });
    await consumer.run({
      eachMessage: async ({ partition, message }) => {
        read[partition]!.push({ value: message.value!.toString(), offset: Number(message.offset) });
      },
    });
    await waitFor('the consumer read as many records as were acknowledged', 60_000, () => all.every((p) => read[p]!.length >= acked[p]!.length), {
      explain: () => all.map((p) => `${p}: ${read[p]!.length}/${acked[p]!.length}`).join(', '),
    });
    for (const p of all) {
      assert.deepEqual(
        read[p]!.map((r) => r.value),
        acked[p],
        `partition ${p}: exactly the acknowledged records`,
      );
      assert.deepEqual(
        read[p]!.map((r) => r.offset),
        read[p]!.map((_, i) => i),
        `partition ${p}: consecutive offsets`,
      );
    }
  } finally {
    await load?.stop().catch(() => undefined);
    await consumer.disconnect().catch(() => undefined);
    await producer.disconnect().catch(() => undefined);
    await probe.disconnect().catch(() => undefined);
    await admin.disconnect().catch(() => undefined);
  }
});
