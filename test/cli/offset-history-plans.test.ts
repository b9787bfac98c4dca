/**
 * The pure parts of kafka-consumer-groups.sh's offset-history options: times and durations as
 * --from/--to/--to-datetime read them, LAG-TIME's ages, and the undo plans (last reset, at a
 * time) over a history given here. The tool itself is tested in consumer-groups-history.test.ts.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { formatAge, parseTimePoint } from '../../src/cli/common/durations.js';
import { undoCommand } from '../../src/cli/common/undo-reset.js';
import { planUndoLastReset, planUndoToTime } from '../../src/client/offset-history/undo-plan.js';
import type { HistoryEntry } from '../../src/client/offset-history/history-reader.js';

const NOW = Date.parse('2026-12-05T12:00:00Z');

test('--from/--to: durations back from now (short and ISO), datetimes with a zone, one error for the rest', () => {
  assert.equal(parseTimePoint('--from', '30m', NOW), NOW - 30 * 60_000);
  assert.equal(parseTimePoint('--from', '1h30m', NOW), NOW - 90 * 60_000);
  assert.equal(parseTimePoint('--from', '2d', NOW), NOW - 2 * 86_400_000);
  assert.equal(parseTimePoint('--from', '500ms', NOW), NOW - 500);
  assert.equal(parseTimePoint('--from', 'PT1H', NOW), NOW - 3_600_000);
  assert.equal(parseTimePoint('--to', '2026-12-05T10:00:00Z', NOW), Date.parse('2026-12-05T10:00:00Z'));
  assert.equal(parseTimePoint('--to', '2026-12-05T10:00:00.000+0100', NOW), Date.parse('2026-12-05T09:00:00Z'));
  for (const bad of ['yesterday', '5', '1x', 'P', '2026-13-45T99:00:00', '']) {
    assert.throws(() => parseTimePoint('--from', bad, NOW), new RegExp(`^CliError: --from "${bad}" is neither a datetime`), bad);
  }
});

test('LAG-TIME ages: two units at most', () => {
  assert.deepEqual([850, 12_000, 245_000, 7_500_000, 3 * 86_400_000 + 4 * 3_600_000 + 1, -5].map(formatAge), [
    '850ms',
    '12s',
    '4m05s',
    '2h05m',
    '3d04h',
    '0ms',
  ]);
});

function entry(timestamp: number, topic: string, partition: number, previousOffset: bigint, newOffset: bigint, cause: HistoryEntry['cause']): HistoryEntry {
  return { timestamp, topic, partition, previousOffset, newOffset, cause, leaderEpoch: -1, memberId: '', clientId: '', clientHost: '', generation: -1 };
}

test('undo plans: the newest run of reset records with one timestamp; the offsets at a time', () => {
  const history = [
    entry(1000, 't', 0, -1n, 10n, 'commit'),
    entry(2000, 't', 0, 10n, 0n, 'reset'),
    entry(3000, 't', 0, 0n, 4n, 'commit'),
    entry(3000, 't', 1, -1n, 9n, 'commit'),
    // The last reset: one request over three partitions (u-0 had no offset before it).
    entry(5000, 't', 1, 9n, 2n, 'reset'),
    entry(5000, 't', 0, 4n, 1n, 'reset'),
    entry(5000, 'u', 0, -1n, 3n, 'reset'),
    entry(6000, 't', 0, 1n, 1n, 'alive'),
  ];
  const last = planUndoLastReset('g', history);
  // Sorted by topic and partition; a partition new to the group in that reset is left alone.
  assert.deepEqual(last.plan, [
    { topic: 't', partition: 0, offset: 4n },
    { topic: 't', partition: 1, offset: 9n },
  ]);
  assert.deepEqual(last.skipped, [{ topic: 'u', partition: 0, why: 'had no committed offset before the reset' }]);
  // At 2500: t-0 was reset to 0; t-1 and u-0 had no offset yet.
  const atTime = planUndoToTime('g', history, 2500);
  assert.deepEqual(atTime.plan, [{ topic: 't', partition: 0, offset: 0n }]);
  assert.deepEqual(
    atTime.skipped.map((s) => `${s.topic}-${s.partition}`),
    ['t-1', 'u-0'],
  );
  // Before any record: each partition's offset before its first change.
  assert.deepEqual(planUndoToTime('g', [entry(9000, 't', 0, 7n, 8n, 'commit')], 100).plan, [{ topic: 't', partition: 0, offset: 7n }]);
  assert.throws(() => planUndoLastReset('g', history.slice(0, 1)), /the offset history of group 'g' has no reset to undo/);
});

test('the undo command: words a shell reads back as given', () => {
  assert.equal(
    undoCommand('kafka-consumer-groups.sh', "it's a group", 'b1:9092,b2:9092', 'admin client.properties'),
    "kafka-consumer-groups.sh --bootstrap-server b1:9092,b2:9092 --command-config 'admin client.properties' --undo-reset --group 'it'\\''s a group' --execute",
  );
});
