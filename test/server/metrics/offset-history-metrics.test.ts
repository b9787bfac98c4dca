/**
 * The offset history writer's families (offset-history-metrics.ts): each reads the writer's
 * counters at scrape time (written and dropped entries, batches, failures, the queue), and all read
 * 0 on a broker whose history is off (no writer).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { GroupCoordinator } from '../../../src/coordinator/group/group-coordinator.js';
import type { OffsetHistoryStats } from '../../../src/coordinator/group/history/history-tracker.js';
import { createMetricsRegistry } from '../../../src/server/metrics/registry.js';
import { registerOffsetHistoryMetrics } from '../../../src/server/metrics/offset-history-metrics.js';
import { parsePromText, value } from './state-prom-text.js';

/** A coordinator as the metrics see it: only its history tracker's stats. */
const coordinatorWith = (stats: OffsetHistoryStats | undefined): GroupCoordinator => ({ history: { stats } }) as unknown as GroupCoordinator;

async function scrape(stats: OffsetHistoryStats | undefined) {
  const registry = createMetricsRegistry();
  registerOffsetHistoryMetrics(registry, coordinatorWith(stats));
  return { registry, text: await registry.metrics() };
}

test('the families read the writer counters at each scrape', async () => {
  const stats: OffsetHistoryStats = { recordsWritten: 12, batchesWritten: 3, recordsDropped: 5, appendFailures: 2, recordsQueued: 7 };
  const { registry, text } = await scrape(stats);
  assert.match(text, /# TYPE fjord_offset_history_records_total counter\n/);
  assert.match(text, /# TYPE fjord_offset_history_queued_records gauge\n/);
  const s = parsePromText(text);
  assert.equal(value(s, 'fjord_offset_history_records_total', { result: 'written' }), 12);
  assert.equal(value(s, 'fjord_offset_history_records_total', { result: 'dropped' }), 5);
  assert.equal(value(s, 'fjord_offset_history_batches_total'), 3);
  assert.equal(value(s, 'fjord_offset_history_append_failures_total'), 2);
  assert.equal(value(s, 'fjord_offset_history_queued_records'), 7);
  stats.recordsDropped = 6;
  stats.recordsQueued = 0;
  const again = parsePromText(await registry.metrics());
  assert.equal(value(again, 'fjord_offset_history_records_total', { result: 'dropped' }), 6, 'read at scrape time');
  assert.equal(value(again, 'fjord_offset_history_queued_records'), 0);
});

test('history off (offsets.history.enable=false): the families are served, at 0', async () => {
  const s = parsePromText((await scrape(undefined)).text);
  for (const result of ['written', 'dropped']) assert.equal(value(s, 'fjord_offset_history_records_total', { result }), 0);
  assert.equal(value(s, 'fjord_offset_history_batches_total'), 0);
  assert.equal(value(s, 'fjord_offset_history_append_failures_total'), 0);
  assert.equal(value(s, 'fjord_offset_history_queued_records'), 0);
});
