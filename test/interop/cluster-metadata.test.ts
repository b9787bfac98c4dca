/** Issue 2's "done when": real clients see the broker and its topics. */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import kafkajs from 'kafkajs';
import { startTestBroker, type TestBroker } from '../helpers/broker.js';
import { requirePeer, PYTHON } from '../helpers/peers.js';
import { run } from '../helpers/run.js';

let b: TestBroker;
before(async () => {
  b = await startTestBroker();
  await b.broker.services.metadata.createTopic({ name: 'bigdata', numPartitions: 2, replicationFactor: 1 });
});
after(() => b.stop());

test('kcat -L lists the broker and the topic', async (t) => {
  if (!requirePeer(t, 'kcat')) return;
  const r = await run('kcat', ['-b', b.bootstrap, '-L', '-m', '10']);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, new RegExp(`broker 0 at 127\\.0\\.0\\.1:${b.port} \\(controller\\)`));
  assert.match(r.stdout, /topic "bigdata" with 2 partitions:/);
  assert.match(r.stdout, /partition 1, leader 0, replicas: 0, isrs: 0/);
});

test('kafkajs admin.describeCluster() and fetchTopicMetadata()', async () => {
  const kafka = new kafkajs.Kafka({ brokers: [b.bootstrap], clientId: 'fjord-test', logLevel: kafkajs.logLevel.NOTHING });
  const admin = kafka.admin();
  await admin.connect();
  try {
    const cluster = await admin.describeCluster();
    assert.deepEqual(cluster.brokers, [{ nodeId: 0, host: '127.0.0.1', port: b.port }]);
    assert.equal(cluster.controller, 0);
    assert.equal(cluster.clusterId, b.broker.services.metadata.clusterId);
    const md = await admin.fetchTopicMetadata({ topics: ['bigdata'] });
    assert.equal(md.topics[0]!.partitions.length, 2);
  } finally {
    await admin.disconnect();
  }
});

test('confluent-kafka AdminClient.list_topics()', async (t) => {
  if (!requirePeer(t, 'python3-confluent-kafka')) return;
  const script = `
import sys, json
from confluent_kafka.admin import AdminClient
md = AdminClient({'bootstrap.servers': sys.argv[1]}).list_topics(timeout=10)
print(json.dumps({'cluster_id': md.cluster_id, 'controller': md.controller_id,
  'brokers': {str(k): [v.host, v.port] for k, v in md.brokers.items()},
  'topics': {k: len(v.partitions) for k, v in md.topics.items()}}))
`;
  const r = await run(PYTHON, ['-c', script, b.bootstrap], { timeoutMs: 30000 });
  assert.equal(r.code, 0, r.stderr);
  const md = JSON.parse(r.stdout) as { cluster_id: string; controller: number; brokers: Record<string, [string, number]>; topics: Record<string, number> };
  assert.equal(md.cluster_id, b.broker.services.metadata.clusterId);
  assert.equal(md.controller, 0);
  assert.deepEqual(md.brokers, { '0': ['127.0.0.1', b.port] });
  assert.equal(md.topics.bigdata, 2);
});

test('kafka-python KafkaAdminClient.describe_cluster()', async (t) => {
  if (!requirePeer(t, 'python3-kafka')) return;
  const script = `
import sys, json
from kafka.admin import KafkaAdminClient
a = KafkaAdminClient(bootstrap_servers=sys.argv[1], request_timeout_ms=10000)
d = a.describe_cluster()
print(json.dumps({'cluster_id': d['cluster_id'], 'brokers': [[x['node_id'], x['host'], x['port']] for x in d['brokers']]}))
a.close()
`;
  const r = await run(PYTHON, ['-c', script, b.bootstrap], { timeoutMs: 30000 });
  assert.equal(r.code, 0, r.stderr);
  const d = JSON.parse(r.stdout) as { cluster_id: string; brokers: [number, string, number][] };
  assert.equal(d.cluster_id, b.broker.services.metadata.clusterId);
  assert.deepEqual(d.brokers, [[0, '127.0.0.1', b.port]]);
});
