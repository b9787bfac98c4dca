/**
 * Consumer lag and the topic families under kafka-exporter's names, read from an in-process
 * broker's registry (the Prometheus text its /metrics serves): records produced by kafkajs with
 * timestamps in the past, groups' offsets committed by kafkajs's admin (OffsetCommit), lag in
 * records and in seconds after the broker's refresh, and the per-partition switch.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import kafkajs from 'kafkajs';
import { startTestBroker, type TestBroker } from '../../helpers/broker.js';
import { commit, parse, sampleValue, type Sample } from './lag-helpers.js';

const TOPIC = 'lag-topic';
const RECORDS = 10;
/** Record i is stamped BASE + i minutes: an hour ago, a minute apart (so ages of neighbours differ by far more than the tolerance). */
const BASE = Date.now() - 3_600_000;
const STEP = 60_000;

let b: TestBroker;
let kafka: kafkajs.Kafka;

async function produce(count: number, firstIndex: number): Promise<void> {
  const producer = kafka.producer();
  await producer.connect();
  try {
    const messages = Array.from({ length: count }, (_, i) => ({ value: `r${firstIndex + i}`, timestamp: String(BASE + (firstIndex + i) * STEP) }));
    await producer.send({ topic: TOPIC, messages });
  } finally {
    await producer.disconnect();
  }
}

async function scrape(broker: TestBroker): Promise<Sample[]> {
  return parse(await broker.broker.metrics.metrics());
}

before(async () => {
  b = await startTestBroker({ 'metrics.consumer.lag.refresh.ms': '600000', 'offsets.topic.num.partitions': '1' });
  kafka = new kafkajs.Kafka({ brokers: [b.bootstrap], clientId: 'lag-test', logLevel: kafkajs.logLevel.NOTHING });
  const admin = kafka.admin();
  await admin.connect();
  await admin.createTopics({ topics: [{ topic: TOPIC, numPartitions: 1 }] });
  await admin.disconnect();
  await produce(RECORDS, 0);
  await commit(b.port, TOPIC, 'behind', 4);
  await commit(b.port, TOPIC, 'caught-up', RECORDS);
});

after(async () => {
  await b?.stop();
});

test('a group behind: current offset, lag in records and in seconds, sums, members', async () => {
  await b.broker.observability.consumerLag!.refresh();
  const s = await scrape(b);
  const g = { consumergroup: 'behind', topic: TOPIC, partition: '0' };
  assert.equal(sampleValue(s, 'kafka_consumergroup_current_offset', g), 4);
  assert.equal(sampleValue(s, 'kafka_consumergroup_lag', g), 6);
  const expected = (Date.now() - (BASE + 4 * STEP)) / 1000;
  const seconds = sampleValue(s, 'kafka_consumergroup_lag_seconds', g);
  assert.ok(seconds !== undefined && Math.abs(seconds - expected) < 5, `lag_seconds ${seconds}, expected about ${expected}`);
  assert.equal(sampleValue(s, 'kafka_consumergroup_current_offset_sum', { consumergroup: 'behind', topic: TOPIC }), 4);
  assert.equal(sampleValue(s, 'kafka_consumergroup_lag_sum', { consumergroup: 'behind', topic: TOPIC }), 6);
  assert.equal(sampleValue(s, 'kafka_consumergroup_lag_seconds_max', { consumergroup: 'behind', topic: TOPIC }), seconds);
  assert.equal(sampleValue(s, 'kafka_consumergroup_members', { consumergroup: 'behind' }), 0);
});

test('a caught-up group: lag 0 and lag_seconds 0', async () => {
  await b.broker.observability.consumerLag!.refresh();
  const s = await scrape(b);
  const g = { consumergroup: 'caught-up', topic: TOPIC, partition: '0' };
  assert.equal(sampleValue(s, 'kafka_consumergroup_current_offset', g), RECORDS);
  assert.equal(sampleValue(s, 'kafka_consumergroup_lag', g), 0);
  assert.equal(sampleValue(s, 'kafka_consumergroup_lag_seconds', g), 0);
  assert.equal(sampleValue(s, 'kafka_consumergroup_lag_sum', { consumergroup: 'caught-up', topic: TOPIC }), 0);
});

