/**
 * DescribeConfigs' source and synonyms for every topic config, and for the broker keys with
 * synonym chains, as Kafka 3.9 answers them (ConfigHelper.configSynonyms): sources walked in
 * precedence order over the whole chain, everything before the described key's own first entry
 * dropped, keys without a default never a DEFAULT_CONFIG synonym. Each expectation below is what
 * Kafka answers, written out by hand; two brokers: Fjord's defaults only, and the shipped
 * config/server.properties. A real client (kafkajs, includeSynonyms) reads the same.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import kafkajs from 'kafkajs';
import { startTestBroker, type TestBroker } from '../../helpers/broker.js';
import { RawClient } from '../../helpers/raw-client.js';
import {
  DescribeConfigsRequestCodec,
  DescribeConfigsResponseCodec,
  IncrementalAlterConfigsRequestCodec,
  IncrementalAlterConfigsResponseCodec,
} from '../../../src/protocol/messages/index.js';
import { parseProperties } from '../../../src/config/index.js';
import { TOPIC_CONFIG_DEFS } from '../../../src/config/topic-configs.js';

const { Kafka, ConfigResourceTypes, logLevel } = kafkajs;
const [TOPIC_CONFIG, DYNAMIC_BROKER, STATIC, DEFAULT] = [1, 2, 4, 5];
const LONG_MAX = '9223372036854775807';
type Synonym = [name: string, value: string | null, source: number];
/** Expected: value, source, synonyms. */
type Row = [value: string | null, source: number, synonyms: Synonym[]];
const dflt = (key: string, value: string): Row => [value, DEFAULT, [[key, value, DEFAULT]]];
const none = (value: string | null): Row => [value, DEFAULT, []];

/** Kafka 3.9 with no server.properties key set that a topic config derives from. */
const TOPIC_DEFAULTS: Record<string, Row> = {
  'cleanup.policy': dflt('log.cleanup.policy', 'delete'),
  'compression.type': dflt('compression.type', 'producer'),
  'delete.retention.ms': dflt('log.cleaner.delete.retention.ms', '86400000'),
  'file.delete.delay.ms': dflt('log.segment.delete.delay.ms', '60000'),
  'flush.messages': dflt('log.flush.interval.messages', LONG_MAX),
  // log.flush.interval.ms has no default: its fallback log.flush.scheduler.interval.ms is dropped.
  'flush.ms': none(LONG_MAX),
  'follower.replication.throttled.replicas': none(''),
  'index.interval.bytes': dflt('log.index.interval.bytes', '4096'),
  'leader.replication.throttled.replicas': none(''),
  'local.retention.bytes': dflt('log.local.retention.bytes', '-2'),
  'local.retention.ms': dflt('log.local.retention.ms', '-2'),
  'max.compaction.lag.ms': dflt('log.cleaner.max.compaction.lag.ms', LONG_MAX),
  'max.message.bytes': dflt('message.max.bytes', '1048588'),
  'message.downconversion.enable': dflt('log.message.downconversion.enable', 'true'),
  'message.format.version': dflt('log.message.format.version', '3.0-IV1'),
  'message.timestamp.after.max.ms': dflt('log.message.timestamp.after.max.ms', LONG_MAX),
  'message.timestamp.before.max.ms': dflt('log.message.timestamp.before.max.ms', LONG_MAX),
  'message.timestamp.difference.max.ms': dflt('log.message.timestamp.difference.max.ms', LONG_MAX),
  'message.timestamp.type': dflt('log.message.timestamp.type', 'CreateTime'),
  'min.cleanable.dirty.ratio': dflt('log.cleaner.min.cleanable.ratio', '0.5'),
  'min.compaction.lag.ms': dflt('log.cleaner.min.compaction.lag.ms', '0'),
  'min.insync.replicas': dflt('min.insync.replicas', '1'),
  preallocate: dflt('log.preallocate', 'false'),
  'remote.storage.enable': none('false'),
  'retention.bytes': dflt('log.retention.bytes', '-1'),
  // The case: log.retention.ms is set nowhere, so log.retention.hours=168 is not listed.
  'retention.ms': none('604800000'),
  'segment.bytes': dflt('log.segment.bytes', '1073741824'),
  'segment.index.bytes': dflt('log.index.size.max.bytes', '10485760'),
  'segment.jitter.ms': none('0'),
  'segment.ms': none('604800000'),
  'unclean.leader.election.enable': dflt('unclean.leader.election.enable', 'false'),
};

