/**
 * The cluster-only broker-state families issue 23's metric list asked for, on two in-process
 * brokers and a real ZooKeeper: replication bytes in (follower) against out (leader), Kafka's
 * timers with quantiles (controller state times, ZooKeeper request latency), ReassigningPartitions
 * while a reassignment cannot complete, and consumer lag of a Kafka 0.8 ZooKeeper-stored group,
 * exported by the active controller alone; the cluster-mode families docs/operations.md lists.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { InprocCluster, API } from '../../helpers/inproc-cluster.js';
import { requirePeer } from '../../helpers/peers.js';
import { Producer } from '../../../src/client/index.js';
import { alterReassignments } from '../../../src/cli/common/reassign.js';
import { ZkConsumerOffsets } from '../../../src/metadata/zk/zk-consumer-offsets.js';
import { parsePromText, samples, value, type PromSample } from './state-prom-text.js';
import { NOT_ON_ONE_BROKER, documentedFamilies, servedFamilies } from './operations-doc.js';

let c: InprocCluster | undefined;
let producer: Producer | undefined;

before(async () => {
  c = await InprocCluster.start({ brokers: 2, props: { 'metrics.consumer.lag.refresh.ms': '600000' } }).catch(() => undefined);
  if (c) producer = new Producer({ bootstrapServers: c.bootstrap() });
});
after(async () => {
  await producer?.close();
  await c?.stop();
});

const scrape = async (id: number): Promise<PromSample[]> => parsePromText(await c!.broker(id).broker!.metrics.metrics());
const activeController = async (): Promise<number> => {
  for (const b of c!.brokers) if (value(await scrape(b.id), 'kafka_controller_kafkacontroller_activecontrollercount') === 1) return b.id;
  throw new Error('no active controller');
};

test('replication bytes: what the follower appended equals what the leader answered to it', { timeout: 60_000 }, async (t) => {
  if (!requirePeer(t, 'zookeeper') || !c) return;
  await c.createTopic('repl', [0, 1]);
  for (let i = 0; i < 10; i++) await producer!.send({ topic: 'repl', partition: 0, value: `record-${i}` });
  const leaderEnd = c.partition(0, 'repl')!.logEndOffset;
  await c.waitFor('the follower caught up', 20_000, () => c!.partition(1, 'repl')!.logEndOffset === leaderEnd);
  const [byLeader, byFollower] = await c.waitFor('the counters agree', 20_000, async () => {
    const out = value(await scrape(0), 'kafka_server_brokertopicmetrics_replicationbytesout_total');
    const into = value(await scrape(1), 'kafka_server_brokertopicmetrics_replicationbytesin_total');
    return into > 0 && into === out ? [out, into] : undefined;
  });
  assert.ok(byFollower >= 10 * 'record-0'.length, `${byFollower} bytes in for ${byLeader} bytes out`);
  assert.equal(value(await scrape(0), 'kafka_server_brokertopicmetrics_replicationbytesin_total'), 0, 'the leader fetched nothing');
  const follower = await scrape(1);
  assert.equal(value(follower, 'kafka_server_replicafetchermanager_maxlag', { clientId: 'Replica' }), 0, 'caught up');
  assert.equal(value(follower, 'kafka_server_replicafetchermanager_failedpartitionscount', { clientId: 'Replica' }), 0);
});

test('docs/operations.md: every family a cluster broker serves is documented; the cluster-only ones are served', async (t) => {
  if (!requirePeer(t, 'zookeeper') || !c) return;
  const documented = documentedFamilies();
  const served = new Set<string>();
  for (const b of c.brokers) for (const f of servedFamilies(await b.broker!.metrics.metrics())) served.add(f);
  assert.deepEqual([...served].filter((f) => !documented.has(f)).sort(), [], 'served in cluster mode, missing from docs/operations.md');
  assert.deepEqual(
    Object.keys(NOT_ON_ONE_BROKER).filter((f) => !served.has(f)),
    [],
    'listed as cluster-only but not served by a cluster either',
  );
});

test('Kafka timers carry quantiles: controller state times and ZooKeeper request latency', { timeout: 30_000 }, async (t) => {
  if (!requirePeer(t, 'zookeeper') || !c) return;
  const m = await scrape(await activeController());
  const family = 'kafka_controller_controllerstats_topicchangerateandtimems';
  assert.ok(value(m, `${family}_count`) >= 1, 'the topic creations were timed');
  const quantiles = samples(m, family).map((s) => s.labels.quantile);
  assert.deepEqual(quantiles, ['0.50', '0.75', '0.95', '0.98', '0.99', '0.999']);
  const p50 = value(m, family, { quantile: '0.50' });
  const p999 = value(m, family, { quantile: '0.999' });
  assert.ok(p50 > 0 && p999 >= p50, `p50 ${p50}, p999 ${p999}`);
  // No more than the slowest possible event: the total time.
  assert.ok(p999 <= value(m, `${family}_sum`) * 1.1, `p999 ${p999} within the total ${value(m, `${family}_sum`)}`);
  assert.equal(value(m, 'kafka_controller_controllerstats_controlledshutdownrateandtimems', { quantile: '0.99' }), 0, 'nothing timed: 0');
  for (const b of c.brokers) {
    const z = await scrape(b.id);
    const zk = 'kafka_server_zookeeperclientmetrics_zookeeperrequestlatencyms';
    assert.ok(value(z, `${zk}_count`) > 0);
    assert.ok(value(z, zk, { quantile: '0.99' }) > 0, `broker ${b.id}: ZooKeeper p99`);
    assert.ok(value(z, zk, { quantile: '0.50' }) <= value(z, zk, { quantile: '0.99' }));
  }
});

test('ReassigningPartitions counts a partition led here while its new replica cannot catch up', { timeout: 60_000 }, async (t) => {
  if (!requirePeer(t, 'zookeeper') || !c) return;
  await c.createTopic('moving', [0]);
  const gauge = async (): Promise<number> => value(await scrape(0), 'kafka_server_replicamanager_reassigningpartitions');
  assert.equal(await gauge(), 0);
  const blocked = c.faults.drop({ api: API.Fetch, from: 1, to: 0 });
  try {
    const admin = c.admin();
    try {
      const res = await alterReassignments(admin, [{ topic: 'moving', partition: 0, replicas: [0, 1] }]);
      assert.equal(res.get('moving-0') ?? null, null);
    } finally {
      await admin.close();
    }
    await c.waitFor('the leader sees the reassignment', 20_000, async () => (await gauge()) === 1);
    assert.equal(value(await scrape(1), 'kafka_server_replicamanager_reassigningpartitions'), 0, 'counted by the leader only');
  } finally {
    blocked.remove();
  }
  await c.waitFor('the reassignment completes', 30_000, async () => (await gauge()) === 0 && (await c!.zkReplicas('moving'))?.length === 2);
});

test('a ZooKeeper-stored (Kafka 0.8) group: its lag is exported by the active controller alone', { timeout: 60_000 }, async (t) => {
  if (!requirePeer(t, 'zookeeper') || !c) return;
  const base = Date.now() - 3_600_000;
  await c.createTopic('legacy', [1]);
  for (let i = 0; i < 10; i++) await producer!.send({ topic: 'legacy', partition: 0, value: `r${i}`, timestamp: BigInt(base + i * 60_000) });
  await new ZkConsumerOffsets(await c.zk(), 10_000).commit('legacy-group', 'legacy', 0, 4n);
  const controller = await activeController();
  for (const b of c.brokers) await b.broker!.observability.consumerLag!.refresh();
  const m = await scrape(controller);
  const g = { consumergroup: 'legacy-group', topic: 'legacy', partition: '0' };
  assert.equal(value(m, 'kafka_consumergroup_current_offset', g), 4);
  assert.equal(value(m, 'kafka_consumergroup_lag', g), 6);
  assert.equal(value(m, 'kafka_consumergroup_lag_sum', { consumergroup: 'legacy-group', topic: 'legacy' }), 6);
  assert.equal(value(m, 'kafka_consumergroup_members', { consumergroup: 'legacy-group' }), 0, 'no consumer registered');
  const seconds = value(m, 'kafka_consumergroup_lag_seconds', g);
  const expected = (Date.now() - (base + 4 * 60_000)) / 1000;
  assert.ok(Math.abs(seconds - expected) < 10, `lag_seconds ${seconds}, expected about ${expected}`);
  const other = await scrape(1 - controller);
  assert.equal(samples(other, 'kafka_consumergroup_lag', { consumergroup: 'legacy-group' }).length, 0, 'exported by the controller only');
});
