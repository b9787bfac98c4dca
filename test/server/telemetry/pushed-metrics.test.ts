/**
 * The re-export of pushed client metrics, without a broker: OTLP names and attributes made
 * Prometheus names and labels, delta sums accumulated into counters, cumulative ones taken as
 * pushed, histograms, the series cap, a client's series gone after 3 push intervals; and the
 * exposition text the metrics endpoint writes (a pushed name equal to a broker family left out).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Metric, MetricsData } from '../../../src/protocol/otlp/index.js';
import { PushedMetrics, prometheusLabel, prometheusName } from '../../../src/server/telemetry/pushed-metrics.js';
import { familyText, registerClientTelemetryMetrics } from '../../../src/server/metrics/client-telemetry-metrics.js';
import { createMetricsRegistry } from '../../../src/server/metrics/registry.js';
import { ClientTelemetry } from '../../../src/server/telemetry/client-instances.js';
import { ClientMetricsResources, type ClientMetricsBackend } from '../../../src/server/telemetry/client-metrics-resources.js';
import { silentLogger } from '../../../src/server/logger.js';
import { parsePromText, samples, value } from '../metrics/state-prom-text.js';

const data = (...metrics: Metric[]): MetricsData => ({ resourceMetrics: [{ scopeMetrics: [{ metrics }] }] });
const sum = (name: string, v: number, temporality: 'delta' | 'cumulative', attrs: Record<string, string> = {}): Metric => ({
  name,
  data: {
    type: 'sum',
    aggregationTemporality: temporality,
    isMonotonic: true,
    dataPoints: [{ attributes: Object.entries(attrs).map(([key, value]) => ({ key, value })), startTimeUnixNano: 0n, timeUnixNano: 1n, value: v }],
  },
});
const client = (id: string) => ({ clientInstanceId: id, clientId: `app-${id}`, pushIntervalMs: 1000 });

test('names and labels: OTLP dots and other characters become underscores', () => {
  assert.equal(prometheusName('org.apache.kafka.producer.record.queue.time.avg'), 'org_apache_kafka_producer_record_queue_time_avg');
  assert.equal(prometheusName('1st-metric'), '_1st_metric');
  assert.equal(prometheusLabel('node.id'), 'node_id');
  assert.equal(prometheusLabel('__name'), '_name');
});

test('delta sums accumulate, cumulative ones replace; series go after 3 intervals or a forget', () => {
  const p = new PushedMetrics(100);
  p.record(client('a'), data(sum('sent', 5, 'delta'), sum('total', 10, 'cumulative')), 1000);
  p.record(client('a'), data(sum('sent', 3, 'delta'), sum('total', 12, 'cumulative')), 2000);
  const fams = new Map(p.families(2000).map((f) => [f.name, f]));
  assert.equal(fams.get('sent')?.type, 'counter');
  assert.equal(fams.get('sent')?.series[0]?.value, 8);
  assert.equal(fams.get('total')?.series[0]?.value, 12);
  assert.deepEqual(fams.get('sent')?.series[0]?.labels, [
    ['client_id', 'app-a'],
    ['client_instance_id', 'a'],
  ]);
  assert.equal(p.families(2000 + 3000).length, 2, 'kept until 3 intervals have passed');
  assert.equal(p.families(2000 + 3001).length, 0, 'gone after 3 intervals without a push');
  p.record(client('b'), data(sum('sent', 1, 'delta')), 10_000);
  p.forget('b');
  assert.equal(p.families(10_000).length, 0);
});

test('the series cap holds over all clients and counts what it dropped', () => {
  const p = new PushedMetrics(3);
  p.record(client('a'), data(sum('x', 1, 'delta', { k: '1' }), sum('x', 1, 'delta', { k: '2' })), 0);
  p.record(client('b'), data(sum('x', 1, 'delta', { k: '1' }), sum('x', 1, 'delta', { k: '2' })), 0);
  const series = p.families(0).flatMap((f) => f.series);
  assert.equal(series.length, 3);
  assert.equal(p.droppedSeries, 1);
  // A client's own series do not count against its next push.
  p.record(client('a'), data(sum('x', 1, 'delta', { k: '1' }), sum('x', 1, 'delta', { k: '2' })), 1);
  assert.equal(p.families(1).flatMap((f) => f.series).length, 3);
});

test('gauges, histograms and attributes in the exposition text', async () => {
  const p = new PushedMetrics(100);
  p.record(
    client('a'),
    data(
      {
        name: 'queue.time',
        description: 'queue "time"\nin ms',
        data: {
          type: 'gauge',
          dataPoints: [
            {
              attributes: [
                { key: 'topic.name', value: 'orders"x' },
                { key: 'client_id', value: 'spoof' },
              ],
              startTimeUnixNano: 0n,
              timeUnixNano: 1n,
              value: 1.5,
            },
          ],
        },
      },
      {
        name: 'latency',
        data: {
          type: 'histogram',
          aggregationTemporality: 'delta',
          dataPoints: [{ attributes: [], startTimeUnixNano: 0n, timeUnixNano: 1n, count: 3, sum: 12, bucketCounts: [1, 2, 0], explicitBounds: [1, 10] }],
        },
      },
      // Names the broker exports itself: a family, and a family's name with a sample suffix.
      {
        name: 'kafka.server.client.metrics.instance.count',
        data: { type: 'gauge', dataPoints: [{ attributes: [], startTimeUnixNano: 0n, timeUnixNano: 1n, value: 99 }] },
      },
      {
        name: 'kafka.server.client.metrics.instance.count.sum',
        data: { type: 'gauge', dataPoints: [{ attributes: [], startTimeUnixNano: 0n, timeUnixNano: 1n, value: 99 }] },
      },
    ),
    Date.now(),
  );
  const text = p.families(Date.now()).map(familyText).join('\n\n');
  assert.match(text, /# HELP queue_time queue "time"\\nin ms/);
  assert.match(text, /^queue_time\{client_id="app-a",client_instance_id="a",topic_name="orders\\"x"\} 1\.5$/m);
  assert.match(text, /^latency_bucket\{client_id="app-a",client_instance_id="a",le="10"\} 3$/m);
  assert.match(text, /^latency_bucket\{client_id="app-a",client_instance_id="a",le="\+Inf"\} 3$/m);
  assert.match(text, /^latency_sum\{client_id="app-a",client_instance_id="a"\} 12$/m);

  // On a registry: the broker's own family wins over a pushed one of the same name.
  const registry = createMetricsRegistry();
  const resources = await ClientMetricsResources.open(memoryBackend());
  const telemetry = new ClientTelemetry(resources, { telemetryMaxBytes: 1 << 20, sink: p, logger: silentLogger() });
  registerClientTelemetryMetrics(registry, telemetry, p);
  const all = parsePromText(await registry.metrics());
  assert.equal(value(all, 'kafka_server_client_metrics_instance_count'), 0);
  assert.deepEqual(samples(all, 'kafka_server_client_metrics_instance_count_sum'), []);
  assert.equal(value(all, 'queue_time', { client_instance_id: 'a' }), 1.5);
  assert.equal(value(all, 'fjord_client_telemetry_series_dropped_total'), 0);
});

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
