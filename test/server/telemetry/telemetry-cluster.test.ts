/**
 * KIP-714 subscriptions in cluster mode: stored as Kafka keeps them in ZooKeeper
 * (/config/client-metrics/<name>, a /config/changes notification per write), so a change made
 * through one broker reaches the other: it lists and describes it, re-matches its own clients,
 * and refuses their stale subscription id. Groups' configs (/config/groups/<group>) likewise.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { InprocCluster } from '../../helpers/inproc-cluster.js';
import { requirePeer } from '../../helpers/peers.js';
import { waitFor } from '../../helpers/cluster.js';
import { RawClient } from '../../helpers/raw-client.js';
import { Admin, type ConfigResourceType } from '../../../src/client/admin.js';
import {
  DescribeConfigsRequestCodec,
  DescribeConfigsResponseCodec,
  GetTelemetrySubscriptionsRequestCodec,
  GetTelemetrySubscriptionsResponseCodec,
  IncrementalAlterConfigsRequestCodec,
  IncrementalAlterConfigsResponseCodec,
  ListClientMetricsResourcesRequestCodec,
  ListClientMetricsResourcesResponseCodec,
  PushTelemetryRequestCodec,
  PushTelemetryResponseCodec,
} from '../../../src/protocol/messages/index.js';
import { ZERO_UUID } from '../../../src/protocol/primitives/index.js';

const CLIENT_METRICS = 16 as ConfigResourceType;

test('a client-metrics change made through one broker reaches the other', { timeout: 60_000 }, async (t) => {
  if (!requirePeer(t, 'zookeeper')) return;
  const c = await InprocCluster.start({ brokers: 2 });
  const admin = new Admin({ bootstrapServers: c.bootstrap([0]) });
  const client = await RawClient.connect(c.broker(1).port);
  t.after(async () => {
    client.close();
    await admin.close();
    await c.stop();
  });
  const names = async () =>
    (await client.request(74, ListClientMetricsResourcesRequestCodec, ListClientMetricsResourcesResponseCodec, 0, {})).clientMetricsResources.map(
      (r) => r.name,
    );
  const get = (id = ZERO_UUID) =>
    client.request(71, GetTelemetrySubscriptionsRequestCodec, GetTelemetrySubscriptionsResponseCodec, 0, { clientInstanceId: id });

  await admin.alterConfigs(CLIENT_METRICS, 'apps/all', [
    { name: 'metrics', op: 'set', value: 'org.apache.kafka.' },
    { name: 'interval.ms', op: 'set', value: '20000' },
  ]);
  await waitFor('broker 1 to list the subscription', 15_000, async () => (await names()).includes('apps/all'));
  const first = await get();
  assert.deepEqual([first.requestedMetrics, first.pushIntervalMs], [['org.apache.kafka.'], 20000]);

  // Kafka's znode, with the name encoded as one path segment.
  const node = await (await c.zk()).getIfExists('/config/client-metrics/apps%2Fall');
  assert.deepEqual(JSON.parse(node!.data.toString()), { version: 1, config: { metrics: 'org.apache.kafka.', 'interval.ms': '20000' } });

  await admin.alterConfigs(CLIENT_METRICS, 'apps/all', [{ name: 'interval.ms', op: 'set', value: '10000' }]);
  await waitFor('broker 1 to re-match its client', 15_000, async () => {
    const push = await client.request(72, PushTelemetryRequestCodec, PushTelemetryResponseCodec, 0, {
      clientInstanceId: first.clientInstanceId,
      subscriptionId: first.subscriptionId,
      terminating: false,
      compressionType: 0,
      metrics: Buffer.alloc(0),
    });
    // Before the change arrives the (empty) push is accepted; after, the old id is stale.
    return push.errorCode === 117;
  });
  const again = await get(first.clientInstanceId);
  assert.equal(again.errorCode, 0);
  assert.equal(again.pushIntervalMs, 10000);
  assert.notEqual(again.subscriptionId, first.subscriptionId);

  // Deleting every key deletes it everywhere.
  await admin.alterConfigs(CLIENT_METRICS, 'apps/all', [
    { name: 'metrics', op: 'delete' },
    { name: 'interval.ms', op: 'delete' },
  ]);
  await waitFor('broker 1 to drop the subscription', 15_000, async () => (await names()).length === 0);

  // Groups' configs (Kafka 4's GROUP config resource) travel the same way: /config/groups/<group>.
  const viaBroker0 = await RawClient.connect(c.broker(0).port);
  t.after(() => viaBroker0.close());
  const altered = await viaBroker0.request(44, IncrementalAlterConfigsRequestCodec, IncrementalAlterConfigsResponseCodec, 1, {
    resources: [{ resourceType: 32, resourceName: 'orders/eu', configs: [{ name: 'consumer.heartbeat.interval.ms', configOperation: 0, value: '6000' }] }],
    validateOnly: false,
  });
  assert.equal(altered.responses[0]!.errorCode, 0, altered.responses[0]!.errorMessage ?? '');
  const groupNode = await (await c.zk()).getIfExists('/config/groups/orders%2Feu');
  assert.deepEqual(JSON.parse(groupNode!.data.toString()), { version: 1, config: { 'consumer.heartbeat.interval.ms': '6000' } });
  await waitFor("broker 1 to describe the group's config", 15_000, async () => {
    const d = await client.request(32, DescribeConfigsRequestCodec, DescribeConfigsResponseCodec, 4, {
      resources: [{ resourceType: 32, resourceName: 'orders/eu', configurationKeys: ['consumer.heartbeat.interval.ms'] }],
      includeSynonyms: false,
      includeDocumentation: false,
    });
    return d.results[0]!.configs[0]?.value === '6000';
  });
});
