/**
 * KIP-714 on one broker, over a socket with Fjord's protocol codecs: client-metrics subscriptions
 * through DescribeConfigs / IncrementalAlterConfigs / AlterConfigs / ListClientMetricsResources
 * (Kafka's validation and error codes, deletion, persistence across a restart), then
 * GetTelemetrySubscriptions and PushTelemetry as Kafka 4.0 answers them (new instance ids,
 * matching, throttling, stale subscription ids, compression, size, garbage, terminating pushes),
 * and the pushed metrics read back from the broker's metrics registry.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startTestBroker, type TestBroker } from '../../helpers/broker.js';
import { RawClient } from '../../helpers/raw-client.js';
import {
  AlterConfigsRequestCodec,
  AlterConfigsResponseCodec,
  ApiVersionsRequestCodec,
  ApiVersionsResponseCodec,
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
import { ErrorCode } from '../../../src/protocol/errors.js';
import { CompressionType } from '../../../src/protocol/records/batch-header.js';
import { compress } from '../../../src/protocol/records/compression/index.js';
import { encodeMetricsData, type MetricsData } from '../../../src/protocol/otlp/index.js';
import { Admin, type ConfigResourceType } from '../../../src/client/admin.js';
import { parsePromText, samples, value } from '../metrics/state-prom-text.js';

const CLIENT_METRICS = 16;
const UNKNOWN_SUBSCRIPTION_ID = 117;
const TELEMETRY_TOO_LARGE = 118;
const SET = 0;
const DELETE = 1;
const MAX_BYTES = 4096;

const METRICS: MetricsData = {
  resourceMetrics: [
    {
      scopeMetrics: [
        {
          metrics: [
            {
              name: 'org.apache.kafka.producer.record.queue.time.avg',
              data: { type: 'gauge', dataPoints: [{ attributes: [{ key: 'node.id', value: '1' }], startTimeUnixNano: 0n, timeUnixNano: 1n, value: 2.5 }] },
            },
            {
              name: 'org.apache.kafka.producer.record.sent',
              data: {
                type: 'sum',
                aggregationTemporality: 'delta',
                isMonotonic: true,
                dataPoints: [{ attributes: [], startTimeUnixNano: 0n, timeUnixNano: 1n, value: 7n }],
              },
            },
          ],
        },
      ],
    },
  ],
};

async function alter(c: RawClient, name: string, configs: { name: string; op: number; value: string | null }[], validateOnly = false) {
  const r = await c.request(44, IncrementalAlterConfigsRequestCodec, IncrementalAlterConfigsResponseCodec, 1, {
    resources: [{ resourceType: CLIENT_METRICS, resourceName: name, configs: configs.map((x) => ({ name: x.name, configOperation: x.op, value: x.value })) }],
    validateOnly,
  });
  return r.responses[0]!;
}

async function describe(c: RawClient, name: string) {
  const r = await c.request(32, DescribeConfigsRequestCodec, DescribeConfigsResponseCodec, 4, {
    resources: [{ resourceType: CLIENT_METRICS, resourceName: name, configurationKeys: null }],
    includeSynonyms: false,
    includeDocumentation: false,
  });
  return r.results[0]!;
}

async function list(c: RawClient): Promise<string[]> {
  const r = await c.request(74, ListClientMetricsResourcesRequestCodec, ListClientMetricsResourcesResponseCodec, 0, {});
  assert.equal(r.errorCode, ErrorCode.NONE);
  return r.clientMetricsResources.map((x) => x.name).sort();
}

function get(c: RawClient, clientInstanceId = ZERO_UUID) {
  return c.request(71, GetTelemetrySubscriptionsRequestCodec, GetTelemetrySubscriptionsResponseCodec, 0, { clientInstanceId });
}

async function push(
  c: RawClient,
  body: { clientInstanceId: string; subscriptionId: number; terminating?: boolean; compressionType?: number; metrics?: Buffer },
) {
  const r = await c.request(72, PushTelemetryRequestCodec, PushTelemetryResponseCodec, 0, {
    terminating: false,
    compressionType: CompressionType.None,
    metrics: Buffer.alloc(0),
    ...body,
  });
  return r.errorCode;
}

async function scrape(b: TestBroker) {
  return parsePromText(await b.broker.metrics.metrics());
}

test('KIP-714 on one broker: subscriptions, GetTelemetrySubscriptions, PushTelemetry, re-export', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'fjord-telemetry-'));
  let b = await startTestBroker({ 'telemetry.max.bytes': String(MAX_BYTES) }, dir);
  let c = await RawClient.connect(b.port);
  t.after(async () => {
    c.close();
    await b.stop();
    await rm(dir, { recursive: true, force: true });
  });

  await t.test('client-metrics resources: validated as Kafka 4.0 validates them', async () => {
    const refused = async (configs: { name: string; op: number; value: string | null }[], code: number, message: RegExp, name = 'bad') => {
      const r = await alter(c, name, configs);
      assert.equal(r.errorCode, code, `${JSON.stringify(configs)}: ${r.errorMessage}`);
      assert.match(r.errorMessage ?? '', message);
    };
    await refused([{ name: 'interval.ms', op: SET, value: '99' }], ErrorCode.INVALID_REQUEST, /interval must be between 100 and 3600000/);
    await refused([{ name: 'interval.ms', op: SET, value: '3600001' }], ErrorCode.INVALID_REQUEST, /interval must be between/);
    await refused([{ name: 'interval.ms', op: SET, value: 'soon' }], ErrorCode.INVALID_CONFIG, /Not a number of type INT/);
    await refused([{ name: 'color', op: SET, value: 'red' }], ErrorCode.INVALID_REQUEST, /Unknown client metrics configuration: color/);
    await refused([{ name: 'match', op: SET, value: 'client_color=red' }], ErrorCode.INVALID_CONFIG, /Illegal client matching pattern: client_color=red/);
    await refused([{ name: 'match', op: SET, value: 'client_id=(' }], ErrorCode.INVALID_CONFIG, /Illegal client matching pattern/);
    await refused([{ name: 'match', op: SET, value: 'client_id=a=b' }], ErrorCode.INVALID_CONFIG, /Illegal client matching pattern/);
    await refused([{ name: 'metrics', op: SET, value: '*' }], ErrorCode.INVALID_REQUEST, /Subscription name can't be empty/, '');
    assert.deepEqual(await list(c), [], 'nothing refused was stored');
    // validateOnly checks and stores nothing.
    assert.equal((await alter(c, 'dry', [{ name: 'metrics', op: SET, value: '*' }], true)).errorCode, ErrorCode.NONE);
    assert.deepEqual(await list(c), []);
  });

  await t.test('client-metrics resources: set, described, listed, appended, replaced, deleted', async () => {
    const r = await alter(c, 'producers', [
      { name: 'metrics', op: SET, value: 'org.apache.kafka.producer.' },
      { name: 'interval.ms', op: SET, value: '60000' },
      { name: 'match', op: SET, value: 'client_software_name=fjord-test.*, client_id=raw-.*' },
    ]);
    assert.equal(r.errorCode, ErrorCode.NONE, r.errorMessage ?? '');
    const d = await describe(c, 'producers');
    assert.equal(d.errorCode, ErrorCode.NONE);
    assert.deepEqual(d.configs.map((e) => [e.name, e.value, e.configSource]).sort(), [
      ['interval.ms', '60000', 7],
      ['match', 'client_software_name=fjord-test.*, client_id=raw-.*', 7],
      ['metrics', 'org.apache.kafka.producer.', 7],
    ]);
    // APPEND on a list key (IncrementalAlterConfigs op 2).
    assert.equal((await alter(c, 'producers', [{ name: 'metrics', op: 2, value: 'org.apache.kafka.consumer.' }])).errorCode, ErrorCode.NONE);
    assert.equal((await describe(c, 'producers')).configs.find((e) => e.name === 'metrics')?.value, 'org.apache.kafka.producer.,org.apache.kafka.consumer.');
    // Legacy AlterConfigs replaces every key.
    const legacy = await c.request(33, AlterConfigsRequestCodec, AlterConfigsResponseCodec, 2, {
      resources: [{ resourceType: CLIENT_METRICS, resourceName: 'gone', configs: [{ name: 'metrics', value: '*' }] }],
      validateOnly: false,
    });
    assert.equal(legacy.responses[0]!.errorCode, ErrorCode.NONE);
    assert.deepEqual(await list(c), ['gone', 'producers']);
    // Deleting every key deletes the resource.
    assert.equal((await alter(c, 'gone', [{ name: 'metrics', op: DELETE, value: null }])).errorCode, ErrorCode.NONE);
    assert.deepEqual(await list(c), ['producers']);
    assert.deepEqual((await describe(c, 'gone')).configs, []);
    // Fjord's admin client, as kafka-configs --entity-type client-metrics would use it.
    const admin = new Admin({ bootstrapServers: b.bootstrap });
    try {
      await admin.alterConfigs(CLIENT_METRICS as ConfigResourceType, 'all', [{ name: 'metrics', op: 'set', value: '*' }]);
      assert.deepEqual(
        (await admin.describeConfigs(CLIENT_METRICS as ConfigResourceType, 'all')).map((e) => [e.name, e.value]),
        [['metrics', '*']],
      );
      await admin.alterConfigs(CLIENT_METRICS as ConfigResourceType, 'all', [{ name: 'metrics', op: 'delete' }]);
    } finally {
      await admin.close();
    }
    assert.deepEqual(await list(c), ['producers']);
  });

  await t.test('subscriptions survive a restart', async () => {
    c.close();
    await b.stop({ keepDir: true });
    b = await startTestBroker({ 'telemetry.max.bytes': String(MAX_BYTES) }, dir);
    c = await RawClient.connect(b.port);
    assert.deepEqual(await list(c), ['producers']);
    assert.equal((await describe(c, 'producers')).configs.find((e) => e.name === 'interval.ms')?.value, '60000');
  });

  let instance = '';
  let subscriptionId = 0;
  await t.test('GetTelemetrySubscriptions: a new instance id, the matching subscription, Kafka 4.0 defaults', async () => {
    // No software name yet (no ApiVersions v3): the subscription's client_software_name does not match.
    const unmatched = await get(c);
    assert.equal(unmatched.errorCode, ErrorCode.NONE);
    assert.notEqual(unmatched.clientInstanceId, ZERO_UUID);
    assert.deepEqual(unmatched.requestedMetrics, []);
    assert.equal(unmatched.pushIntervalMs, 300000);

    const api = await c.request(18, ApiVersionsRequestCodec, ApiVersionsResponseCodec, 3, { clientSoftwareName: 'fjord-test', clientSoftwareVersion: '1.0' });
    for (const key of [71, 72, 74])
      assert.ok(
        api.apiKeys.some((k) => k.apiKey === key && k.maxVersion === 0),
        `API ${key} advertised`,
      );
    const g = await get(c);
    assert.equal(g.errorCode, ErrorCode.NONE);
    assert.notEqual(g.clientInstanceId, unmatched.clientInstanceId);
    assert.deepEqual(g.requestedMetrics, ['org.apache.kafka.consumer.', 'org.apache.kafka.producer.']);
    assert.equal(g.pushIntervalMs, 60000);
    assert.deepEqual(g.acceptedCompressionTypes, [4, 3, 1, 2]);
    assert.equal(g.telemetryMaxBytes, MAX_BYTES);
    assert.equal(g.deltaTemporality, true);
    assert.notEqual(g.subscriptionId, unmatched.subscriptionId);
    instance = g.clientInstanceId;
    subscriptionId = g.subscriptionId;
    // Asking again before the push interval is throttled.
    assert.equal((await get(c, instance)).errorCode, ErrorCode.THROTTLING_QUOTA_EXCEEDED);
  });

  await t.test('PushTelemetry: accepted after a Get, re-exported, then throttled', async () => {
    assert.equal(
      await push(c, {
        clientInstanceId: instance,
        subscriptionId,
        compressionType: CompressionType.Zstd,
        metrics: compress(CompressionType.Zstd, encodeMetricsData(METRICS)),
      }),
      ErrorCode.NONE,
    );
    const all = await scrape(b);
    const labels = { client_id: 'raw-client', client_instance_id: instance };
    assert.equal(value(all, 'org_apache_kafka_producer_record_queue_time_avg', { ...labels, node_id: '1' }), 2.5);
    assert.equal(value(all, 'org_apache_kafka_producer_record_sent', labels), 7);
    assert.ok(value(all, 'kafka_server_client_metrics_instance_count') >= 2);
    assert.match(await b.broker.metrics.metrics(), /# TYPE org_apache_kafka_producer_record_sent counter/);
    assert.equal(await push(c, { clientInstanceId: instance, subscriptionId }), ErrorCode.THROTTLING_QUOTA_EXCEEDED);
  });

  await t.test('PushTelemetry refusals: reserved id, stale subscription, compression, size, garbage', async () => {
    assert.equal(await push(c, { clientInstanceId: ZERO_UUID, subscriptionId }), ErrorCode.INVALID_REQUEST);
    const fresh = async () => {
      const g = await get(c);
      assert.equal(g.errorCode, ErrorCode.NONE);
      return { clientInstanceId: g.clientInstanceId, subscriptionId: g.subscriptionId };
    };
    // Each refusal on a fresh instance: a refused push uses up the push a Get allows, as in Kafka.
    let s = await fresh();
    assert.equal(await push(c, { ...s, subscriptionId: s.subscriptionId + 1 }), UNKNOWN_SUBSCRIPTION_ID);
    // After UNKNOWN_SUBSCRIPTION_ID (or UNSUPPORTED_COMPRESSION_TYPE) a Get is not throttled.
    assert.equal((await get(c, s.clientInstanceId)).errorCode, ErrorCode.NONE);
    s = await fresh();
    assert.equal(await push(c, { ...s, compressionType: 9, metrics: Buffer.from('x') }), ErrorCode.UNSUPPORTED_COMPRESSION_TYPE);
    assert.equal((await get(c, s.clientInstanceId)).errorCode, ErrorCode.NONE);
    s = await fresh();
    assert.equal(await push(c, { ...s, metrics: Buffer.from('not protobuf at all: \xff\xff\xff') }), ErrorCode.INVALID_RECORD);
    // Other errors leave a Get throttled.
    assert.equal((await get(c, s.clientInstanceId)).errorCode, ErrorCode.THROTTLING_QUOTA_EXCEEDED);
    s = await fresh();
    assert.equal(await push(c, { ...s, metrics: Buffer.alloc(MAX_BYTES + 1) }), TELEMETRY_TOO_LARGE);
    s = await fresh();
    // Small compressed, too large once decompressed.
    const bomb = compress(CompressionType.Gzip, Buffer.alloc(MAX_BYTES * 50));
    assert.ok(bomb.length < MAX_BYTES);
    assert.equal(await push(c, { ...s, compressionType: CompressionType.Gzip, metrics: bomb }), TELEMETRY_TOO_LARGE);
  });

  await t.test('a subscription change reaches the client: stale id refused, new id on the next Get', async () => {
    assert.equal((await alter(c, 'producers', [{ name: 'interval.ms', op: SET, value: '30000' }])).errorCode, ErrorCode.NONE);
    assert.equal(await push(c, { clientInstanceId: instance, subscriptionId }), UNKNOWN_SUBSCRIPTION_ID);
    const g = await get(c, instance);
    assert.equal(g.errorCode, ErrorCode.NONE);
    assert.equal(g.pushIntervalMs, 30000);
    assert.notEqual(g.subscriptionId, subscriptionId);
    subscriptionId = g.subscriptionId;
  });

  await t.test('a terminating push ends the instance: its series go, later pushes are refused', async () => {
    assert.equal(await push(c, { clientInstanceId: instance, subscriptionId, terminating: true }), ErrorCode.NONE);
    const all = await scrape(b);
    assert.deepEqual(samples(all, 'org_apache_kafka_producer_record_sent', { client_instance_id: instance }), []);
    assert.equal(await push(c, { clientInstanceId: instance, subscriptionId, terminating: true }), ErrorCode.INVALID_REQUEST);
  });
});