const stat = (key: string, value: string): Row => [
  value,
  STATIC,
  [
    [key, value, STATIC],
    [key, value, DEFAULT],
  ],
];
/** What the shipped config/server.properties changes (it sets these to Kafka's defaults). */
const TOPIC_SHIPPED: Record<string, Row> = {
  ...TOPIC_DEFAULTS,
  'cleanup.policy': stat('log.cleanup.policy', 'delete'),
  'max.message.bytes': stat('message.max.bytes', '1048588'),
  'segment.bytes': stat('log.segment.bytes', '1073741824'),
  // log.retention.hours=168 is set statically, but it is not log.retention.ms: still nothing listed.
  'retention.ms': none('604800000'),
};

/** Broker keys with synonym chains, on the broker resource. */
const BROKER_DEFAULTS: Record<string, Row> = {
  'log.retention.ms': none(null),
  'log.retention.minutes': none(null),
  'log.retention.hours': dflt('log.retention.hours', '168'),
  'log.roll.ms': none(null),
  'log.roll.hours': dflt('log.roll.hours', '168'),
  'log.roll.jitter.ms': none(null),
  'log.roll.jitter.hours': dflt('log.roll.jitter.hours', '0'),
  'log.flush.interval.ms': none(null),
  'log.flush.scheduler.interval.ms': dflt('log.flush.scheduler.interval.ms', LONG_MAX),
  'log.segment.bytes': dflt('log.segment.bytes', '1073741824'),
};
const BROKER_SHIPPED: Record<string, Row> = {
  ...BROKER_DEFAULTS,
  'log.retention.hours': stat('log.retention.hours', '168'),
  'log.segment.bytes': stat('log.segment.bytes', '1073741824'),
};

const shippedProps = parseProperties(readFileSync(new URL('../../../config/server.properties', import.meta.url), 'utf8'));

let plain: TestBroker;
let shipped: TestBroker;
before(async () => {
  plain = await startTestBroker();
  const props = Object.fromEntries([...shippedProps].filter(([k]) => !['listeners', 'log.dirs'].includes(k)));
  shipped = await startTestBroker(props);
  for (const b of [plain, shipped])
    await b.broker.services.admin.topics.createTopic({ name: 't', numPartitions: 1, replicationFactor: 1, assignments: [], configs: [] }, false);
});
after(async () => {
  await plain.stop();
  await shipped.stop();
});

async function describe(b: TestBroker, resourceType: number, resourceName: string, keys: string[] | null): Promise<Record<string, Row>> {
  const c = await RawClient.connect(b.port);
  try {
    const res = await c.request(32, DescribeConfigsRequestCodec, DescribeConfigsResponseCodec, 4, {
      resources: [{ resourceType, resourceName, configurationKeys: keys }],
      includeSynonyms: true,
      includeDocumentation: false,
    });
    assert.equal(res.results[0]!.errorCode, 0, res.results[0]!.errorMessage ?? '');
    return Object.fromEntries(
      res.results[0]!.configs.map((e) => [e.name, [e.value, e.configSource, e.synonyms.map((s): Synonym => [s.name, s.value, s.source])] as Row]),
    );
  } finally {
    c.close();
  }
}

test('the shipped server.properties sets the keys this table expects it to', () => {
  for (const [k, v] of Object.entries({
    'log.retention.hours': '168',
    'log.segment.bytes': '1073741824',
    'log.cleanup.policy': 'delete',
    'message.max.bytes': '1048588',
  })) {
    assert.equal(shippedProps.get(k), v, k);
  }
  for (const k of [
    'log.retention.ms',
    'log.retention.minutes',
    'log.roll.ms',
    'log.roll.hours',
    'log.flush.interval.ms',
    'compression.type',
    'min.insync.replicas',
  ]) {
    assert.equal(shippedProps.has(k), false, k);
  }
});

