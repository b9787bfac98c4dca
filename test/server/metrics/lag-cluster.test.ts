/**
 * Consumer lag in cluster mode (two in-process brokers, a real ZooKeeper): a group is exported by
 * its coordinator alone, for a partition led by the other broker, whose end offset and record
 * timestamp the coordinator's refresh asks for over the inter-broker listener (ListOffsets, Fetch);
 * the partition's topic families come from its leader alone, the broker count from the controller.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import kafkajs from 'kafkajs';
import { InprocCluster } from '../../helpers/inproc-cluster.js';
import { requirePeer } from '../../helpers/peers.js';
import type { Broker } from '../../../src/server/broker.js';
import { commit, coordinatorOf, parse, sampleValue, type Sample } from './lag-helpers.js';

const TOPIC = 'lag-remote';
const GROUP = 'lag-remote-group';
const BASE = Date.now() - 3_600_000;
const STEP = 60_000;

let c: InprocCluster | undefined;
/** The group's coordinator and the topic's leader, as the first test sets them up. */
let coordinator = -1;
let leader = -1;
before(async () => {
  c = await InprocCluster.start({ brokers: 2, props: { 'offsets.topic.replication.factor': '2', 'metrics.consumer.lag.refresh.ms': '600000' } }).catch(
    () => undefined,
  );
});
after(async () => {
  await c?.stop();
});

const running = (id: number): Broker => c!.brokers[id]!.broker!;
const scrape = async (id: number): Promise<Sample[]> => parse(await running(id).metrics.metrics());

test('the coordinator alone exports the group; a partition led elsewhere gets its lag and lag_seconds from the refresh', { timeout: 60_000 }, async (t) => {
  if (!requirePeer(t, 'zookeeper') || !c) return;
  // The coordinator first (the commit creates __consumer_offsets), then the topic on the other broker.
  coordinator = (await coordinatorOf(c.brokers[0]!.port, GROUP)).id;
  leader = 1 - coordinator;
  await c.createTopic(TOPIC, [leader]);
  const kafka = new kafkajs.Kafka({ brokers: c.bootstrap().split(','), clientId: 'lag-cluster', logLevel: kafkajs.logLevel.NOTHING });
  const producer = kafka.producer();
  await producer.connect();
  await producer.send({ topic: TOPIC, messages: Array.from({ length: 10 }, (_, i) => ({ value: `r${i}`, timestamp: String(BASE + i * STEP) })) });
  await producer.disconnect();
  await commit(c.brokers[0]!.port, TOPIC, GROUP, 4);

  await running(coordinator).observability.consumerLag!.refresh();
  const s = await scrape(coordinator);
  const g = { consumergroup: GROUP, topic: TOPIC, partition: '0' };
  assert.equal(sampleValue(s, 'kafka_consumergroup_current_offset', g), 4);
  assert.equal(sampleValue(s, 'kafka_consumergroup_lag', g), 6);
  const seconds = sampleValue(s, 'kafka_consumergroup_lag_seconds', g);
  const expected = (Date.now() - (BASE + 4 * STEP)) / 1000;
  assert.ok(seconds !== undefined && Math.abs(seconds - expected) < 5, `lag_seconds ${seconds}, expected about ${expected}`);

  await running(leader).observability.consumerLag!.refresh();
  const other = await scrape(leader);
  assert.equal(
    other.filter((x) => x.name.startsWith('kafka_consumergroup_') && x.labels.consumergroup === GROUP).length,
    0,
    'the group is exported by its coordinator only',
  );
  const p = { topic: TOPIC, partition: '0' };
  assert.equal(sampleValue(other, 'kafka_topic_partition_current_offset', p), 10);
  assert.equal(sampleValue(other, 'kafka_topic_partition_leader', p), leader);
  assert.equal(sampleValue(s, 'kafka_topic_partition_current_offset', p), undefined, 'the partition is exported by its leader only');
  const brokerCounts = [s, other].map((x) => sampleValue(x, 'kafka_brokers')).filter((v) => v !== undefined);
  assert.deepEqual(brokerCounts, [2], 'kafka_brokers from the active controller alone');
});

test('a coordinator move: the old coordinator stops exporting the group, the new one exports it', { timeout: 60_000 }, async (t) => {
  if (!requirePeer(t, 'zookeeper') || !c || coordinator < 0) return;
  assert.equal(await c.moveLeader('__consumer_offsets', 0, leader), 0);
  const g = { consumergroup: GROUP, topic: TOPIC, partition: '0' };
  const deadline = Date.now() + 20_000;
  for (;;) {
    await running(leader).observability.consumerLag!.refresh();
    const moved = await scrape(leader);
    const old = await scrape(coordinator);
    const oldSeries = old.filter((x) => x.name.startsWith('kafka_consumergroup_') && x.labels.consumergroup === GROUP).length;
    if (oldSeries === 0 && sampleValue(moved, 'kafka_consumergroup_lag', g) === 6) {
      const seconds = sampleValue(moved, 'kafka_consumergroup_lag_seconds', g);
      const expected = (Date.now() - (BASE + 4 * STEP)) / 1000;
      assert.ok(seconds !== undefined && Math.abs(seconds - expected) < 5, `lag_seconds ${seconds}, expected about ${expected}`);
      return;
    }
    assert.ok(
      Date.now() < deadline,
      `after the move: ${oldSeries} series on the old coordinator, lag ${sampleValue(moved, 'kafka_consumergroup_lag', g)} on the new`,
    );
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
});
