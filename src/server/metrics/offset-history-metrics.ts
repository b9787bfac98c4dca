/**
 * The offset history writer's metrics (issue 25; Fjord's own, Kafka has no offset history):
 * entries written to `__consumer_offsets_history` or dropped, batches, append failures and the
 * entries waiting, read at scrape time from the writer's plain counters. Every broker serves them;
 * they read 0 where `offsets.history.enable=false` (no writer) or before the first commit.
 */
import type { GroupCoordinator } from '../../coordinator/group/group-coordinator.js';
import type { OffsetHistoryStats } from '../../coordinator/group/history/history-tracker.js';
import type { MetricsRegistry } from './registry.js';
import { one, statsCounter, statsGauge, type Sample } from './stats-families.js';

const NONE: Readonly<OffsetHistoryStats> = Object.freeze({ recordsWritten: 0, batchesWritten: 0, recordsDropped: 0, appendFailures: 0, recordsQueued: 0 });

export function registerOffsetHistoryMetrics(registry: MetricsRegistry, groups: GroupCoordinator): void {
  const stats = (): Readonly<OffsetHistoryStats> => groups.history.stats ?? NONE;
  // Two samples, allocated once: a scrape only updates their values.
  const written: Sample = { value: 0, labels: { result: 'written' } };
  const dropped: Sample = { value: 0, labels: { result: 'dropped' } };
  const records = [written, dropped];
  statsCounter(
    registry,
    'fjord_offset_history_records_total',
    'Offset history entries this broker (as group coordinator) wrote to __consumer_offsets_history, or dropped (not written within the append deadline, or its queue full).',
    () => {
      const s = stats();
      written.value = s.recordsWritten;
      dropped.value = s.recordsDropped;
      return records;
    },
  );
  statsCounter(registry, 'fjord_offset_history_batches_total', 'Offset history batches written (locally or forwarded to the partition leader).', () =>
    one(stats().batchesWritten),
  );
  statsCounter(
    registry,
    'fjord_offset_history_append_failures_total',
    'Offset history batches given up after their retries (their entries are counted as dropped).',
    () => one(stats().appendFailures),
  );
  statsGauge(registry, 'fjord_offset_history_queued_records', 'Offset history entries waiting to be written.', () => one(stats().recordsQueued));
}
