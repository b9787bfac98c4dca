/**
 * Without a broker: the metrics.* configuration (off by default; every invalid combination one
 * ConfigError line naming its key, never the password; --override sets metrics.listener like any
 * key; DescribeConfigs hides the passwords) and the readiness predicate of /health/ready with
 * fake cluster signals (registration, the controller's UpdateMetadata for this broker epoch,
 * hosted partitions against the controller's view).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildBrokerConfig, loadBrokerConfig } from '../../../src/server/config/index.js';
import { ConfigError } from '../../../src/config/errors.js';
import { configDef } from '../../../src/config/defs.js';
import { countOutOfSync, readinessOf, type ClusterSignals } from '../../../src/server/metrics/health.js';
import { makeTestCerts } from '../../helpers/tls-certs.js';

const config = (props: Record<string, string>) =>
  buildBrokerConfig(new Map(Object.entries({ listeners: 'PLAINTEXT://127.0.0.1:0', 'log.dirs': '/tmp/x', ...props })));

test('metrics.listener: off by default; http and https, any interface, IPv6, port 0; --override sets it', () => {
  assert.equal(config({}).metricsListener, null);
  assert.equal(config({ 'metrics.listener': '' }).metricsListener, null);
  assert.deepEqual(config({ 'metrics.listener': 'http://127.0.0.1:9404' }).metricsListener, {
    url: 'http://127.0.0.1:9404',
    scheme: 'http',
    host: '127.0.0.1',
    port: 9404,
  });
  assert.equal(config({ 'metrics.listener': 'http://:0' }).metricsListener?.host, '');
  assert.equal(config({ 'metrics.listener': 'http://[::1]:9404/' }).metricsListener?.host, '::1');
  const dir = mkdtempSync(join(tmpdir(), 'fjord-metrics-config-'));
  try {
    const file = join(dir, 'server.properties');
    writeFileSync(file, `log.dirs=${dir}\n#metrics.listener=http://127.0.0.1:9404\n`);
    assert.equal(loadBrokerConfig(file).metricsListener, null);
    const cfg = loadBrokerConfig(file, ['metrics.listener=http://0.0.0.0:9500', 'metrics.basic.auth.user=prom', 'metrics.basic.auth.password= s p ']);
    assert.equal(cfg.metricsListener?.port, 9500);
    assert.deepEqual(cfg.metricsListener?.basicAuth, { user: 'prom', password: ' s p ' });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  for (const key of ['metrics.basic.auth.password', 'metrics.ssl.keystore.password', 'metrics.ssl.key.password', 'metrics.ssl.truststore.password']) {
    assert.equal(configDef(key)?.type, 'password', key);
    assert.equal(configDef(key)?.sensitive, true, key);
  }
});

test('invalid metrics.* combinations: one ConfigError line naming the key, never the password', () => {
  const certs = makeTestCerts();
  try {
    const cases: [Record<string, string>, string, RegExp][] = [
      [
        { 'metrics.listener': '127.0.0.1:9404' },
        'metrics.listener',
        /^Invalid value 127\.0\.0\.1:9404 for configuration metrics\.listener: expected http:\/\/host:port/,
      ],
      [{ 'metrics.listener': 'ftp://h:1' }, 'metrics.listener', /expected http:\/\/host:port or https:\/\/host:port/],
      [{ 'metrics.listener': 'http://h' }, 'metrics.listener', /expected http/],
      [{ 'metrics.listener': 'http://h:70000' }, 'metrics.listener', /expected http/],
      [{ 'metrics.listener': 'http://h:1/metrics' }, 'metrics.listener', /expected http/],
      [
        { 'metrics.listener': 'https://127.0.0.1:0' },
        'metrics.ssl.keystore.location',
        /^metrics\.listener https:\/\/127\.0\.0\.1:0 is https but has no key store: set metrics\.ssl\.keystore\.location/,
      ],
      [
        { 'metrics.listener': 'http://h:1', 'metrics.basic.auth.user': 'prom' },
        'metrics.basic.auth.password',
        /^metrics\.basic\.auth\.user is set without metrics\.basic\.auth\.password$/,
      ],
      [
        { 'metrics.listener': 'http://h:1', 'metrics.basic.auth.password': 'hunter2' },
        'metrics.basic.auth.user',
        /^metrics\.basic\.auth\.password is set without metrics\.basic\.auth\.user$/,
      ],
      [
        { 'metrics.listener': 'http://h:1', 'metrics.ssl.keystore.location': certs.broker.keystore },
        'metrics.ssl.keystore.location',
        /is set but metrics\.listener http:\/\/h:1 is not https/,
      ],
      [
        { 'metrics.listener': 'https://h:1', 'metrics.ssl.keystore.location': '/nonexistent/ks.pem', 'metrics.ssl.keystore.type': 'PEM' },
        'metrics.ssl.keystore.location',
        /^Listener metrics\.listener: cannot read metrics\.ssl\.keystore\.location \/nonexistent\/ks\.pem: no such file$/,
      ],
      [
        { 'metrics.listener': 'https://h:1', 'metrics.ssl.keystore.location': certs.broker.keystore },
        'metrics.ssl.keystore.type',
        /metrics\.ssl\.keystore\.type JKS is not supported; use PEM \(or PKCS12\)/,
      ],
      [
        {
          'metrics.listener': 'https://h:1',
          'metrics.ssl.keystore.location': certs.broker.keystore,
          'metrics.ssl.keystore.type': 'PEM',
          'metrics.ssl.client.auth': 'required',
        },
        'metrics.ssl.truststore.location',
        /metrics\.ssl\.client\.auth=required needs a trust store/,
      ],
      [
        { 'metrics.listener': 'http://h:1', 'metrics.ssl.client.auth': 'always' },
        'metrics.ssl.client.auth',
        /^Invalid value always for configuration metrics\.ssl\.client\.auth/,
      ],
    ];
    for (const [props, key, message] of cases) {
      assert.throws(
        () => config({ 'metrics.basic.auth.password': '', ...props }),
        (err: unknown) => {
          assert.ok(err instanceof ConfigError, String(err));
          assert.equal(err.key, key, err.message);
          assert.match(err.message, message);
          assert.doesNotMatch(err.message, /\n|hunter2/);
          return true;
        },
        JSON.stringify(props),
      );
    }
    const ok = config({
      'metrics.listener': 'https://127.0.0.1:0',
      'metrics.ssl.keystore.type': 'PEM',
      'metrics.ssl.keystore.location': certs.broker.keystore,
      'metrics.ssl.truststore.type': 'PEM',
      'metrics.ssl.truststore.location': certs.caFile,
      'metrics.ssl.client.auth': 'requested',
    }).metricsListener;
    assert.equal(ok?.tls?.clientAuth, 'requested');
  } finally {
    certs.cleanup();
  }
});

/** Fake cluster signals: each field what the broker would report. */
function signals(s: { registered: boolean; epoch: bigint; umEpoch: bigint; behind: number }): ClusterSignals {
  return { registered: () => s.registered, brokerEpoch: () => s.epoch, updateMetadataBrokerEpoch: () => s.umEpoch, partitionsOutOfSync: () => s.behind };
}

