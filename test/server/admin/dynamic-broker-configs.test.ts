import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestBroker, type TestBroker } from '../../helpers/broker.js';
import { RawClient } from '../../helpers/raw-client.js';
import {
  AlterConfigsRequestCodec,
  AlterConfigsResponseCodec,
  DescribeConfigsRequestCodec,
  DescribeConfigsResponseCodec,
  IncrementalAlterConfigsRequestCodec,
  IncrementalAlterConfigsResponseCodec,
} from '../../../src/protocol/messages/index.js';
import { ErrorCode } from '../../../src/protocol/errors.js';
import { DYNAMIC_BROKER_KEYS } from '../../../src/config/dynamic-broker-keys.js';
import { configDef } from '../../../src/config/index.js';

let b: TestBroker;
let c: RawClient;
before(async () => {
  b = await startTestBroker();
  c = await RawClient.connect(b.port);
});
after(async () => {
  c.close();
  await b.stop();
});

const BROKER = 4;
const SET = 0;
const DYNAMIC_BROKER_CONFIG = 2;

function incremental(resourceName: string, configs: Record<string, string>, validateOnly = false) {
  return c.request(44, IncrementalAlterConfigsRequestCodec, IncrementalAlterConfigsResponseCodec, 1, {
    resources: [{ resourceType: BROKER, resourceName, configs: Object.entries(configs).map(([name, value]) => ({ name, configOperation: SET, value })) }],
    validateOnly,
  });
}

async function describe(keys: string[]) {
  const res = await c.request(32, DescribeConfigsRequestCodec, DescribeConfigsResponseCodec, 4, {
    resources: [{ resourceType: BROKER, resourceName: '0', configurationKeys: keys }],
    includeSynonyms: true,
    includeDocumentation: false,
  });
  return new Map(res.results[0]!.configs.map((e) => [e.name, e]));
}

test('a dynamic SASL key Kafka accepts (sasl.kerberos.min.time.before.relogin) is accepted by both APIs and described', async () => {
  let res = await incremental('0', { 'sasl.kerberos.min.time.before.relogin': '58000' });
  assert.equal(res.responses[0]!.errorCode, ErrorCode.NONE, res.responses[0]!.errorMessage ?? '');
  let d = (await describe(['sasl.kerberos.min.time.before.relogin'])).get('sasl.kerberos.min.time.before.relogin')!;
  assert.deepEqual([d.value, d.configSource, d.readOnly], ['58000', DYNAMIC_BROKER_CONFIG, false]);

  const legacy = await c.request(33, AlterConfigsRequestCodec, AlterConfigsResponseCodec, 1, {
    resources: [{ resourceType: BROKER, resourceName: '0', configs: [{ name: 'sasl.kerberos.min.time.before.relogin', value: '59000' }] }],
    validateOnly: false,
  });
  assert.equal(legacy.responses[0]!.errorCode, ErrorCode.NONE, legacy.responses[0]!.errorMessage ?? '');
  d = (await describe(['sasl.kerberos.min.time.before.relogin'])).get('sasl.kerberos.min.time.before.relogin')!;
  assert.equal(d.value, '59000');

  res = await incremental('0', { 'sasl.kerberos.min.time.before.relogin': 'soon' });
  assert.equal(res.responses[0]!.errorCode, ErrorCode.INVALID_REQUEST);
  assert.match(res.responses[0]!.errorMessage!, /sasl.kerberos.min.time.before.relogin/);
});

/** Kafka's SslConfigs.RECONFIGURABLE_CONFIGS: dynamic, but only in their per-listener form. */
const PER_LISTENER_ONLY = [
  'ssl.keystore.type',
  'ssl.keystore.location',
  'ssl.keystore.password',
  'ssl.key.password',
  'ssl.keystore.key',
  'ssl.keystore.certificate.chain',
  'ssl.truststore.type',
  'ssl.truststore.location',
  'ssl.truststore.password',
  'ssl.truststore.certificates',
];

