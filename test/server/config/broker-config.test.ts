import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import {
  BROKER_CONFIG_DEFS, ConfigError, defaultBrokerConfig, describeBrokerConfigs, loadBrokerConfig, topicConfigDefaults,
} from '../../../src/server/config/index.js';

function collectingWarn(): { warn: (msg: string) => void; messages: string[] } {
  const messages: string[] = [];
  return { warn: (msg) => messages.push(msg), messages };
}

test('defaults follow Kafka (with Fjord broker.id and log dir)', () => {
  const c = defaultBrokerConfig();
  assert.equal(c.brokerId, 0);
  assert.deepEqual(c.listeners, [{ name: 'PLAINTEXT', host: '127.0.0.1', port: 9092, securityProtocol: 'PLAINTEXT' }]);
  assert.deepEqual(c.advertisedListeners, c.listeners);
  assert.deepEqual(c.logDirs, ['./data/kafka-logs']);
  assert.equal(c.zookeeperConnect, null);
  assert.equal(c.zookeeperSessionTimeoutMs, 18000);
  assert.equal(c.zookeeperConnectionTimeoutMs, 18000);
  assert.equal(c.numPartitions, 1);
  assert.equal(c.defaultReplicationFactor, 1);
  assert.equal(c.autoCreateTopicsEnable, true);
  assert.equal(c.deleteTopicEnable, true);
  assert.equal(c.socketRequestMaxBytes, 104857600);
  assert.equal(c.connectionsMaxIdleMs, 600000);
  assert.equal(c.maxConnections, 2147483647);
  assert.equal(c.maxConnectionsPerIp, 2147483647);
  assert.equal(c.queuedMaxRequests, 500);
  assert.equal(c.queuedMaxRequestBytes, 268435456); // Fjord: 256 MiB (Kafka: -1, unbounded)
  assert.equal(c.socketRequestReceiveTimeoutMs, 30000);
  assert.equal(c.messageMaxBytes, 1048588);
  assert.equal(c.logSegmentBytes, 1073741824);
  assert.equal(c.logRollMs, 168 * 3600000);
  assert.equal(c.logRetentionMs, 168 * 3600000);
  assert.equal(c.logRetentionBytes, -1);
  assert.deepEqual(c.logCleanupPolicy, ['delete']);
  assert.equal(c.logCleanerMinCleanableRatio, 0.5);
  assert.equal(c.logMessageTimestampType, 'CreateTime');
  assert.equal(c.offsetsTopicNumPartitions, 50);
  assert.equal(c.offsetsTopicReplicationFactor, 3);
  assert.equal(c.offsetsRetentionMinutes, 10080);
  assert.equal(c.offsetsRetentionCheckIntervalMs, 600000);
  assert.equal(c.offsetMetadataMaxBytes, 4096);
  assert.equal(c.groupInitialRebalanceDelayMs, 3000);
  assert.equal(c.groupMinSessionTimeoutMs, 6000);
  assert.equal(c.groupMaxSessionTimeoutMs, 1800000);
  assert.equal(c.uncleanLeaderElectionEnable, false);
  assert.equal(c.controlledShutdownEnable, true);
  assert.ok(c.logFlushIntervalMessages >= 2 ** 62);
});

test('retention precedence: ms > minutes > hours; -1 and other negatives mean unlimited', () => {
  assert.equal(defaultBrokerConfig({ 'log.retention.hours': '1' }).logRetentionMs, 3600000);
  assert.equal(defaultBrokerConfig({ 'log.retention.hours': '1', 'log.retention.minutes': '2' }).logRetentionMs, 120000);
  assert.equal(defaultBrokerConfig({ 'log.retention.minutes': '2', 'log.retention.ms': '5' }).logRetentionMs, 5);
  assert.equal(defaultBrokerConfig({ 'log.retention.ms': '-1' }).logRetentionMs, -1);
  assert.equal(defaultBrokerConfig({ 'log.retention.hours': '-5' }).logRetentionMs, -1);
  assert.equal(defaultBrokerConfig({ 'log.roll.hours': '2' }).logRollMs, 7200000);
  assert.equal(defaultBrokerConfig({ 'log.roll.hours': '2', 'log.roll.ms': '1000' }).logRollMs, 1000);
});

