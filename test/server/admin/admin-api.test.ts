import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readdir } from 'node:fs/promises';
import { startTestBroker, type TestBroker } from '../../helpers/broker.js';
import { hostedConfig, partitionState } from '../../helpers/partition-state.js';
import { waitFor } from '../../helpers/wait-for.js';
import { shardsOf } from '../../../src/server/broker-services.js';
import { RawClient } from '../../helpers/raw-client.js';
import {
  AlterConfigsRequestCodec,
  AlterConfigsResponseCodec,
  CreatePartitionsRequestCodec,
  CreatePartitionsResponseCodec,
  CreateTopicsRequestCodec,
  CreateTopicsResponseCodec,
  DeleteRecordsRequestCodec,
  DeleteRecordsResponseCodec,
  DeleteTopicsRequestCodec,
  DeleteTopicsResponseCodec,
  DescribeConfigsRequestCodec,
  DescribeConfigsResponseCodec,
  DescribeLogDirsRequestCodec,
  DescribeLogDirsResponseCodec,
  IncrementalAlterConfigsRequestCodec,
  IncrementalAlterConfigsResponseCodec,
} from '../../../src/protocol/messages/index.js';
import type { CreatableTopic } from '../../../src/protocol/messages/19-create-topics.js';
import { ErrorCode } from '../../../src/protocol/errors.js';
import { ZERO_UUID, type Input } from '../../../src/protocol/primitives/index.js';
import { encodeBatch } from '../../../src/protocol/records/index.js';

let b: TestBroker;
let c: RawClient;
before(async () => {
  b = await startTestBroker({ 'log.retention.hours': '100' });
  c = await RawClient.connect(b.port);
});
after(async () => {
  c.close();
  await b.stop();
});

function createTopics(version: number, topics: Input<CreatableTopic>[], validateOnly = false) {
  return c.request(19, CreateTopicsRequestCodec, CreateTopicsResponseCodec, version, { topics, timeoutMs: 5000, validateOnly });
}
function describeConfigs(version: number, resourceType: number, resourceName: string, keys: string[] | null = null) {
  return c.request(32, DescribeConfigsRequestCodec, DescribeConfigsResponseCodec, version, {
    resources: [{ resourceType, resourceName, configurationKeys: keys }],
    includeSynonyms: true,
    includeDocumentation: true,
  });
}

test('CreateTopics v7 creates with configs and returns partitions, RF, configs and topic id; logs exist', async () => {
  const res = await createTopics(7, [{ name: 'orders', numPartitions: 3, replicationFactor: -1, configs: [{ name: 'retention.ms', value: '3600000' }] }]);
  const t = res.topics[0]!;
  assert.equal(t.errorCode, ErrorCode.NONE);
  assert.equal(t.numPartitions, 3);
  assert.equal(t.replicationFactor, 1);
  assert.notEqual(t.topicId, ZERO_UUID);
  assert.equal(t.topicId, b.broker.services.metadata.topic('orders')!.topicId);
  const retention = t.configs!.find((x) => x.name === 'retention.ms')!;
  assert.deepEqual([retention.value, retention.configSource], ['3600000', 1]);
  const segment = t.configs!.find((x) => x.name === 'segment.bytes')!;
  assert.deepEqual([segment.value, segment.configSource], ['1073741824', 5]);
  for (let p = 0; p < 3; p++) assert.ok(await partitionState(b, 'orders', p), `partition ${p} open`);
  assert.equal((await hostedConfig(b, 'orders', 0)).retentionMs, 3600000);
});