test("the keystore and truststore keys change only per listener, with Kafka's message", async () => {
  for (const key of PER_LISTENER_ONLY) {
    const res = await incremental('0', { [key]: 'x' }, true);
    assert.equal(res.responses[0]!.errorCode, ErrorCode.INVALID_REQUEST, key);
    assert.equal(
      res.responses[0]!.errorMessage,
      `Invalid config value for resource ConfigResource(type=BROKER, name='0'): These security configs can be dynamically updated only per-listener using the listener prefix: Set(${key})`,
    );
    const prefixed = await incremental('0', { [`listener.name.ssl.${key}`]: key.endsWith('.type') ? 'PEM' : 'x' }, true);
    assert.equal(prefixed.responses[0]!.errorCode, ErrorCode.NONE, `listener.name.ssl.${key}: ${prefixed.responses[0]!.errorMessage}`);
  }
});

test('every other key Kafka 3.9 lists as a dynamic broker config is accepted (validateOnly) and described as not read-only', async () => {
  const refused: string[] = [];
  for (const key of [...DYNAMIC_BROKER_KEYS].filter((k) => !PER_LISTENER_ONLY.includes(k))) {
    const def = configDef(key);
    assert.ok(def, `${key} has a definition`);
    const value = def.default ?? (['int', 'long', 'short'].includes(def.type) ? '1' : 'x');
    const res = await incremental('0', { [key]: value }, true);
    if (res.responses[0]!.errorCode !== ErrorCode.NONE) refused.push(`${key}: ${res.responses[0]!.errorMessage}`);
  }
  assert.deepEqual(refused, []);
  const described = await describe([...DYNAMIC_BROKER_KEYS]);
  assert.deepEqual(
    [...DYNAMIC_BROKER_KEYS].filter((k) => described.get(k)?.readOnly !== false),
    [],
  );
  for (const k of ['ssl.keystore.location', 'listeners', 'metric.reporters', 'log.cleaner.io.buffer.size', 'remote.fetch.max.wait.ms']) {
    assert.ok(DYNAMIC_BROKER_KEYS.has(k), k);
  }
});

test('per-listener security keys are accepted, described (sensitive ones without value) and checked by type', async () => {
  const res = await incremental('0', {
    'listener.name.plaintext.ssl.keystore.location': '/etc/keys/broker.jks',
    'listener.name.external.scram-sha-256.sasl.jaas.config': 'org.apache.kafka.common.security.scram.ScramLoginModule required;',
    'listener.name.external.max.connections': '100',
  });
  assert.equal(res.responses[0]!.errorCode, ErrorCode.NONE, res.responses[0]!.errorMessage ?? '');
  const d = await describe([
    'listener.name.plaintext.ssl.keystore.location',
    'listener.name.external.scram-sha-256.sasl.jaas.config',
    'listener.name.external.max.connections',
  ]);
  assert.equal(d.get('listener.name.plaintext.ssl.keystore.location')?.value, '/etc/keys/broker.jks');
  assert.equal(d.get('listener.name.plaintext.ssl.keystore.location')?.configSource, DYNAMIC_BROKER_CONFIG);
  const jaas = d.get('listener.name.external.scram-sha-256.sasl.jaas.config')!;
  assert.deepEqual([jaas.value, jaas.isSensitive], [null, true]);
  assert.equal(d.get('listener.name.external.max.connections')?.value, '100');

  const bad = await incremental('0', { 'listener.name.external.max.connections': 'many' });
  assert.equal(bad.responses[0]!.errorCode, ErrorCode.INVALID_REQUEST);
});

