/**
 * The in-process cluster harness (test/helpers/inproc-cluster.ts) does what it promises: its
 * fault rules reach the replica fetchers and the controller's channel manager through the
 * brokers' InterBrokerInterceptor (a dropped Fetch stream shrinks the ISR, removing the rule lets
 * the follower back in; a held LeaderAndIsr keeps a broker on its old epoch until released), and
 * kill / restart / moveLeader act on the cluster as their names say.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { InprocCluster, API } from '../helpers/inproc-cluster.js';
import { requirePeer } from '../helpers/peers.js';
import { ZOOKEEPER_JAR } from '../helpers/zookeeper.js';
import { encodeBatch } from '../../src/protocol/records/index.js';

let c: InprocCluster | undefined;
before(async () => {
  if (existsSync(ZOOKEEPER_JAR)) c = await InprocCluster.start({ brokers: 3 });
});
after(() => c?.stop());

test('in-process harness: drop Fetch shrinks the ISR, hold LeaderAndIsr fences a broker on its old epoch, kill and restart', async (t) => {
  if (!requirePeer(t, 'zookeeper') || !c) return;
  const cl = c;
  await cl.createTopic('h1', [0, 1, 2], { 'min.insync.replicas': '2' });

  // Follower 1's fetches to leader 0 fail: the leader drops it from the ISR (replica.lag.time.max.ms).
  const drop = cl.faults.drop({ api: API.Fetch, from: 1, to: 0 });
  // A record it cannot fetch: an idle partition keeps a caught-up follower in the ISR however
  // long it stays away (Kafka's rule), and follower 1 may have fetched once before the drop.
  const leader = cl.broker(0).broker!.services.replicaManager;
  const rec = encodeBatch({
    records: [{ attributes: 0, timestampDelta: 0, offsetDelta: 0, key: null, value: Buffer.from('x'), headers: [] }],
    baseTimestamp: BigInt(Date.now()),
  });
  await cl.waitFor(
    'a record appended on leader 0',
    20_000,
    async () => (await leader.appendRecords('h1', 0, rec, { requiredAcks: 1, origin: 'client', produceVersion: 9 })).errorCode === 0,
  );
  await cl.waitFor('ISR without 1', 20_000, async () => (await cl.zkState('h1'))?.isr.join(',') === '0,2');
  assert.ok(drop.hits > 0, 'the rule saw broker 1 fetch from 0');
  assert.deepEqual([...cl.partition(0, 'h1')!.isr], [0, 2]);
  drop.remove();
  await cl.waitFor('1 back in the ISR', 20_000, async () => (await cl.zkState('h1'))?.isr.length === 3);

  // LeaderAndIsr to broker 2 is held: moving the leader to 1 leaves 2 on the old epoch meanwhile.
  const before = (await cl.zkState('h1'))!.leader_epoch;
  const held = cl.faults.hold({ api: API.LeaderAndIsr, to: 2 });
  assert.equal(await cl.moveLeader('h1', 0, 1), 0);
  await cl.waitFor('1 leads h1-0', 20_000, () => cl.partition(1, 'h1')?.isLeader === true);
  await cl.waitFor('a LeaderAndIsr to 2 held', 10_000, () => held.hits > 0);
  assert.equal(cl.partition(2, 'h1')!.leaderEpoch, before, 'broker 2 did not hear of the new epoch yet');
  assert.ok(cl.partition(1, 'h1')!.leaderEpoch > before);
  held.release();
  await cl.waitFor('2 on the new epoch', 20_000, () => cl.partition(2, 'h1')!.leaderEpoch === cl.partition(1, 'h1')!.leaderEpoch);

  // Kill the leader: another ISR member leads; restart it: it rejoins the ISR.
  await cl.kill(1);
  await cl.waitFor('a new leader', 20_000, async () => {
    const s = await cl.zkState('h1');
    return s !== undefined && s.leader !== 1 && s.leader >= 0 && cl.partition(s.leader, 'h1')?.isLeader === true;
  });
  await cl.restart(1);
  await cl.waitFor('1 back in the ISR', 30_000, async () => (await cl.zkState('h1'))?.isr.length === 3);
});