test('CreateTopics per-topic errors with Kafka codes and messages', async () => {
  const res = await createTopics(4, [
    { name: 'orders', numPartitions: 1, replicationFactor: 1 },
    { name: 'bad/name', numPartitions: 1, replicationFactor: 1 },
    { name: 'zero', numPartitions: 0, replicationFactor: 1 },
    { name: 'rf3', numPartitions: 1, replicationFactor: 3 },
    { name: 'cfg', numPartitions: 1, replicationFactor: 1, configs: [{ name: 'no.such.config', value: '1' }] },
    { name: 'cfgval', numPartitions: 1, replicationFactor: 1, configs: [{ name: 'retention.ms', value: 'soon' }] },
    { name: 'assign', numPartitions: -1, replicationFactor: -1, assignments: [{ partitionIndex: 0, brokerIds: [7] }] },
    { name: 'gap', numPartitions: -1, replicationFactor: -1, assignments: [{ partitionIndex: 1, brokerIds: [0] }] },
    { name: 'both', numPartitions: 2, replicationFactor: -1, assignments: [{ partitionIndex: 0, brokerIds: [0] }] },
    { name: 'dup', numPartitions: 1, replicationFactor: 1 },
    { name: 'dup', numPartitions: 1, replicationFactor: 1 },
  ]);
  const byName = new Map(res.topics.map((t) => [t.name, t]));
  assert.equal(res.topics.length, 10);
  const expect: [string, number, string | RegExp][] = [
    ['orders', ErrorCode.TOPIC_ALREADY_EXISTS, "Topic 'orders' already exists."],
    ['bad/name', ErrorCode.INVALID_TOPIC_EXCEPTION, /illegal/],
    ['zero', ErrorCode.INVALID_PARTITIONS, 'Number of partitions was set to an invalid non-positive value.'],
    ['rf3', ErrorCode.INVALID_REPLICATION_FACTOR, /only 1 broker\(s\) are registered/],
    ['cfg', ErrorCode.INVALID_CONFIG, 'Unknown topic config name: no.such.config'],
    ['cfgval', ErrorCode.INVALID_CONFIG, 'Invalid value soon for configuration retention.ms: Not a number of type LONG'],
    ['assign', ErrorCode.INVALID_REPLICA_ASSIGNMENT, /broker 7, but no such broker/],
    ['gap', ErrorCode.INVALID_REPLICA_ASSIGNMENT, /consecutive/],
    ['both', ErrorCode.INVALID_REQUEST, /Both numPartitions/],
    ['dup', ErrorCode.INVALID_REQUEST, 'Found multiple entries for this topic.'],
  ];
  for (const [name, code, message] of expect) {
    const t = byName.get(name)!;
    assert.equal(t.errorCode, code, name);
    if (typeof message === 'string') assert.equal(t.errorMessage, message, name);
    else assert.match(t.errorMessage!, message, name);
  }
  for (const name of ['zero', 'rf3', 'cfg', 'cfgval', 'assign', 'gap', 'both', 'dup']) assert.equal(b.broker.services.metadata.topic(name), undefined);
});

test("CreateTopics refuses a name colliding through '.'/'_', and validateOnly creates nothing", async () => {
  await createTopics(3, [{ name: 'a.b', numPartitions: 1, replicationFactor: 1 }]);
  const res = await createTopics(3, [{ name: 'a_b', numPartitions: 1, replicationFactor: 1 }]);
  assert.equal(res.topics[0]!.errorCode, ErrorCode.INVALID_TOPIC_EXCEPTION);
  assert.match(res.topics[0]!.errorMessage!, /collides with existing topic: a\.b/);
  const v = await createTopics(7, [{ name: 'dry', numPartitions: 2, replicationFactor: 1 }], true);
  assert.equal(v.topics[0]!.errorCode, ErrorCode.NONE);
  assert.equal(v.topics[0]!.numPartitions, 2);
  assert.equal(v.topics[0]!.topicId, ZERO_UUID);
  assert.equal(b.broker.services.metadata.topic('dry'), undefined);
  // v0 has no error messages but the code still arrives.
  const v0 = await createTopics(0, [{ name: 'a.b', numPartitions: 1, replicationFactor: 1 }]);
  assert.equal(v0.topics[0]!.errorCode, ErrorCode.TOPIC_ALREADY_EXISTS);
});

test('CreateTopics with an explicit assignment and default partition count', async () => {
  const res = await createTopics(5, [
    {
      name: 'manual',
      numPartitions: -1,
      replicationFactor: -1,
      assignments: [
        { partitionIndex: 1, brokerIds: [0] },
        { partitionIndex: 0, brokerIds: [0] },
      ],
    },
    { name: 'defaults', numPartitions: -1, replicationFactor: -1 },
  ]);
  assert.deepEqual(
    res.topics.map((t) => [t.errorCode, t.numPartitions, t.replicationFactor]),
    [
      [0, 2, 1],
      [0, 1, 1],
    ],
  );
});