test('the topic families and the broker count, from the partition leader and the controller', async () => {
  const s = await scrape(b);
  const p = { topic: TOPIC, partition: '0' };
  assert.equal(sampleValue(s, 'kafka_topic_partition_current_offset', p), RECORDS);
  assert.equal(sampleValue(s, 'kafka_topic_partition_oldest_offset', p), 0);
  assert.equal(sampleValue(s, 'kafka_topic_partition_replicas', p), 1);
  assert.equal(sampleValue(s, 'kafka_topic_partition_in_sync_replica', p), 1);
  assert.equal(sampleValue(s, 'kafka_topic_partition_leader', p), 0);
  assert.equal(sampleValue(s, 'kafka_topic_partition_under_replicated_partition', p), 0);
  assert.equal(sampleValue(s, 'kafka_topic_partition_leader_is_preferred', p), 1);
  assert.equal(sampleValue(s, 'kafka_topic_partitions', { topic: TOPIC }), 1);
  assert.equal(sampleValue(s, 'kafka_brokers'), 1);
});

test('new records raise the lag at once (local end offsets are read live); a moved group keeps an upper bound until the refresh', async () => {
  await produce(2, RECORDS);
  await commit(b.port, TOPIC, 'behind', 6);
  let s = await scrape(b);
  const g = { consumergroup: 'behind', topic: TOPIC, partition: '0' };
  assert.equal(sampleValue(s, 'kafka_consumergroup_lag', g), RECORDS + 2 - 6);
  assert.equal(sampleValue(s, 'kafka_consumergroup_lag', { consumergroup: 'caught-up', topic: TOPIC, partition: '0' }), 2);
  // Not refreshed yet: record 4's age stands in for record 6's (older: never understated).
  const stale = sampleValue(s, 'kafka_consumergroup_lag_seconds', g)!;
  assert.ok(Math.abs(stale - (Date.now() - (BASE + 4 * STEP)) / 1000) < 5, `before the refresh: ${stale}`);
  await b.broker.observability.consumerLag!.refresh();
  s = await scrape(b);
  const fresh = sampleValue(s, 'kafka_consumergroup_lag_seconds', g)!;
  assert.ok(Math.abs(fresh - (Date.now() - (BASE + 6 * STEP)) / 1000) < 5, `after the refresh: ${fresh}`);
  const caughtUp = sampleValue(s, 'kafka_consumergroup_lag_seconds', { consumergroup: 'caught-up', topic: TOPIC, partition: '0' })!;
  assert.ok(Math.abs(caughtUp - (Date.now() - (BASE + RECORDS * STEP)) / 1000) < 5, `caught-up group now behind: ${caughtUp}`);
});

test('a running consumer counts as a member of its group', async () => {
  const consumer = kafka.consumer({ groupId: 'live', sessionTimeout: 10_000, heartbeatInterval: 500 });
  await consumer.connect();
  try {
    await consumer.subscribe({ topics: [TOPIC], fromBeginning: true });
    await consumer.run({ eachMessage: async () => undefined });
    const deadline = Date.now() + 20_000;
    while (sampleValue(await scrape(b), 'kafka_consumergroup_members', { consumergroup: 'live' }) !== 1) {
      assert.ok(Date.now() < deadline, 'the consumer never showed as a member');
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  } finally {
    await consumer.disconnect();
  }
});

test('metrics.partition.level.enable=false: no per-partition families, the per-topic ones stay', async () => {
  const off = await startTestBroker({ 'metrics.partition.level.enable': 'false', 'offsets.topic.num.partitions': '1' });
  try {
    const k = new kafkajs.Kafka({ brokers: [off.bootstrap], clientId: 'lag-test-off', logLevel: kafkajs.logLevel.NOTHING });
    const admin = k.admin();
    await admin.connect();
    try {
      await admin.createTopics({ topics: [{ topic: TOPIC, numPartitions: 1 }] });
    } finally {
      await admin.disconnect();
    }
    await commit(off.port, TOPIC, 'g', 0);
    await off.broker.observability.consumerLag!.refresh();
    const s = await scrape(off);
    for (const name of [
      'kafka_consumergroup_lag',
      'kafka_consumergroup_current_offset',
      'kafka_consumergroup_lag_seconds',
      'kafka_topic_partition_current_offset',
    ]) {
      assert.equal(s.filter((x) => x.name === name).length, 0, `${name} is exported`);
    }
    assert.equal(sampleValue(s, 'kafka_consumergroup_lag_sum', { consumergroup: 'g', topic: TOPIC }), 0);
    assert.equal(sampleValue(s, 'kafka_topic_partitions', { topic: TOPIC }), 1);
  } finally {
    await off.stop();
  }
});
