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
import { parsePromText, value, type PromSample } from '../server/metrics/state-prom-text.js';
import { CLUSTER_ONLY_METRICS } from '../server/metrics/dashboard-queries.js';

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
  // Whatever fails below, the next test gets a cluster without this test's rules.
  t.after(() => cl.faults.clear());
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
  // The leader takes the new ISR (and counts the shrink) when ZooKeeper's answer reaches it,
  // which may be a moment after the znode is readable: wait for that, within a deadline.
  await cl.waitFor(
    'the leader counted its shrink and holds ISR 0,2',
    10_000,
    async () =>
      value(parsePromText(await cl.broker(0).broker!.metrics.metrics()), 'kafka_server_replicamanager_isrshrinks_total') >= 1 &&
      cl.partition(0, 'h1')!.isr.join(',') === '0,2',
  );
  assert.ok(drop.hits > 0, 'the rule saw broker 1 fetch from 0');
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
  // In ZooKeeper and on the leader itself (the next test reads the leader's under-replicated count).
  await cl.waitFor('1 back in the ISR', 30_000, async () => {
    const s = await cl.zkState('h1');
    return s?.isr.length === 3 && cl.partition(s.leader, 'h1')?.isr.length === 3;
  });
});

test('broker-state metrics on a ZooKeeper cluster: one active controller, under-replicated while a follower is down, its return counted as an ISR expand', async (t) => {
  if (!requirePeer(t, 'zookeeper') || !c) return;
  const cl = c;
  const scrape = async (id: number): Promise<PromSample[]> => parsePromText(await cl.broker(id).broker!.metrics.metrics());
  const activeControllers = async (): Promise<number> => {
    let sum = 0;
    for (const b of cl.running()) sum += value(await scrape(b.id), 'kafka_controller_kafkacontroller_activecontrollercount');
    return sum;
  };
  await cl.createTopic('m1', [0, 1, 2], { 'min.insync.replicas': '2' });
  assert.equal(await activeControllers(), 1);
  let m = await scrape(0);
  assert.equal(value(m, 'kafka_server_replicamanager_underreplicatedpartitions'), 0);
  assert.equal(value(m, 'kafka_server_sessionexpirelistener_sessionstate', { state: 'CONNECTED' }), 1);
  assert.ok(value(m, 'kafka_server_zookeeperclientmetrics_zookeeperrequestlatencyms_count') > 0);
  assert.equal(value(m, 'kafka_log_log_logendoffset', { topic: 'm1', partition: '0' }), 0);
  const expands = value(m, 'kafka_server_replicamanager_isrexpands_total');

  // Follower 2 stops: leader 0 reports m1-0 under-replicated (ISR 0,1: at min ISR 2), and h1-0 too if it leads it.
  await cl.kill(2);
  await cl.waitFor('m1-0 under-replicated on 0', 20_000, async () => value(await scrape(0), 'kafka_server_replicamanager_underreplicatedpartitions') >= 1);
  m = await scrape(0);
  assert.ok(value(m, 'kafka_server_replicamanager_atminisrpartitioncount') >= 1);
  assert.equal(value(m, 'kafka_server_replicamanager_underminisrpartitioncount'), 0);
  await cl.waitFor('one active controller among the running brokers', 20_000, async () => (await activeControllers()) === 1);
  const controller = cl.running().find((b) => b.broker!.zookeeper!.membership.isController)!;
  const cm = await scrape(controller.id);
  assert.equal(value(cm, 'kafka_controller_kafkacontroller_offlinepartitionscount'), 0, 'every partition still has a leader');
  assert.equal(value(cm, 'kafka_controller_kafkacontroller_activebrokercount'), 2);
  assert.ok(value(cm, 'kafka_controller_kafkacontroller_globaltopiccount') >= 2);
  assert.ok(value(cm, 'kafka_controller_controllereventmanager_eventqueuetimems_count') > 0);
  assert.ok(Number.isInteger(value(cm, 'kafka_controller_controllereventmanager_eventqueuesize')));
  // The Grafana dashboard's families an embedded broker lacks (test/server/metrics/dashboard.test.ts checks the rest).
  const served = new Set(cm.map((s) => s.name));
  for (const name of CLUSTER_ONLY_METRICS) assert.ok(served.has(name), `dashboard metric ${name} on the controller`);

  // It returns: back in the ISR (the leader counts the expand), nothing under-replicated, and the
  // controller timed the broker change (Kafka's LeaderElectionRateAndTimeMs).
  await cl.restart(2);
  await cl.waitFor('m1-0 fully replicated on 0', 30_000, async () => value(await scrape(0), 'kafka_server_replicamanager_underreplicatedpartitions') === 0);
  m = await scrape(0);
  assert.ok(value(m, 'kafka_server_replicamanager_isrexpands_total') > expands, 'the leader took 2 back into the ISR');
  await cl.waitFor('one active controller after the restart', 20_000, async () => (await activeControllers()) === 1);
  const active = cl.running().find((b) => b.broker!.zookeeper!.membership.isController)!;
  await cl.waitFor(
    'the broker change timed',
    20_000,
    async () => value(await scrape(active.id), 'kafka_controller_controllerstats_leaderelectionrateandtimems_count') > 0,
  );
});