test('CreatePartitions grows a topic; decreasing or equal is INVALID_PARTITIONS; validateOnly changes nothing', async () => {
  await createTopics(4, [{ name: 'grow', numPartitions: 1, replicationFactor: 1 }]);
  const req = (topics: { name: string; count: number; assignments: { brokerIds: number[] }[] | null }[], validateOnly = false) =>
    c.request(37, CreatePartitionsRequestCodec, CreatePartitionsResponseCodec, 3, { topics, timeoutMs: 5000, validateOnly });
  let res = await req([{ name: 'grow', count: 4, assignments: null }], true);
  assert.equal(res.results[0]!.errorCode, ErrorCode.NONE);
  assert.equal(b.broker.services.metadata.topic('grow')!.partitions.length, 1);
  res = await req([{ name: 'grow', count: 3, assignments: [{ brokerIds: [0] }, { brokerIds: [0] }] }]);
  assert.equal(res.results[0]!.errorCode, ErrorCode.NONE);
  assert.equal(b.broker.services.metadata.topic('grow')!.partitions.length, 3);
  assert.ok(await partitionState(b, 'grow', 2), 'the new partition is open');
  res = await req([
    { name: 'grow', count: 2, assignments: null },
    { name: 'nope', count: 2, assignments: null },
  ]);
  assert.equal(res.results[0]!.errorCode, ErrorCode.INVALID_PARTITIONS);
  assert.equal(res.results[0]!.errorMessage, 'Topic currently has 3 partitions, which is higher than the requested 2.');
  assert.equal(res.results[1]!.errorCode, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
  res = await req([{ name: 'grow', count: 3, assignments: null }]);
  assert.equal(res.results[0]!.errorCode, ErrorCode.INVALID_PARTITIONS);
  res = await req([{ name: 'grow', count: 5, assignments: [{ brokerIds: [0] }] }]);
  assert.equal(res.results[0]!.errorCode, ErrorCode.INVALID_REPLICA_ASSIGNMENT);
});

test('DescribeConfigs TOPIC: values, sources, synonyms, types, documentation; unknown topic', async () => {
  const res = await describeConfigs(4, 2, 'orders');
  const r = res.results[0]!;
  assert.equal(r.errorCode, ErrorCode.NONE);
  const get = (n: string) => r.configs.find((x) => x.name === n)!;
  assert.equal(get('retention.ms').value, '3600000');
  assert.equal(get('retention.ms').configSource, 1);
  assert.deepEqual(
    get('retention.ms').synonyms.map((s) => [s.name, s.value, s.source]),
    // Kafka drops the synonyms before the first log.retention.ms: log.retention.hours is not listed.
    [['retention.ms', '3600000', 1]],
  );
  assert.equal(get('cleanup.policy').configType, 7);
  assert.equal(get('cleanup.policy').configSource, 5);
  assert.ok(get('segment.ms').documentation!.length > 0);
  const some = await describeConfigs(1, 2, 'orders', ['cleanup.policy', 'nonsense']);
  assert.deepEqual(
    some.results[0]!.configs.map((x) => x.name),
    ['cleanup.policy'],
  );
  const v0 = await describeConfigs(0, 2, 'orders', ['retention.ms']);
  assert.equal(v0.results[0]!.configs[0]!.isDefault, false);
  const unknown = await describeConfigs(4, 2, 'missing-topic');
  assert.equal(unknown.results[0]!.errorCode, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
});

test('DescribeConfigs BROKER and BROKER_LOGGER; another broker id is INVALID_REQUEST', async () => {
  const res = await describeConfigs(4, 4, '0', ['log.retention.hours', 'broker.id', 'num.partitions']);
  const get = (n: string) => res.results[0]!.configs.find((x) => x.name === n)!;
  assert.deepEqual([get('log.retention.hours').value, get('log.retention.hours').configSource, get('log.retention.hours').readOnly], ['100', 4, false]);
  assert.equal(get('broker.id').readOnly, true);
  assert.deepEqual([get('num.partitions').value, get('num.partitions').configSource], ['1', 5]);
  const other = await describeConfigs(4, 4, '3');
  assert.equal(other.results[0]!.errorCode, ErrorCode.INVALID_REQUEST);
  assert.match(other.results[0]!.errorMessage!, /Unexpected broker id, expected 0 or empty string, but received 3/);
  const logger = await describeConfigs(4, 8, '0');
  assert.equal(logger.results[0]!.errorCode, ErrorCode.NONE);
  assert.equal(logger.results[0]!.configs[0]!.name, 'root');
});

test('AlterConfigs replaces topic overrides and applies them to the live logs', async () => {
  const alter = (configs: { name: string; value: string | null }[], validateOnly = false) =>
    c.request(33, AlterConfigsRequestCodec, AlterConfigsResponseCodec, 2, { resources: [{ resourceType: 2, resourceName: 'orders', configs }], validateOnly });
  let res = await alter([{ name: 'segment.bytes', value: '1048576' }], true);
  assert.equal(res.responses[0]!.errorCode, ErrorCode.NONE);
  assert.deepEqual(b.broker.services.metadata.topic('orders')!.configs, { 'retention.ms': '3600000' });
  res = await alter([{ name: 'segment.bytes', value: '1048576' }]);
  assert.equal(res.responses[0]!.errorCode, ErrorCode.NONE);
  assert.deepEqual(b.broker.services.metadata.topic('orders')!.configs, { 'segment.bytes': '1048576' });
  const config = await hostedConfig(b, 'orders', 1);
  assert.equal(config.segmentBytes, 1048576);
  assert.equal(config.retentionMs, 100 * 3600000, 'retention falls back to the broker default');
  res = await alter([{ name: 'segment.bytes', value: '1' }]);
  assert.equal(res.responses[0]!.errorCode, ErrorCode.INVALID_CONFIG);
  assert.match(res.responses[0]!.errorMessage!, /Value must be at least 14/);
});

test('IncrementalAlterConfigs on a topic: SET, DELETE, APPEND, SUBTRACT', async () => {
  const inc = (configs: { name: string; configOperation: number; value: string | null }[]) =>
    c.request(44, IncrementalAlterConfigsRequestCodec, IncrementalAlterConfigsResponseCodec, 1, {
      resources: [{ resourceType: 2, resourceName: 'orders', configs }],
      validateOnly: false,
    });
  let res = await inc([
    { name: 'cleanup.policy', configOperation: 2, value: 'compact' },
    { name: 'segment.bytes', configOperation: 1, value: null },
    { name: 'max.message.bytes', configOperation: 0, value: '5000' },
  ]);
  assert.equal(res.responses[0]!.errorCode, ErrorCode.NONE);
  assert.deepEqual(b.broker.services.metadata.topic('orders')!.configs, { 'cleanup.policy': 'delete,compact', 'max.message.bytes': '5000' });
  const config = await hostedConfig(b, 'orders', 0);
  assert.deepEqual(config.cleanupPolicy, ['delete', 'compact']);
  assert.equal(config.maxMessageBytes, 5000);
  res = await inc([{ name: 'cleanup.policy', configOperation: 3, value: 'delete' }]);
  assert.deepEqual(b.broker.services.metadata.topic('orders')!.configs, { 'cleanup.policy': 'compact', 'max.message.bytes': '5000' });
  res = await inc([{ name: 'retention.ms', configOperation: 2, value: '5' }]);
  assert.equal(res.responses[0]!.errorCode, ErrorCode.INVALID_CONFIG);
  res = await inc([{ name: 'bogus', configOperation: 0, value: '5' }]);
  assert.equal(res.responses[0]!.errorMessage, 'Unknown topic config name: bogus');
});

test('dynamic broker configs: allowed keys change topic defaults live; static keys are refused', async () => {
  const inc = (name: string, configs: { name: string; configOperation: number; value: string | null }[]) =>
    c.request(44, IncrementalAlterConfigsRequestCodec, IncrementalAlterConfigsResponseCodec, 1, {
      resources: [{ resourceType: 4, resourceName: name, configs }],
      validateOnly: false,
    });
  let res = await inc('0', [{ name: 'broker.id', configOperation: 0, value: '5' }]);
  assert.equal(res.responses[0]!.errorCode, ErrorCode.INVALID_REQUEST);
  assert.match(res.responses[0]!.errorMessage!, /Cannot update these configs dynamically: Set\(broker.id\)/);
  res = await inc('', [{ name: 'log.retention.ms', configOperation: 0, value: '777000' }]);
  assert.equal(res.responses[0]!.errorCode, ErrorCode.NONE);
  // A dynamic broker default reaches shard workers' logs after the answer (PartitionAccess.reconfigure is not awaited): wait for it.
  const retentionOf = async (partition: number) => (await hostedConfig(b, 'grow', partition)).retentionMs;
  await waitFor('grow-0 takes the dynamic log.retention.ms', 10_000, async () => (await retentionOf(0)) === 777000);
  const d = await describeConfigs(4, 2, 'grow', ['retention.ms']);
  assert.deepEqual([d.results[0]!.configs[0]!.value, d.results[0]!.configs[0]!.configSource], ['777000', 3]);
  const dflt = await describeConfigs(4, 4, '');
  assert.deepEqual(
    dflt.results[0]!.configs.map((x) => [x.name, x.value]),
    [['log.retention.ms', '777000']],
  );
  // A partition created later gets the dynamic default too, not just the static one.
  const grown = await c.request(37, CreatePartitionsRequestCodec, CreatePartitionsResponseCodec, 3, {
    topics: [{ name: 'grow', count: 4, assignments: null }],
    timeoutMs: 5000,
    validateOnly: false,
  });
  assert.equal(grown.results[0]!.errorCode, ErrorCode.NONE);
  assert.equal(await retentionOf(3), 777000);
  res = await inc('', [{ name: 'log.retention.ms', configOperation: 1, value: null }]);
  await waitFor('grow-0 falls back to the static log.retention.hours', 10_000, async () => (await retentionOf(0)) === 100 * 3600000);
});

test('DeleteRecords moves the log start; -1 means the high watermark; beyond it is OFFSET_OUT_OF_RANGE', async () => {
  await createTopics(4, [{ name: 'recs', numPartitions: 1, replicationFactor: 1 }]);
  for (let i = 0; i < 5; i++) {
    const batch = encodeBatch({
      records: [{ attributes: 0, timestampDelta: 0, offsetDelta: 0, key: null, value: Buffer.from(`v${i}`), headers: [] }],
      baseTimestamp: BigInt(Date.now()),
    });
    // Appended by the partition's owner (a shard worker at num.io.threads > 1), as a Produce is.
    const [r] = await shardsOf(b.broker.services).produce([{ topic: 'recs', partition: 0, records: batch }], {
      requiredAcks: -1,
      origin: 'client',
      produceVersion: 9,
      timeoutMs: 5000,
    });
    assert.deepEqual([r!.errorCode, r!.baseOffset], [0, i]);
  }
  const del = (partitions: { partitionIndex: number; offset: bigint }[], name = 'recs') =>
    c.request(21, DeleteRecordsRequestCodec, DeleteRecordsResponseCodec, 2, { topics: [{ name, partitions }], timeoutMs: 5000 });
  let res = await del([{ partitionIndex: 0, offset: 2n }]);
  assert.deepEqual([res.topics[0]!.partitions[0]!.errorCode, res.topics[0]!.partitions[0]!.lowWatermark], [0, 2n]);
  assert.equal((await partitionState(b, 'recs', 0))?.logStartOffset, 2);
  res = await del([{ partitionIndex: 0, offset: 9n }]);
  assert.equal(res.topics[0]!.partitions[0]!.errorCode, ErrorCode.OFFSET_OUT_OF_RANGE);
  res = await del([
    { partitionIndex: 0, offset: -1n },
    { partitionIndex: 4, offset: 0n },
  ]);
  assert.deepEqual(
    res.topics[0]!.partitions.map((x) => [x.errorCode, x.lowWatermark]),
    [
      [0, 5n],
      [ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, -1n],
    ],
  );
  res = await del([{ partitionIndex: 0, offset: 0n }], 'nope');
  assert.equal(res.topics[0]!.partitions[0]!.errorCode, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
});

test('DescribeLogDirs lists partitions with sizes; v4 has volume sizes', async () => {
  const all = await c.request(35, DescribeLogDirsRequestCodec, DescribeLogDirsResponseCodec, 4, { topics: null });
  assert.equal(all.results.length, 1);
  const dir = all.results[0]!;
  assert.equal(dir.errorCode, 0);
  assert.ok(dir.totalBytes > 0n && dir.usableBytes > 0n && dir.usableBytes <= dir.totalBytes);
  const orders = dir.topics.find((t) => t.name === 'orders')!;
  assert.deepEqual(
    orders.partitions.map((p) => p.partitionIndex),
    [0, 1, 2],
  );
  const one = await c.request(35, DescribeLogDirsRequestCodec, DescribeLogDirsResponseCodec, 1, { topics: [{ topic: 'recs', partitions: [0] }] });
  assert.deepEqual(
    one.results[0]!.topics.map((t) => t.name),
    ['recs'],
  );
  // Every record of 'recs' was deleted above, so its segments are gone.
  assert.equal(one.results[0]!.topics[0]!.partitions[0]!.partitionSize, 0n);
  assert.equal(one.results[0]!.totalBytes, -1n, 'v1 has no volume sizes');
});

test('DeleteTopics by name (v1) and by id (v6) removes metadata and log directories', async () => {
  await createTopics(4, [
    { name: 'doomed', numPartitions: 2, replicationFactor: 1 },
    { name: 'doomed2', numPartitions: 1, replicationFactor: 1 },
  ]);
  const id2 = b.broker.services.metadata.topic('doomed2')!.topicId;
  let res = await c.request(20, DeleteTopicsRequestCodec, DeleteTopicsResponseCodec, 1, { topicNames: ['doomed', 'ghost'], timeoutMs: 5000 });
  assert.deepEqual(
    res.responses.map((r) => [r.name, r.errorCode]),
    [
      ['doomed', 0],
      ['ghost', ErrorCode.UNKNOWN_TOPIC_OR_PARTITION],
    ],
  );
  assert.equal(b.broker.services.metadata.topic('doomed'), undefined);
  assert.equal(await partitionState(b, 'doomed', 0), undefined, 'no shard hosts it any more');
  const live = (await readdir(b.dir)).filter((n) => n.startsWith('doomed-') && !n.endsWith('-delete'));
  assert.deepEqual(live, []);
  res = await c.request(20, DeleteTopicsRequestCodec, DeleteTopicsResponseCodec, 6, {
    topics: [
      { name: null, topicId: id2 },
      { name: null, topicId: 'AAAAAAAAAAAAAAAAAAAAAQ' },
      { name: null, topicId: ZERO_UUID },
    ],
    timeoutMs: 5000,
  });
  assert.deepEqual(
    res.responses.map((r) => [r.name, r.errorCode]),
    [
      ['doomed2', 0],
      [null, ErrorCode.UNKNOWN_TOPIC_ID],
      [null, ErrorCode.INVALID_REQUEST],
    ],
  );
});

test('internal topics cannot be deleted', async () => {
  await b.broker.services.metadata.createTopic({ name: '__consumer_offsets', numPartitions: 1, replicationFactor: 1 });
  const res = await c.request(20, DeleteTopicsRequestCodec, DeleteTopicsResponseCodec, 5, { topicNames: ['__consumer_offsets'], timeoutMs: 5000 });
  assert.equal(res.responses[0]!.errorCode, ErrorCode.INVALID_TOPIC_EXCEPTION);
  assert.match(res.responses[0]!.errorMessage!, /internal topic/);
  assert.ok(b.broker.services.metadata.topic('__consumer_offsets'));
});

test('delete.topic.enable=false answers TOPIC_DELETION_DISABLED', async () => {
  const nb = await startTestBroker({ 'delete.topic.enable': 'false' });
  const nc = await RawClient.connect(nb.port);
  try {
    await nc.request(19, CreateTopicsRequestCodec, CreateTopicsResponseCodec, 4, {
      topics: [{ name: 'keep', numPartitions: 1, replicationFactor: 1 }],
      timeoutMs: 1000,
    });
    const res = await nc.request(20, DeleteTopicsRequestCodec, DeleteTopicsResponseCodec, 4, { topicNames: ['keep'], timeoutMs: 1000 });
    assert.equal(res.responses[0]!.errorCode, ErrorCode.TOPIC_DELETION_DISABLED);
    assert.ok(nb.broker.services.metadata.topic('keep'));
  } finally {
    nc.close();
    await nb.stop();
  }
});
