import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { BROKER_CONFIG_DEFS, ConfigError, describeBrokerConfigs, topicConfigDefaults } from '../../../src/config/index.js';
import { defaultBrokerConfig, loadBrokerConfig } from '../../../src/server/config/index.js';

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
    [
      { 'log.message.timestamp.type': 'Now' },
      'Invalid value Now for configuration log.message.timestamp.type: String must be one of: CreateTime, LogAppendTime',
    ],
  ];
  for (const [overrides, message] of cases) {
    assert.throws(
      () => defaultBrokerConfig(overrides),
      (err: unknown) => {
        assert.ok(err instanceof ConfigError);
        assert.equal(err.message, message);
        assert.ok(!err.message.includes('\n'));
        return true;
      },
    );
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

test('listeners: SSL without a key store is refused with one line; advertised listeners must name a listener', () => {
  assert.throws(() => defaultBrokerConfig({ listeners: 'PLAINTEXT://:9092,SSL://:9093' }), {
    name: 'ConfigError',
    message:
      'Listener SSL uses TLS but has no key store: set ssl.keystore.type=PEM and ssl.keystore.location (or ssl.keystore.key and ssl.keystore.certificate.chain)',
  });
  assert.throws(() => defaultBrokerConfig({ listeners: 'PLAINTEXT://:9092', 'advertised.listeners': 'OTHER://h:1' }), {
    name: 'ConfigError',
    message: /OTHER is not one of the listeners/,
  });
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
    assert.throws(() => loadBrokerConfig(path.join(dir, 'missing.properties')), {
      name: 'ConfigError',
      message: /^Cannot read config file .*missing\.properties: no such file$/,
    });
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
  assert.deepEqual(
    describeBrokerConfigs(c, ['log.retention.hours', 'nope']).map((e) => e.name),
    ['log.retention.hours'],
  );
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

test('TLS listeners: PEM key store file or inline PEM, listener.name.<l>. settings over plain ones, one-line errors', async () => {
  const { makeTestCerts } = await import('../../helpers/tls-certs.js');
  const certs = makeTestCerts();
  try {
    // SASL_SSL listeners also need a mechanism Fjord serves (Kafka's default, GSSAPI, is not).
    const pem = { 'ssl.keystore.type': 'PEM', 'ssl.keystore.location': certs.broker.keystore, 'sasl.enabled.mechanisms': 'SCRAM-SHA-256' };
    const c = defaultBrokerConfig(
      {
        listeners: 'PLAINTEXT://:0,INTERNAL://:0,EXTERNAL://:0',
        'listener.security.protocol.map': 'PLAINTEXT:PLAINTEXT,INTERNAL:SSL,EXTERNAL:SASL_SSL',
        ...pem,
        'ssl.client.auth': 'none',
        'listener.name.internal.ssl.client.auth': 'required',
        'listener.name.internal.ssl.truststore.type': 'PEM',
        'listener.name.internal.ssl.truststore.location': certs.caFile,
        'ssl.enabled.protocols': 'TLSv1.3',
      },
      collectingWarn(),
    );
    assert.deepEqual([...c.listenerTls.keys()], ['INTERNAL', 'EXTERNAL']);
    assert.equal(c.listenerTls.get('INTERNAL')!.clientAuth, 'required');
    assert.equal(c.listenerTls.get('EXTERNAL')!.clientAuth, 'none');
    // On SASL_SSL an unprefixed ssl.client.auth does not count (Kafka's KIP-684); the prefixed one does.
    const trust = { 'ssl.truststore.type': 'PEM', 'ssl.truststore.location': certs.caFile };
    const sasl = { listeners: 'SSL://:0,SASL_SSL://:0', ...pem, ...trust, 'ssl.client.auth': 'required' };
    assert.equal(defaultBrokerConfig(sasl).listenerTls.get('SASL_SSL')!.clientAuth, 'none');
    assert.equal(defaultBrokerConfig(sasl).listenerTls.get('SSL')!.clientAuth, 'required');
    assert.equal(defaultBrokerConfig({ ...sasl, 'listener.name.sasl_ssl.ssl.client.auth': 'requested' }).listenerTls.get('SASL_SSL')!.clientAuth, 'requested');
    assert.equal(c.listenerTls.get('EXTERNAL')!.minVersion, 'TLSv1.3');
    const sink = collectingWarn();
    const inline = defaultBrokerConfig(
      {
        listeners: 'SSL://:0',
        'ssl.keystore.type': 'PEM',
        'ssl.keystore.key': certs.broker.key,
        'ssl.keystore.certificate.chain': certs.broker.cert.replace(/\n/g, ' '),
      },
      sink,
    );
    assert.equal(inline.listenerTls.get('SSL')!.clientAuth, 'none');
    assert.deepEqual(sink.messages, []);

    const fails: Array<[Record<string, string>, RegExp]> = [
      [{ 'ssl.keystore.location': certs.broker.keystore }, /^Listener SSL: ssl\.keystore\.type JKS is not supported; use PEM \(or PKCS12\)$/],
      [{ ...pem, 'ssl.keystore.location': '/nonexistent/k.pem' }, /^Listener SSL: cannot read ssl\.keystore\.location \/nonexistent\/k\.pem: no such file$/],
      [{ ...pem, 'ssl.keystore.location': certs.caFile }, /must hold a PEM private key and its certificate chain$/],
      [{ ...pem, 'ssl.client.auth': 'required' }, /ssl\.client\.auth=required needs a trust store/],
      [{ ...pem, 'ssl.truststore.location': certs.caFile }, /ssl\.truststore\.type JKS is not supported; use ssl\.truststore\.type=PEM$/],
      [{ ...pem, 'ssl.enabled.protocols': 'SSLv3' }, /ssl\.enabled\.protocols \(SSLv3\) names none of/],
      [{ ...pem, 'ssl.protocol': 'TLSv1.2', 'ssl.enabled.protocols': 'TLSv1.3' }, /ssl\.protocol TLSv1\.2 allows none of ssl\.enabled\.protocols/],
      [{ ...pem, 'ssl.cipher.suites': 'NO_SUCH_SUITE' }, /ssl\.cipher\.suites matches no cipher suite$/],
      [{ ...pem, 'ssl.principal.mapping.rules': 'RULE:^CN=(.*)$/$1/X' }, /ssl\.principal\.mapping\.rules: Invalid rule/],
      [
        { ...pem, 'ssl.keystore.location': certs.client('enc', '/CN=enc', { keyPassword: 'secret' }).keystore, 'ssl.key.password': 'wrong' },
        /the private key cannot be decrypted \(check ssl\.key\.password\)$/,
      ],
    ];
    for (const [props, message] of fails) {
      assert.throws(
        () => defaultBrokerConfig({ listeners: 'SSL://:0', ...props }),
        (err: Error) => {
          assert.equal(err.name, 'ConfigError');
          assert.match(err.message, message);
          assert.ok(!err.message.includes('\n'), err.message);
          return true;
        },
      );
    }
    // PKCS12 key store with its password; a wrong password is one line.
    const { execFileSync } = await import('node:child_process');
    const p12 = `${certs.dir}/broker.p12`;
    execFileSync('openssl', ['pkcs12', '-export', '-inkey', certs.broker.keyFile, '-in', certs.broker.certFile, '-out', p12, '-passout', 'pass:storepw']);
    assert.ok(
      defaultBrokerConfig({
        listeners: 'SSL://:0',
        'ssl.keystore.type': 'PKCS12',
        'ssl.keystore.location': p12,
        'ssl.keystore.password': 'storepw',
      }).listenerTls.has('SSL'),
    );
    assert.throws(
      () => defaultBrokerConfig({ listeners: 'SSL://:0', 'ssl.keystore.type': 'PKCS12', 'ssl.keystore.location': p12, 'ssl.keystore.password': 'nope' }),
      {
        name: 'ConfigError',
        message: /^Listener SSL: invalid TLS key store, trust store or cipher suites: the PKCS12 key store cannot be opened \(check ssl\.keystore\.password\)$/,
      },
    );
    // The right password opens an encrypted key.
    assert.ok(
      defaultBrokerConfig({
        listeners: 'SSL://:0',
        ...pem,
        'ssl.keystore.location': certs.client('enc2', '/CN=enc2', { keyPassword: 'secret' }).keystore,
        'ssl.key.password': 'secret',
      }).listenerTls.has('SSL'),
    );
  } finally {
    certs.cleanup();
  }
});

test('inter-broker listener: inter.broker.listener.name, or the listener named by security.inter.broker.protocol, not both', () => {
  const l = {
    listeners: 'PLAINTEXT://:0,SASL_PLAINTEXT://:0',
    // The broker's own SASL login, needed once SASL_PLAINTEXT is the inter-broker listener.
    'sasl.enabled.mechanisms': 'PLAIN',
    'sasl.mechanism.inter.broker.protocol': 'PLAIN',
    'listener.name.sasl_plaintext.plain.sasl.jaas.config':
      'org.apache.kafka.common.security.plain.PlainLoginModule required username="broker" password="b-secret" user_broker="b-secret";',
  };
  assert.equal(defaultBrokerConfig(l).interBrokerListenerName, 'PLAINTEXT');
  assert.equal(defaultBrokerConfig({ ...l, 'security.inter.broker.protocol': 'SASL_PLAINTEXT' }).interBrokerListenerName, 'SASL_PLAINTEXT');
  assert.equal(defaultBrokerConfig({ ...l, 'security.inter.broker.protocol': 'SASL_PLAINTEXT' }).interBrokerSecurityProtocol, 'SASL_PLAINTEXT');
  assert.throws(
    () => defaultBrokerConfig({ ...l, 'security.inter.broker.protocol': 'SSL' }),
    /security\.inter\.broker\.protocol SSL needs a listener named SSL/,
  );
  assert.throws(
    () => defaultBrokerConfig({ ...l, 'security.inter.broker.protocol': 'PLAINTEXT', 'inter.broker.listener.name': 'PLAINTEXT' }),
    /^ConfigError: Only one of inter\.broker\.listener\.name and security\.inter\.broker\.protocol should be set\.$|Only one of/,
  );
});