test('readiness: embedded mode needs log recovery and start-up; cluster mode also the registration, the controller for this epoch, partitions in sync', () => {
  assert.deepEqual(readinessOf(false, false, undefined), { ready: false, missing: ['log recovery', 'start-up'] });
  assert.deepEqual(readinessOf(true, false, undefined), { ready: false, missing: ['start-up'] });
  assert.deepEqual(readinessOf(true, true, undefined), { ready: true, missing: [] });

  const s = { registered: false, epoch: -1n, umEpoch: -1n, behind: 3 };
  assert.deepEqual(readinessOf(true, true, signals(s)).missing, ['zookeeper registration']);
  s.registered = true; // in /brokers/ids, epoch not read yet
  assert.deepEqual(readinessOf(true, true, signals(s)).missing, ['zookeeper registration']);
  s.epoch = 100n;
  assert.deepEqual(readinessOf(true, true, signals(s)).missing, ['controller metadata']);
  s.umEpoch = 100n;
  assert.deepEqual(readinessOf(true, true, signals(s)).missing, ['partitions in sync (3 not yet)']);
  s.behind = 0;
  assert.deepEqual(readinessOf(true, true, signals(s)), { ready: true, missing: [] });
  // Re-registered after a session expiry: a new epoch, the controller's word for the old one does not count.
  s.epoch = 250n;
  assert.deepEqual(readinessOf(true, true, signals(s)).missing, ['controller metadata']);
  s.registered = false;
  assert.deepEqual(readinessOf(true, true, signals(s)).missing, ['zookeeper registration']);
});

test('partitions in sync: each partition of the view with this broker as a replica is hosted at its leader epoch or later', () => {
  const view = [
    {
      name: 'a',
      partitions: [
        { partition: 0, leaderEpoch: 3, replicas: [1, 2] },
        { partition: 1, leaderEpoch: 5, replicas: [2, 3] },
        { partition: 2, leaderEpoch: 0, replicas: [3, 1] },
      ],
    },
    { name: 'b', partitions: [{ partition: 0, leaderEpoch: 7, replicas: [1] }] },
  ];
  const hosted = new Map<string, number>();
  const epochOf = (t: string, p: number): number | undefined => hosted.get(`${t}-${p}`);
  assert.equal(countOutOfSync(1, view, epochOf), 3);
  assert.equal(countOutOfSync(9, view, epochOf), 0, 'a broker with no replica is in sync');
  hosted.set('a-0', 2); // an older epoch: its LeaderAndIsr not applied yet
  hosted.set('a-2', 0);
  hosted.set('b-0', 8); // later than the view: the view's UpdateMetadata lags the LeaderAndIsr
  assert.equal(countOutOfSync(1, view, epochOf), 1);
  hosted.set('a-0', 3);
  assert.equal(countOutOfSync(1, view, epochOf), 0);
});
