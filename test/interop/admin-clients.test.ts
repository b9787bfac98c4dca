/** Issue 4's "done when": real admin clients create, configure, grow and delete topics. */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import kafkajs from 'kafkajs';
import '../helpers/promise-with-resolvers.js';
import { Admin } from '@platformatic/kafka';
import { startTestBroker, type TestBroker } from '../helpers/broker.js';
import { requirePeer, PYTHON } from '../helpers/peers.js';
import { run } from '../helpers/run.js';
import { uuidToBytes } from '../../src/protocol/primitives/index.js';

let b: TestBroker;
before(async () => {
  b = await startTestBroker();
});
after(() => b.stop());

function kafkajsAdmin(): kafkajs.Admin {
  const kafka = new kafkajs.Kafka({ brokers: [b.bootstrap], clientId: 'fjord-admin-test', logLevel: kafkajs.logLevel.NOTHING });
  return kafka.admin();
}

test('kafkajs admin: createTopics, fetchTopicMetadata, describeConfigs, alterConfigs, createPartitions, deleteTopics', async () => {
  const admin = kafkajsAdmin();
  await admin.connect();
  try {
    const created = await admin.createTopics({
      topics: [{ topic: 'kjs-topic', numPartitions: 2, replicationFactor: 1, configEntries: [{ name: 'retention.ms', value: '86400000' }] }],
      waitForLeaders: true,
    });
    assert.equal(created, true);
    assert.equal(await admin.createTopics({ topics: [{ topic: 'kjs-topic', numPartitions: 2 }] }), false, 'already exists');
    await assert.rejects(
      admin.createTopics({ topics: [{ topic: 'kjs-bad', configEntries: [{ name: 'retention.mss', value: '1' }] }] }),
      (err: Error & { errors?: { type?: string; message?: string }[] }) => {
        assert.match(JSON.stringify(err.errors ?? err.message), /INVALID_CONFIG|Unknown topic config name/);
        return true;
      },
    );
    const md = await admin.fetchTopicMetadata({ topics: ['kjs-topic'] });
    assert.equal(md.topics[0]!.partitions.length, 2);

    const described = await admin.describeConfigs({
      resources: [{ type: kafkajs.ConfigResourceTypes.TOPIC, name: 'kjs-topic', configNames: ['retention.ms', 'cleanup.policy'] }],
      includeSynonyms: false,
    });
    const entries = new Map(described.resources[0]!.configEntries.map((e) => [e.configName, e]));
    assert.equal(entries.get('retention.ms')!.configValue, '86400000');
    assert.equal(entries.get('cleanup.policy')!.configValue, 'delete');
    assert.equal(entries.get('cleanup.policy')!.isDefault, true);

    await admin.alterConfigs({
      validateOnly: false,
      resources: [{ type: kafkajs.ConfigResourceTypes.TOPIC, name: 'kjs-topic', configEntries: [{ name: 'cleanup.policy', value: 'compact' }] }],
    });
    assert.deepEqual(b.broker.services.metadata.topic('kjs-topic')!.configs, { 'cleanup.policy': 'compact' });

    await admin.createPartitions({ topicPartitions: [{ topic: 'kjs-topic', count: 5 }] });
    const grown = await admin.fetchTopicMetadata({ topics: ['kjs-topic'] });
    assert.equal(grown.topics[0]!.partitions.length, 5);
    await assert.rejects(admin.createPartitions({ topicPartitions: [{ topic: 'kjs-topic', count: 3 }] }), /partitions/i);

    await admin.deleteTopics({ topics: ['kjs-topic'], timeout: 5000 });
    assert.deepEqual(
      (await admin.listTopics()).filter((t) => t === 'kjs-topic'),
      [],
    );
  } finally {
    await admin.disconnect();
  }
});