test('every topic config: value, source and synonyms as Kafka, with and without the shipped server.properties', async () => {
  assert.deepEqual(Object.keys(TOPIC_DEFAULTS).sort(), TOPIC_CONFIG_DEFS.map((d) => d.name).sort(), 'the table covers every topic config');
  assert.deepEqual(await describe(plain, 2, 't', null), TOPIC_DEFAULTS);
  assert.deepEqual(await describe(shipped, 2, 't', null), TOPIC_SHIPPED);
});

test('broker keys with synonym chains: value, source and synonyms as Kafka, with and without the shipped file', async () => {
  const keys = Object.keys(BROKER_DEFAULTS);
  assert.deepEqual(await describe(plain, 4, '0', keys), BROKER_DEFAULTS);
  assert.deepEqual(await describe(shipped, 4, '0', keys), BROKER_SHIPPED);
});

test('a dynamic log.retention.ms heads the chain; a topic override heads the topic list; kafkajs reads the same', async () => {
  const c = await RawClient.connect(shipped.port);
  const set = (value: string | null) =>
    c.request(44, IncrementalAlterConfigsRequestCodec, IncrementalAlterConfigsResponseCodec, 1, {
      resources: [{ resourceType: 4, resourceName: '0', configs: [{ name: 'log.retention.ms', configOperation: value === null ? 1 : 0, value }] }],
      validateOnly: false,
    });
  const kafka = new Kafka({ brokers: [shipped.bootstrap], logLevel: logLevel.NOTHING });
  const admin = kafka.admin();
  try {
    assert.equal((await set('5000')).responses[0]!.errorCode, 0);
    const hours168: Synonym[] = [
      ['log.retention.hours', '168', STATIC],
      ['log.retention.hours', '168', DEFAULT],
    ];
    const broker = await describe(shipped, 4, '0', ['log.retention.ms', 'log.retention.hours']);
    assert.deepEqual(broker['log.retention.ms'], ['5000', DYNAMIC_BROKER, [['log.retention.ms', '5000', DYNAMIC_BROKER], ...hours168]]);
    assert.deepEqual(broker['log.retention.hours'], ['168', STATIC, hours168], 'the dynamic log.retention.ms comes before hours: dropped');
    assert.deepEqual((await describe(shipped, 2, 't', ['retention.ms']))['retention.ms'], [
      '5000',
      DYNAMIC_BROKER,
      [['log.retention.ms', '5000', DYNAMIC_BROKER], ...hours168],
    ]);

    await admin.alterConfigs({
      validateOnly: false,
      resources: [{ type: ConfigResourceTypes.TOPIC, name: 't', configEntries: [{ name: 'retention.ms', value: '60000' }] }],
    });
    const described = await admin.describeConfigs({
      includeSynonyms: true,
      resources: [{ type: ConfigResourceTypes.TOPIC, name: 't', configNames: ['retention.ms', 'segment.ms', 'segment.bytes'] }],
    });
    const rows = Object.fromEntries(
      described.resources[0]!.configEntries.map((e) => [
        e.configName,
        [e.configValue, e.configSource, e.configSynonyms.map((s) => [s.configName, s.configValue, s.configSource])],
      ]),
    );
    assert.deepEqual(rows, {
      'retention.ms': ['60000', TOPIC_CONFIG, [['retention.ms', '60000', TOPIC_CONFIG], ['log.retention.ms', '5000', DYNAMIC_BROKER], ...hours168]],
      'segment.ms': ['604800000', DEFAULT, []],
      'segment.bytes': TOPIC_SHIPPED['segment.bytes'],
    });

    // A custom property on the broker through kafkajs (legacy AlterConfigs): kept, described sensitive.
    await admin.alterConfigs({
      validateOnly: false,
      resources: [{ type: ConfigResourceTypes.BROKER, name: '0', configEntries: [{ name: 'cleanup.policy', value: 'compact' }] }],
    });
    const broker0 = await admin.describeConfigs({
      includeSynonyms: true,
      resources: [{ type: ConfigResourceTypes.BROKER, name: '0', configNames: ['cleanup.policy'] }],
    });
    const custom = broker0.resources[0]!.configEntries.map((e) => [e.configName, e.configValue, e.configSource, e.isSensitive, e.readOnly]);
    assert.deepEqual(custom, [['cleanup.policy', null, DYNAMIC_BROKER, true, true]]);
  } finally {
    await set(null);
    await admin.disconnect();
    c.close();
  }
});
