/**
 * Fjord's own clients push KIP-714 telemetry to an in-process broker: a client-metrics
 * subscription made through the admin client, a producer and a group consumer at work, and the
 * broker's re-export (broker.metrics) showing their standard metrics labelled with client_id and
 * the client_instance_id the broker assigned; a close's terminating push removes them; a client
 * with enable.metrics.push=false sends nothing.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { Admin, ConfigResourceType, Consumer, Producer } from '../../../src/client/index.js';
import { ZERO_UUID } from '../../../src/protocol/primitives/index.js';
import { startTestBroker, type TestBroker } from '../../helpers/broker.js';

let b: TestBroker;
before(async () => {
  b = await startTestBroker({ 'num.partitions': '2' });
  const admin = new Admin({ bootstrapServers: b.bootstrap, enableMetricsPush: false });
  try {
    // Kafka's smallest push interval is 100 ms; 300 keeps the test short and the broker calm.
    await admin.alterConfigs(ConfigResourceType.ClientMetrics, 'everything', [
      { name: 'metrics', op: 'set', value: 'org.apache.kafka.producer.,org.apache.kafka.consumer.' },
      { name: 'interval.ms', op: 'set', value: '300' },
    ]);
    await admin.createTopics([{ name: 'telemetry', numPartitions: 2, replicationFactor: 1 }]);
  } finally {
    await admin.close();
  }
});
after(async () => {
  await b.stop();
});

/** The re-exported sample lines of `family` for one client id. */
async function series(family: string, clientId: string): Promise<string[]> {
  const text = await b.broker.metrics.metrics();
  return text.split('\n').filter((l) => l.startsWith(`${family}{`) && l.includes(`client_id="${clientId}"`));
}

async function waitFor<T>(what: string, probe: () => Promise<T | null>, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const got = await probe();
    if (got !== null) return got;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

test('a producer pushes its standard metrics; the broker re-exports them with client_id and client_instance_id', async () => {
  const producer = new Producer({ bootstrapServers: b.bootstrap, clientId: 'tele-producer', lingerMs: 0 });
  let closed = false;
  try {
    for (let i = 0; i < 20; i++) await producer.send({ topic: 'telemetry', value: `v${i}` });
    const latency = await waitFor('the producer latency series', async () => {
      const lines = await series('org_apache_kafka_producer_node_request_latency_avg', 'tele-producer');
      return lines.length > 0 ? lines : null;
    });
    const instanceId = producer.telemetry!.clientInstanceId;
    assert.notEqual(instanceId, ZERO_UUID, 'the broker assigned an instance id');
    assert.ok(
      latency.some((l) => l.includes(`client_instance_id="${instanceId}"`) && l.includes(`node_id="${[...producer.cluster.current.brokers.keys()][0]}"`)),
      latency.join('\n'),
    );
    const value = Number(latency[0]!.split(' ').pop());
    assert.ok(value >= 0 && Number.isFinite(value), latency[0]);
    // Sent while records were flowing: the queue time window of that push.
    const all = await b.broker.metrics.metrics();
    assert.match(all, /^org_apache_kafka_producer_connection_creation_total\{[^}]*client_id="tele-producer"[^}]*\} [1-9]/m);
    await producer.close();
    closed = true;
    assert.equal(producer.telemetry!.reporter.state, 'terminated');
    await waitFor('the series to go after the terminating push', async () =>
      (await series('org_apache_kafka_producer_node_request_latency_avg', 'tele-producer')).length === 0 ? true : null,
    );
  } finally {
    if (!closed) await producer.close();
  }
});

test('a group consumer pushes fetch and commit latency and its assigned partitions', async () => {
  const consumer = new Consumer({ bootstrapServers: b.bootstrap, clientId: 'tele-consumer', groupId: 'tele-group', autoOffsetReset: 'earliest' });
  try {
    consumer.subscribe(['telemetry']);
    const assigned = await waitFor('the consumer metrics', async () => {
      await consumer.poll(100);
      await consumer.commitSync();
      const commit = await series('org_apache_kafka_consumer_coordinator_commit_latency_avg', 'tele-consumer');
      const parts = await series('org_apache_kafka_consumer_coordinator_assigned_partitions', 'tele-consumer');
      const fetch = await series('org_apache_kafka_consumer_fetch_manager_fetch_latency_max', 'tele-consumer');
      return commit.length > 0 && parts.length > 0 && fetch.length > 0 ? parts : null;
    });
    assert.match(assigned[0]!, / 2$/, 'both partitions of the topic');
  } finally {
    await consumer.close();
  }
});

test('enable.metrics.push=false: no telemetry at all', async () => {
  const producer = new Producer({ bootstrapServers: b.bootstrap, clientId: 'tele-off', enableMetricsPush: false });
  try {
    await producer.send({ topic: 'telemetry', value: 'x' });
    assert.equal(producer.telemetry, null);
    const text = await b.broker.metrics.metrics();
    assert.doesNotMatch(text, /client_id="tele-off"/);
  } finally {
    await producer.close();
  }
});
