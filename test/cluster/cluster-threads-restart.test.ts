/**
 * Cluster mode on shard workers, the parts a child-process cluster cannot reach (docs/threads.md
 * "Step 3, as built"), on the in-process harness with num.io.threads=3 on every broker: the test
 * interceptor reaches a worker's replica fetchers through the main thread (a dropped Fetch stream
 * shrinks the ISR its leader, on a worker, writes; lifting it lets the follower back in), and a
 * worker that ends is restarted and sent its partitions' roles again: the leader leads again at
 * the same epoch (acks=all answered), the follower fetches again (back in the ISR).
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { InprocCluster, API } from '../helpers/inproc-cluster.js';
import { requirePeer } from '../helpers/peers.js';
import { ZOOKEEPER_JAR } from '../helpers/zookeeper.js';
import { encodeBatch } from '../../src/protocol/records/index.js';
import { ErrorCode } from '../../src/protocol/errors.js';
import type { WorkerShards } from '../../src/replication/shards/worker/worker-shards.js';
import { shardOf } from '../../src/replication/shards/partition-shards.js';

const TOPIC = 'restarts';
const shard = shardOf(TOPIC, 0, 3);

let c: InprocCluster | undefined;
before(async () => {
  if (existsSync(ZOOKEEPER_JAR)) c = await InprocCluster.start({ brokers: 3, props: { 'num.io.threads': '3' } });
});
after(() => c?.stop());

const workersOf = (cl: InprocCluster, id: number): WorkerShards => cl.broker(id).broker!.services.shards as WorkerShards;

function batch(value: string): Buffer {
  return encodeBatch({
    records: [{ attributes: 0, timestampDelta: 0, offsetDelta: 0, key: null, value: Buffer.from(value), headers: [] }],
    baseTimestamp: BigInt(Date.now()),
  });
}

/** acks=all through broker `id`'s shards (the Produce handler's own call). */
async function produce(cl: InprocCluster, id: number, value: string): Promise<number> {
  const [out] = await workersOf(cl, id).produce([{ topic: TOPIC, partition: 0, records: batch(value) }], {
    requiredAcks: -1,
    origin: 'client',
    produceVersion: 9,
    timeoutMs: 5000,
  });
  return out!.errorCode;
}

test("num.io.threads=3 in cluster mode: the interceptor reaches a worker's fetchers; a restarted worker leads and follows again", async (t) => {
  if (!requirePeer(t, 'zookeeper')) return;
  // ZooKeeper is there: a cluster that did not start is this test's failure, not a pass.
  assert.ok(c, 'the in-process cluster started');
  const cl = c;
  assert.notEqual(shard, 0, 'the topic lives on a worker');
  const admin = cl.admin();
  try {
    const res = await admin.createTopics([{ name: TOPIC, replicaAssignment: [[0, 1, 2]], configs: { 'min.insync.replicas': '2' } }], { timeoutMs: 10_000 });
    assert.ok(!res.get(TOPIC), String(res.get(TOPIC)));
  } finally {
    await admin.close();
  }
  await cl.waitFor('led by 0 with the whole ISR', 20_000, async () => (await cl.zkState(TOPIC))?.isr.length === 3);
  await cl.waitFor('acks=all on leader 0', 20_000, async () => (await produce(cl, 0, 'a')) === ErrorCode.NONE);

  // Broker 1's fetches to 0 fail in the interceptor, which its worker's fetchers ask on the main thread.
  const drop = cl.faults.drop({ api: API.Fetch, from: 1, to: 0 });
  t.after(() => cl.faults.clear());
  await cl.waitFor('acks=all while 1 falls behind', 20_000, async () => (await produce(cl, 0, 'b')) === ErrorCode.NONE);
  const shrunk = await cl.waitFor('ISR without 1', 20_000, async () => {
    const s = await cl.zkState(TOPIC);
    return s?.isr.join(',') === '0,2' ? s : undefined;
  });
  assert.ok(drop.hits > 0, 'the interceptor saw broker 1 fetch from 0');
  drop.remove();
  await cl.waitFor('1 back in the ISR', 20_000, async () => (await cl.zkState(TOPIC))?.isr.length === 3);

  // The leader's worker ends: NOT_LEADER_OR_FOLLOWER meanwhile, then its restart gets its role again at the same epoch.
  const leader = workersOf(cl, 0);
  leader.crash(shard);
  await cl.waitFor('the leader worker restarted and serving', 30_000, () => leader.restarts === 1 && leader.isServing(shard));
  await cl.waitFor('acks=all on the restarted leader', 20_000, async () => (await produce(cl, 0, 'c')) === ErrorCode.NONE);
  assert.equal((await cl.zkState(TOPIC))!.leader_epoch, shrunk.leader_epoch, 'no new leader epoch: the same leader serves again');

  // A follower's worker ends: once restarted it fetches again and its leader takes it back in.
  const follower = workersOf(cl, 2);
  follower.crash(shard);
  await cl.waitFor('the follower worker restarted', 30_000, () => follower.restarts === 1 && follower.isServing(shard));
  await cl.waitFor('acks=all after the follower restart', 20_000, async () => (await produce(cl, 0, 'd')) === ErrorCode.NONE);
  await cl.waitFor('the whole ISR again', 20_000, async () => (await cl.zkState(TOPIC))?.isr.length === 3);
});