test('aliases: log.dirs over log.dir, broker.id over node.id', () => {
  assert.deepEqual(defaultBrokerConfig({ 'log.dir': '/x' }).logDirs, ['/x']);
  assert.deepEqual(defaultBrokerConfig({ 'log.dir': '/x', 'log.dirs': '/a, /b' }).logDirs, ['/a', '/b']);
  assert.equal(defaultBrokerConfig({ 'node.id': '4' }).brokerId, 4);
  assert.equal(defaultBrokerConfig({ 'node.id': '4', 'broker.id': '2' }).brokerId, 2);
});

test('invalid values throw one clear line naming the key', () => {
  const cases: Array<[Record<string, string>, string]> = [
    [{ 'num.partitions': 'abc' }, 'Invalid value abc for configuration num.partitions: Not a number of type INT'],
    [{ 'num.partitions': '0' }, 'Invalid value 0 for configuration num.partitions: Value must be at least 1'],
    [{ 'num.partitions': '3000000000' }, 'Invalid value 3000000000 for configuration num.partitions: Not a number of type INT'],
    [{ 'log.retention.ms': '1.5' }, 'Invalid value 1.5 for configuration log.retention.ms: Not a number of type LONG'],
    [{ 'auto.create.topics.enable': 'yes' }, 'Invalid value yes for configuration auto.create.topics.enable: Expected value to be either true or false'],
    [{ 'log.cleaner.min.cleanable.ratio': 'x' }, 'Invalid value x for configuration log.cleaner.min.cleanable.ratio: Not a number of type DOUBLE'],
    [{ 'log.cleaner.min.cleanable.ratio': '2' }, 'Invalid value 2 for configuration log.cleaner.min.cleanable.ratio: Value must be no more than 1'],
    [{ 'log.cleanup.policy': 'delete,shred' }, 'Invalid value delete,shred for configuration log.cleanup.policy: String must be one of: delete, compact'],
    [{ 'log.message.timestamp.type': 'Now' }, 'Invalid value Now for configuration log.message.timestamp.type: String must be one of: CreateTime, LogAppendTime'],
  ];
  for (const [overrides, message] of cases) {
    assert.throws(() => defaultBrokerConfig(overrides), (err: unknown) => {
      assert.ok(err instanceof ConfigError);
      assert.equal(err.message, message);
      assert.ok(!err.message.includes('\n'));
      return true;
    });
  }
});

test('values are trimmed and booleans are case-insensitive', () => {
  const c = defaultBrokerConfig({ 'num.partitions': ' 7 ', 'auto.create.topics.enable': 'FALSE', 'log.cleanup.policy': 'compact , delete' });
  assert.equal(c.numPartitions, 7);
  assert.equal(c.autoCreateTopicsEnable, false);
  assert.deepEqual(c.logCleanupPolicy, ['compact', 'delete']);
});

test('an unknown key is warned about in one line; known no-effect keys are silent', () => {
  const sink = collectingWarn();
  defaultBrokerConfig({ 'no.such.key': '1', 'num.network.threads': '3', 'num.io.threads': '8' }, sink);
  assert.deepEqual(sink.messages, ['Unknown configuration no.such.key is ignored']);
});

test('empty zookeeper.connect means embedded mode', () => {
  assert.equal(defaultBrokerConfig({ 'zookeeper.connect': '' }).zookeeperConnect, null);
  const zk = defaultBrokerConfig({ 'zookeeper.connect': 'localhost:2181/fjord', 'zookeeper.session.timeout.ms': '9000' });
  assert.equal(zk.zookeeperConnect, 'localhost:2181/fjord');
  assert.equal(zk.zookeeperConnectionTimeoutMs, 9000);
});

test('listeners: SSL is refused with one line; advertised listeners must name a listener', () => {
  assert.throws(() => defaultBrokerConfig({ listeners: 'PLAINTEXT://:9092,SSL://:9093' }),
    { name: 'ConfigError', message: 'Listener SSL://:9093 uses security protocol SSL; Fjord supports PLAINTEXT and SASL_PLAINTEXT listeners' });
  assert.throws(() => defaultBrokerConfig({ listeners: 'PLAINTEXT://:9092', 'advertised.listeners': 'OTHER://h:1' }),
    { name: 'ConfigError', message: /OTHER is not one of the listeners/ });
  const c = defaultBrokerConfig({ listeners: 'PLAINTEXT://:9092', 'advertised.listeners': 'PLAINTEXT://broker1:19092' });
  assert.deepEqual(c.advertisedListeners, [{ name: 'PLAINTEXT', host: 'broker1', port: 19092, securityProtocol: 'PLAINTEXT' }]);
});

