/**
 * Kafka's timers as the metrics show them (common/latency-histogram.ts, server/metrics/timer-metrics.ts):
 * quantiles within a bucket's width of the true ones, over the recent window, falling back to all
 * observations when nothing is recent, and reset when the histogram is another one.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { LatencyHistogram, latencyQuantile } from '../../../src/common/latency-histogram.js';
import { RecentLatencies, TIMER_WINDOW_MS, timerSamples } from '../../../src/server/metrics/timer-metrics.js';

const near = (actual: number, expected: number, what: string): void =>
  assert.ok(Math.abs(actual - expected) <= expected * 0.1, `${what}: ${actual}, expected ${expected} within 10%`);

test('quantiles of 1..1000 ms are within 10% of the true ones; count and sum exact', () => {
  const h = new LatencyHistogram();
  for (let ms = 1; ms <= 1000; ms++) h.observe(ms);
  assert.equal(h.count, 1000);
  assert.equal(h.sumMs, 500_500);
  near(latencyQuantile(h.buckets, 0.5), 500, 'p50');
  near(latencyQuantile(h.buckets, 0.99), 990, 'p99');
  near(latencyQuantile(h.buckets, 0.999), 999, 'p999');
  assert.equal(latencyQuantile(new LatencyHistogram().buckets, 0.5), 0, 'nothing observed: 0');
});

test('extremes: zero, negative and very long times land in the first and last buckets', () => {
  const h = new LatencyHistogram();
  h.observe(0);
  h.observe(-5);
  assert.equal(latencyQuantile(h.buckets, 0.99) <= 0.01, true);
  h.observe(3_600_000);
  assert.ok(latencyQuantile(h.buckets, 0.999) >= 600_000, 'an hour reads as at least the last bound');
  assert.equal(h.count, 3);
});

test('the quantile lines follow the recent window, fall back to everything when it is empty', () => {
  let now = 0;
  const h = new LatencyHistogram();
  const recent = new RecentLatencies(() => now);
  const p99 = (): number => timerSamples('t', h, recent).find((s) => s.labels.quantile === '0.99')!.value;
  for (let i = 0; i < 100; i++) h.observe(1000);
  near(p99(), 1000, 'slow events');
  now += TIMER_WINDOW_MS;
  near(p99(), 1000, 'a minute later: still in the window');
  now += TIMER_WINDOW_MS;
  near(p99(), 1000, 'two minutes later, nothing newer: every observation');
  for (let i = 0; i < 100; i++) h.observe(2);
  near(p99(), 2, 'recent fast events only');
  now += TIMER_WINDOW_MS;
  near(p99(), 2, 'still recent a minute later');
  now += TIMER_WINDOW_MS;
  near(p99(), 1000, 'nothing recent again: every observation, half of them slow');
  const lines = timerSamples('t', h, recent);
  assert.equal(lines.find((s) => s.metricName === 't_count')!.value, 200);
  assert.equal(lines.find((s) => s.metricName === 't_sum')!.value, 100_200);
  const other = new LatencyHistogram();
  other.observe(7);
  near(timerSamples('t', other, recent).find((s) => s.labels.quantile === '0.50')!.value, 7, 'another histogram: its own history');
  assert.deepEqual(
    timerSamples('t', undefined, recent).map((s) => s.value),
    [0, 0, 0, 0, 0, 0, 0, 0],
    'no histogram (no controller here): zeros',
  );
});