test('keys the broker does not know are custom properties: stored, described (sensitive, no value), never applied; known static keys stay refused', async () => {
  // cleanup.policy is a topic key; the broker's is log.cleanup.policy. Kafka keeps it as a custom property.
  let res = await incremental('0', { 'cleanup.policy': 'compact', 'listener.name.external.no.such.key': '1' });
  assert.equal(res.responses[0]!.errorCode, ErrorCode.NONE, res.responses[0]!.errorMessage ?? '');
  const legacy = await c.request(33, AlterConfigsRequestCodec, AlterConfigsResponseCodec, 1, {
    resources: [{ resourceType: BROKER, resourceName: '', configs: [{ name: 'my.custom.key', value: 'x' }] }],
    validateOnly: false,
  });
  assert.equal(legacy.responses[0]!.errorCode, ErrorCode.NONE, legacy.responses[0]!.errorMessage ?? '');
  const d = await describe(['cleanup.policy', 'listener.name.external.no.such.key', 'my.custom.key']);
  const row = (n: string) => {
    const e = d.get(n)!;
    return [e.value, e.configSource, e.isSensitive, e.readOnly, e.synonyms.map((s) => [s.name, s.value, s.source])];
  };
  assert.deepEqual(row('cleanup.policy'), [null, DYNAMIC_BROKER_CONFIG, true, true, [['cleanup.policy', null, DYNAMIC_BROKER_CONFIG]]]);
  assert.deepEqual(row('my.custom.key'), [null, 3, true, true, [['my.custom.key', null, 3]]]);
  assert.equal(d.get('listener.name.external.no.such.key')?.configSource, DYNAMIC_BROKER_CONFIG);
  const all = await c.request(32, DescribeConfigsRequestCodec, DescribeConfigsResponseCodec, 4, {
    resources: [{ resourceType: BROKER, resourceName: '', configurationKeys: null }],
    includeSynonyms: true,
    includeDocumentation: false,
  });
  assert.deepEqual(
    all.results[0]!.configs.map((e) => [e.name, e.configSource]),
    [['my.custom.key', 3]],
  );
  // Not applied: a new topic still runs with the broker's delete policy.
  await b.broker.services.admin.topics.createTopic({ name: 'custom-props', numPartitions: 1, replicationFactor: 1, assignments: [], configs: [] }, false);
  assert.deepEqual(b.broker.services.admin.configs.logConfigFor('custom-props')?.cleanupPolicy, ['delete']);

  res = await incremental('0', { 'log.dirs': '/tmp/x' });
  assert.equal(res.responses[0]!.errorCode, ErrorCode.INVALID_REQUEST);
  assert.match(res.responses[0]!.errorMessage!, /Cannot update these configs dynamically: Set\(log.dirs\)/);
  // Listener, SSL and SASL keys are per broker: the cluster default refuses them, as Kafka.
  res = await incremental('', { 'sasl.enabled.mechanisms': 'PLAIN', 'max.connections': '100' });
  assert.equal(res.responses[0]!.errorCode, ErrorCode.INVALID_REQUEST);
  assert.equal(
    res.responses[0]!.errorMessage,
    "Invalid config value for resource ConfigResource(type=BROKER, name=''): Cannot update these configs at default cluster level, broker id must be specified: Set(sasl.enabled.mechanisms)",
  );
  res = await incremental('', { 'listener.name.external.max.connections': '100' });
  assert.equal(res.responses[0]!.errorCode, ErrorCode.NONE, 'max.connections is cluster-level, per listener too');
  res = await incremental('', { 'listener.name.external.ssl.keystore.type': 'PKCS12' });
  assert.equal(res.responses[0]!.errorCode, ErrorCode.INVALID_REQUEST);
  res = await incremental('0', { 'cleanup.policy': 'compact', 'log.cleanup.policy': 'squash' });
  assert.equal(res.responses[0]!.errorCode, ErrorCode.INVALID_REQUEST, 'a known key beside a custom one is still checked');
});

test("APPEND to a per-listener list key starts from the base key's default", async () => {
  const res = await c.request(44, IncrementalAlterConfigsRequestCodec, IncrementalAlterConfigsResponseCodec, 1, {
    resources: [
      { resourceType: BROKER, resourceName: '0', configs: [{ name: 'listener.name.external.sasl.enabled.mechanisms', configOperation: 2, value: 'PLAIN' }] },
    ],
    validateOnly: false,
  });
  assert.equal(res.responses[0]!.errorCode, ErrorCode.NONE, res.responses[0]!.errorMessage ?? '');
  const d = await describe(['listener.name.external.sasl.enabled.mechanisms']);
  assert.equal(d.get('listener.name.external.sasl.enabled.mechanisms')?.value, 'GSSAPI,PLAIN');
});
