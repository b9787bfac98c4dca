/**
 * KIP-714 against another implementation's codecs: @platformatic/kafka's own
 * GetTelemetrySubscriptions, PushTelemetry and ListClientMetricsResources request writers and
 * response readers, over its own connection, against a Fjord broker with one subscription.
 * (None of the real clients here pushes telemetry by itself: librdkafka is 2.0.2, KIP-714 came
 * in 2.5; kafkajs and kafka-python have none; @platformatic/kafka has the APIs but no pusher.)
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import '../../helpers/promise-with-resolvers.js';
import { Connection, getTelemetrySubscriptionsV0, listClientMetricsResourcesV0, pushTelemetryV0 } from '@platformatic/kafka';
import { startTestBroker } from '../../helpers/broker.js';
import { Admin, type ConfigResourceType } from '../../../src/client/admin.js';
import { CompressionType } from '../../../src/protocol/records/batch-header.js';
import { compress } from '../../../src/protocol/records/compression/index.js';
import { encodeMetricsData } from '../../../src/protocol/otlp/index.js';
import { parsePromText, value } from '../metrics/state-prom-text.js';

test('@platformatic/kafka reads Fjord telemetry answers and pushes OTLP that Fjord re-exports', async (t) => {
  const b = await startTestBroker();
  const admin = new Admin({ bootstrapServers: b.bootstrap });
  const conn = new Connection('plt-telemetry');
  t.after(async () => {
    await conn.close();
    await admin.close();
    await b.stop();
  });
  await admin.alterConfigs(16 as ConfigResourceType, 'everything', [
    { name: 'metrics', op: 'set', value: '*' },
    { name: 'interval.ms', op: 'set', value: '1000' },
  ]);
  await conn.connect('127.0.0.1', b.port);

  const listed = await listClientMetricsResourcesV0.api.async(conn);
  assert.deepEqual(
    listed.configResources.map((r) => r.resourceName),
    ['everything'],
  );

  const sub = await getTelemetrySubscriptionsV0.api.async(conn, null);
  assert.equal(sub.errorCode, 0);
  assert.deepEqual(sub.requestedMetrics, ['*']);
  assert.equal(sub.pushIntervalMs, 1000);
  assert.deepEqual(sub.acceptedCompressionTypes, [4, 3, 1, 2]);
  assert.equal(sub.deltaTemporality, true);

  const payload = encodeMetricsData({
    resourceMetrics: [
      {
        scopeMetrics: [
          {
            metrics: [{ name: 'plt.gauge', data: { type: 'gauge', dataPoints: [{ attributes: [], startTimeUnixNano: 0n, timeUnixNano: 1n, value: 42n }] } }],
          },
        ],
      },
    ],
  });
  const pushed = await pushTelemetryV0.api.async(conn, sub.clientInstanceId, sub.subscriptionId, false, 3, compress(CompressionType.Lz4, payload));
  assert.equal(pushed.errorCode, 0);
  const all = parsePromText(await b.broker.metrics.metrics());
  assert.equal(value(all, 'plt_gauge', { client_id: 'plt-telemetry' }), 42);
});