test('@platformatic/kafka Admin: createTopics, listTopics, createPartitions, describeConfigs, deleteTopics', async () => {
  const admin = new Admin({ clientId: 'fjord-plt-admin', bootstrapBrokers: [b.bootstrap] });
  try {
    const created = await admin.createTopics({ topics: ['plt-topic'], partitions: 3, replicas: 1, configs: [{ name: 'segment.bytes', value: '1048576' }] });
    assert.equal(created[0]!.name, 'plt-topic');
    assert.equal(created[0]!.partitions, 3);
    assert.equal(created[0]!.replicas, 1);
    // @platformatic/kafka prints the uuid as hyphenated hex; Fjord keeps Kafka's base64url form.
    const id = uuidToBytes(b.broker.services.metadata.topic('plt-topic')!.topicId).toString('hex');
    assert.equal(created[0]!.id.replace(/-/g, ''), id);
    assert.equal(created[0]!.configuration['segment.bytes'], '1048576');
    assert.ok((await admin.listTopics()).includes('plt-topic'));
    await admin.createPartitions({ topics: [{ name: 'plt-topic', count: 4 }] });
    assert.equal(b.broker.services.metadata.topic('plt-topic')!.partitions.length, 4);
    const configs = await admin.describeConfigs({ resources: [{ resourceType: 2, resourceName: 'plt-topic', configurationKeys: ['segment.bytes'] }] });
    assert.equal(configs[0]!.configs[0]!.value, '1048576');
    await admin.deleteTopics({ topics: ['plt-topic'] });
    assert.ok(!(await admin.listTopics()).includes('plt-topic'));
    assert.equal(b.broker.services.metadata.topic('plt-topic'), undefined);
  } finally {
    await admin.close();
  }
});

test('confluent-kafka AdminClient: create_topics, describe_configs, list_topics, delete_topics', async (t) => {
  if (!requirePeer(t, 'python3-confluent-kafka')) return;
  const script = `
import sys, json
from confluent_kafka.admin import AdminClient, NewTopic, ConfigResource
a = AdminClient({'bootstrap.servers': sys.argv[1]})
out = {}
fs = a.create_topics([NewTopic('py-topic', 3, 1, config={'cleanup.policy': 'compact', 'min.insync.replicas': '1'}),
                      NewTopic('py-bad', 1, 1, config={'no.such': 'x'})], operation_timeout=10)
for name, f in fs.items():
    try:
        f.result(); out['create:' + name] = 'ok'
    except Exception as e:
        out['create:' + name] = e.args[0].name()
res = a.describe_configs([ConfigResource('topic', 'py-topic')])
for r, f in res.items():
    cfg = f.result()
    out['cleanup.policy'] = [cfg['cleanup.policy'].value, int(cfg['cleanup.policy'].source)]
    out['retention.ms'] = [cfg['retention.ms'].value, int(cfg['retention.ms'].source)]
for r, f in a.describe_configs([ConfigResource('broker', '0')]).items():
    cfg = f.result()
    out['broker:num.partitions'] = [cfg['num.partitions'].value, int(cfg['num.partitions'].source), cfg['num.partitions'].is_read_only]
md = a.list_topics(timeout=10)
out['partitions'] = len(md.topics['py-topic'].partitions)
for name, f in a.delete_topics(['py-topic'], operation_timeout=10).items():
    f.result()
out['after_delete'] = 'py-topic' in a.list_topics(timeout=10).topics
print(json.dumps(out))
`;
  const r = await run(PYTHON, ['-c', script, b.bootstrap], { timeoutMs: 60000 });
  assert.equal(r.code, 0, r.stderr);
  const out = JSON.parse(r.stdout) as Record<string, unknown>;
  assert.equal(out['create:py-topic'], 'ok');
  assert.equal(out['create:py-bad'], 'INVALID_CONFIG');
  assert.deepEqual(out['cleanup.policy'], ['compact', 1]);
  assert.deepEqual(out['retention.ms'], ['604800000', 5]);
  assert.equal(out.partitions, 3);
  assert.deepEqual(out['broker:num.partitions'], ['1', 5, true]);
  assert.equal(out.after_delete, false);
});

test('kcat -L sees a created topic and stops seeing it once deleted', async (t) => {
  if (!requirePeer(t, 'kcat')) return;
  const admin = kafkajsAdmin();
  await admin.connect();
  try {
    await admin.createTopics({ topics: [{ topic: 'kcat-admin', numPartitions: 4 }] });
    let r = await run('kcat', ['-b', b.bootstrap, '-L', '-m', '10']);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /topic "kcat-admin" with 4 partitions:/);
    await admin.deleteTopics({ topics: ['kcat-admin'] });
    r = await run('kcat', ['-b', b.bootstrap, '-L', '-m', '10']);
    assert.equal(r.code, 0, r.stderr);
    assert.doesNotMatch(r.stdout, /kcat-admin/);
  } finally {
    await admin.disconnect();
  }
});
