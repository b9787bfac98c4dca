/**
 * Client instances without a broker, on a clock of the test's: matching (every selector, several
 * subscriptions merged: their metrics united, the lowest interval, `*` alone), a change of the
 * subscriptions re-matching known instances, Get and push throttling over time, and expiry.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { encodeMetricsData } from '../../../src/protocol/otlp/index.js';
import { ErrorCode } from '../../../src/protocol/errors.js';
import { ZERO_UUID } from '../../../src/protocol/primitives/index.js';
import { ClientTelemetry, type ClientIdentity } from '../../../src/server/telemetry/client-instances.js';
import {
  ClientMetricsResources,
  subscriptionNameOf,
  ZkClientMetricsBackend,
  type ClientMetricsBackend,
} from '../../../src/server/telemetry/client-metrics-resources.js';
import { silentLogger } from '../../../src/server/logger.js';

function memoryBackend(initial: Record<string, Record<string, string>> = {}): ClientMetricsBackend {
  const m = new Map(Object.entries(initial));
  return {
    loadAll: async () => new Map(m),
    load: async (name) => m.get(name) ?? {},
    store: async (name, configs) => {
      m.set(name, configs);
    },
  };
}

const sink = { record: () => {}, forget: () => {} };
const who = (over: Partial<ClientIdentity> = {}): ClientIdentity => ({
  clientId: 'app',
  softwareName: 'apache-kafka-java',
  softwareVersion: '3.9.1',
  sourceAddress: '127.0.0.1',
  sourcePort: 50000,
  ...over,
});

test('matching: every selector, subscriptions merged, * alone', async () => {
  const resources = await ClientMetricsResources.open(
    memoryBackend({
      java: { metrics: 'org.apache.kafka.producer.', 'interval.ms': '60000', match: 'client_software_name=apache-kafka-java,client_software_version=3\\..*' },
      local: { metrics: 'org.apache.kafka.consumer.', 'interval.ms': '30000', match: 'client_source_address=127\\.0\\.0\\.1,client_source_port=5000.' },
      byId: { metrics: 'app.', match: 'client_id=app' },
    }),
  );
  const t = new ClientTelemetry(resources, { telemetryMaxBytes: 1000, sink, logger: silentLogger() });
  const all = t.getSubscriptions(ZERO_UUID, who());
  assert.deepEqual(all.requestedMetrics, ['app.', 'org.apache.kafka.consumer.', 'org.apache.kafka.producer.']);
  assert.equal(all.pushIntervalMs, 30000);
  const other = t.getSubscriptions(ZERO_UUID, who({ clientId: 'app2', softwareName: 'librdkafka', sourcePort: 6000 }));
  assert.deepEqual([other.requestedMetrics, other.pushIntervalMs], [[], 300000], 'the regex must match the whole value');
  const noSoftware = t.getSubscriptions(ZERO_UUID, who({ softwareName: undefined, softwareVersion: undefined, sourcePort: 1 }));
  assert.deepEqual(noSoftware.requestedMetrics, ['app.'], 'a selector on an unknown value does not match');

  // By instance id, and `*` wins over prefixes.
  await resources.set('one', { metrics: '*', match: `client_instance_id=${noSoftware.clientInstanceId}` });
  const again = t.getSubscriptions(noSoftware.clientInstanceId, who({ softwareName: undefined, softwareVersion: undefined, sourcePort: 1 }));
  assert.equal(again.errorCode, ErrorCode.NONE, 'a re-matched instance is not throttled');
  assert.deepEqual(again.requestedMetrics, ['*']);
  assert.notEqual(again.subscriptionId, noSoftware.subscriptionId);
  assert.equal(again.clientInstanceId, noSoftware.clientInstanceId);
});

test('instances over time: throttling by the interval, expiry after 3 intervals (at least 60 s)', async () => {
  let now = 1_000_000;
  const forgotten: string[] = [];
  const recording = { record: () => {}, forget: (id: string) => forgotten.push(id) };
  const resources = await ClientMetricsResources.open(memoryBackend({ fast: { metrics: '*', 'interval.ms': '1000' } }));
  const t = new ClientTelemetry(resources, { telemetryMaxBytes: 1 << 20, sink: recording, logger: silentLogger(), now: () => now });
  const g = t.getSubscriptions(ZERO_UUID, who());
  assert.deepEqual([g.errorCode, g.pushIntervalMs, g.requestedMetrics], [ErrorCode.NONE, 1000, ['*']]);
  const pushOf = () => ({
    clientInstanceId: g.clientInstanceId,
    subscriptionId: g.subscriptionId,
    terminating: false,
    compressionType: 0,
    metrics: encodeMetricsData({ resourceMetrics: [] }),
  });
  assert.equal(await t.push(pushOf(), who()), ErrorCode.NONE, 'the push right after a Get');
  now += 999;
  assert.equal(await t.push(pushOf(), who()), ErrorCode.THROTTLING_QUOTA_EXCEEDED);
  now += 1;
  assert.equal(await t.push(pushOf(), who()), ErrorCode.NONE, 'one interval after the last push');
  assert.equal(t.getSubscriptions(g.clientInstanceId, who()).errorCode, ErrorCode.THROTTLING_QUOTA_EXCEEDED);
  now += 1000;
  assert.equal(t.getSubscriptions(g.clientInstanceId, who()).errorCode, ErrorCode.NONE);
  assert.equal(t.instanceCount, 1);
  now += 59_999;
  assert.equal(t.instanceCount, 1, 'kept for 60 s after its last request');
  now += 1;
  assert.equal(t.instanceCount, 0, 'expired');
  assert.deepEqual(forgotten, [g.clientInstanceId]);
});

test('ZooKeeper backend: a name is one URL-encoded znode under /config/client-metrics, read back whole on open', async () => {
  const znodes = new Map<string, Record<string, string>>([['legacy%zz', { metrics: '*' }]]);
  const zk = {
    getEntityConfigs: async (_type: 'client-metrics', name: string) => znodes.get(name) ?? {},
    setEntityConfigs: async (_type: 'client-metrics', name: string, configs: Record<string, string>) => {
      znodes.set(name, configs);
    },
    getConfigChildren: async (sub: string) => (sub === 'client-metrics' ? [...znodes.keys()] : []),
  };
  const first = await ClientMetricsResources.open(new ZkClientMetricsBackend(zk));
  await first.set('team a/all', { metrics: 'org.apache.kafka.' });
  assert.deepEqual(znodes.get('team%20a%2Fall'), { metrics: 'org.apache.kafka.' });
  const second = await ClientMetricsResources.open(new ZkClientMetricsBackend(zk));
  assert.deepEqual([...second.entries().keys()].sort(), ['legacy%zz', 'team a/all']);
  assert.equal(subscriptionNameOf('team%20a%2Fall'), 'team a/all');
});