test('loadBrokerConfig reads a file and applies overrides last', async () => {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'fjord-config-'));
  try {
    const file = path.join(dir, 'server.properties');
    await fs.writeFile(file, '# test\nbroker.id=3\nnum.partitions=2\nlog.dirs=/data/a\n');
    const c = loadBrokerConfig(file, ['num.partitions=5', 'cluster.id=abc']);
    assert.equal(c.brokerId, 3);
    assert.equal(c.numPartitions, 5);
    assert.equal(c.clusterId, 'abc');
    assert.deepEqual(c.logDirs, ['/data/a']);
    assert.equal(c.raw.get('num.partitions'), '5');
    assert.throws(() => loadBrokerConfig(path.join(dir, 'missing.properties')),
      { name: 'ConfigError', message: /^Cannot read config file .*missing\.properties: no such file$/ });
  } finally {
    await fs.rm(dir, { recursive: true, force: true });
  }
});

test('the shipped config/server.properties loads without warnings', () => {
  const sink = collectingWarn();
  const c = loadBrokerConfig(path.join(import.meta.dirname, '../../../config/server.properties'), [], sink);
  assert.deepEqual(sink.messages, []);
  assert.equal(c.brokerId, 0);
  assert.equal(c.listeners[0]!.port, 9092);
});

test('every default in the table parses and validates', () => {
  for (const def of BROKER_CONFIG_DEFS) {
    if (def.default === null) continue;
    assert.doesNotThrow(() => defaultBrokerConfig({ [def.name]: def.default! }), def.name);
  }
});

test('describeBrokerConfigs reports the source of each value', () => {
  const c = defaultBrokerConfig({ 'num.partitions': '4' });
  const entries = describeBrokerConfigs(c);
  assert.equal(entries.length, BROKER_CONFIG_DEFS.length);
  const numPartitions = entries.find((e) => e.name === 'num.partitions')!;
  assert.equal(numPartitions.value, '4');
  assert.equal(numPartitions.source, 'STATIC_BROKER_CONFIG');
  assert.equal(numPartitions.sourceCode, 4);
  assert.equal(numPartitions.configType, 3);
  const segment = entries.find((e) => e.name === 'log.segment.bytes')!;
  assert.equal(segment.value, '1073741824');
  assert.equal(segment.source, 'DEFAULT_CONFIG');
  assert.equal(segment.isDefault, true);
  assert.deepEqual(describeBrokerConfigs(c, ['log.retention.hours', 'nope']).map((e) => e.name), ['log.retention.hours']);
});

test('topic config defaults derive from broker configs', () => {
  const t = topicConfigDefaults(defaultBrokerConfig({ 'log.retention.minutes': '10', 'message.max.bytes': '2000000' }));
  assert.equal(t.get('retention.ms'), '600000');
  assert.equal(t.get('max.message.bytes'), '2000000');
  assert.equal(t.get('cleanup.policy'), 'delete');
  assert.equal(t.get('flush.ms'), '9223372036854775807');
  assert.equal(t.get('segment.ms'), '604800000');
});

test('queued.max.request.bytes must be -1 (unbounded) or at least socket.request.max.bytes', () => {
  assert.equal(defaultBrokerConfig({ 'queued.max.request.bytes': '-1' }).queuedMaxRequestBytes, -1);
  assert.equal(defaultBrokerConfig({ 'queued.max.request.bytes': '104857600' }).queuedMaxRequestBytes, 104857600);
  assert.equal(defaultBrokerConfig({ 'queued.max.request.bytes': '2000', 'socket.request.max.bytes': '2000' }).queuedMaxRequestBytes, 2000);
  for (const value of ['104857599', '0']) {
    assert.throws(() => defaultBrokerConfig({ 'queued.max.request.bytes': value }), {
      name: 'ConfigError',
      message: `queued.max.request.bytes (${value}) must be -1 (unbounded) or at least socket.request.max.bytes (104857600)`,
    });
  }
  assert.throws(() => defaultBrokerConfig({ 'queued.max.request.bytes': '-2' }), { name: 'ConfigError' });
  assert.throws(() => defaultBrokerConfig({ 'socket.request.receive.timeout.ms': '-1' }), { name: 'ConfigError' });
});
