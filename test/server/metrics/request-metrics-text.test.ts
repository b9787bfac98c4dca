/**
 * The request metrics write their own exposition text (stats-families.ts, preformattedStats and
 * formatSamples) instead of prom-client's per-line label code: the text must be exactly what
 * prom-client's registry writes for the same families, escaping and special values included.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Registry } from 'prom-client';
import { createMetricsRegistry } from '../../../src/server/metrics/registry.js';
import { RequestStats } from '../../../src/server/metrics/request-stats.js';
import { registerRequestMetrics } from '../../../src/server/metrics/request-metrics.js';
import { preformattedStats, type Sample } from '../../../src/server/metrics/stats-families.js';

/** The same families' text as prom-client writes it: a plain Registry holding the same metric objects. */
async function promClientText(registry: Registry): Promise<string> {
  const plain = new Registry();
  for (const m of registry.getMetricsAsArray()) plain.registerMetric(m as unknown as Parameters<Registry['registerMetric']>[0]);
  return plain.metrics();
}

test('request metrics: the text written directly is the text prom-client writes', async () => {
  const registry = createMetricsRegistry();
  const stats = new RequestStats();
  stats.nameApis(
    new Map([
      [0, { name: 'Produce' }],
      [1, { name: 'Fetch' }],
      [3, { name: 'Metadata' }],
      [9, { name: 'Odd "name"\\ with\nnewline' }],
    ]),
  );
  const t0 = 1_000_000;
  registerRequestMetrics(registry, stats, () => t0);
  for (let i = 0; i < 50; i++) {
    stats.handled(0, 0.02 * i, 0.3, 0);
    stats.requestDone(0, 9, 0, 0.01, 0.02, 0.005, 0.4 * i, 1200, 80);
    stats.countErrors(0, { responses: [{ partitionResponses: [{ errorCode: i % 3 === 0 ? 6 : 0 }] }] });
  }
  stats.handled(1, 1.5, 480, 0);
  stats.requestDone(1, 12, 1, 0, 0, 0.1, 482.5, 90, 1_048_600);
  stats.requestDone(3, 12, 0, 0, 0, 0, 40_000, 30, 300);
  stats.handled(9, 1, 1, 1);
  stats.requestDone(9, 0, 0, 1, 1, 1, 4, 1, 1);
  stats.error(9, 35);

  const text = await registry.metrics();
  assert.equal(text, await promClientText(registry));
  assert.match(text, /^kafka_network_requestmetrics_requests_total\{request="Produce",version="9"\} 50$/m);
  assert.match(text, /^fjord_network_request_total_time_seconds_bucket\{request="Metadata",le="\+Inf"\} 1$/m);
  assert.match(text, /request="Odd \\"name\\"\\\\ with\\nnewline"/);
  // The JSON view still reads the families' samples.
  const json = await registry.getMetricsAsJSON();
  assert.equal(json.find((f) => f.name === 'kafka_network_requestmetrics_requests_total')?.values.find((v) => v.labels.request === 'Produce')?.value, 50);
});

test('formatSamples: escaped help, NaN and infinite values, unlabelled and labelled lines, as prom-client', async () => {
  const registry = createMetricsRegistry();
  preformattedStats(registry, 'counter', 'fjord_test_total', 'Help with \\ and\na newline', (): Sample[] => [
    { value: Number.NaN, labels: {} },
    { value: Number.POSITIVE_INFINITY, labels: { a: 'x' } },
    { value: Number.NEGATIVE_INFINITY, labels: { a: 'y', b: 2 } },
    { value: 1.5e-7, labels: { a: 'q"uote' } },
  ]);
  preformattedStats(registry, 'summary', 'fjord_test_summary', 'S', () => [
    { metricName: 'fjord_test_summary_sum', value: 3, labels: {} },
    { metricName: 'fjord_test_summary_count', value: 2, labels: {} },
  ]);
  preformattedStats(registry, 'histogram', 'fjord_test_empty', 'no samples', () => []);
  assert.equal(await registry.metrics(), await promClientText(registry));
});
