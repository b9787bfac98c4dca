// The record format of __consumer_offsets_history: what is written reads back the same, the
// versions lead key and value, unknown versions and causes are refused, and a group's records
// go to the partition __consumer_offsets uses for it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  decodeHistoryKey,
  decodeHistoryValue,
  encodeHistoryKey,
  encodeHistoryValue,
  historyPartitionFor,
  historyTopicConfigs,
  type HistoryValue,
} from '../../src/protocol/offset-history/history-record.js';
import { partitionForGroup } from '../../src/coordinator/runtime/partition-for-group.js';

const value: HistoryValue = {
  topic: 'bigdata',
  partition: 1,
  previousOffset: 41n,
  newOffset: 9_007_199_254_740_993n,
  leaderEpoch: 7,
  cause: 'reset',
  memberId: 'consumer-1-aé',
  clientId: 'console-consumer',
  clientHost: '/127.0.0.1',
  generation: 12,
};

test('key and value round-trip, each starting with its version int16', () => {
  const k = encodeHistoryKey({ group: 'console-consumer-90976' });
  assert.equal(k.readInt16BE(0), 0);
  assert.deepEqual(decodeHistoryKey(k), { group: 'console-consumer-90976' });
  const v = encodeHistoryValue(value);
  assert.equal(v.readInt16BE(0), 0);
  assert.deepEqual(decodeHistoryValue(v), value);
  for (const cause of ['commit', 'reset', 'delete', 'expire', 'txn-commit', 'alive'] as const) {
    assert.equal(decodeHistoryValue(encodeHistoryValue({ ...value, cause, previousOffset: -1n, newOffset: -1n }))?.cause, cause);
  }
});

test('a value is compact: 2+2+topic+4+8+8+4+1+strings+4 bytes', () => {
  const v = encodeHistoryValue({ ...value, memberId: '', clientId: '', clientHost: '' });
  assert.equal(v.length, 2 + 2 + 7 + 4 + 8 + 8 + 4 + 1 + 2 + 2 + 2 + 4);
});

test('unknown versions and causes decode to null; a truncated value throws', () => {
  const k = encodeHistoryKey({ group: 'g' });
  k.writeInt16BE(1, 0);
  assert.equal(decodeHistoryKey(k), null);
  const v = encodeHistoryValue(value);
  const newer = Buffer.from(v);
  newer.writeInt16BE(1, 0);
  assert.equal(decodeHistoryValue(newer), null);
  const badCause = Buffer.from(v);
  badCause.writeInt8(99, 2 + 2 + 7 + 4 + 8 + 8 + 4);
  assert.equal(decodeHistoryValue(badCause), null);
  assert.throws(() => decodeHistoryValue(v.subarray(0, v.length - 1)));
});

test('a group history partition is the one __consumer_offsets uses for it', () => {
  for (const g of ['console-consumer-90976', 'g', '', 'polygenelubricants', 'x'.repeat(100)]) {
    assert.equal(historyPartitionFor(g, 50), partitionForGroup(g, 50));
  }
  // Java's "polygenelubricants".hashCode() is Integer.MIN_VALUE: Kafka's abs maps it to 0.
  assert.equal(historyPartitionFor('polygenelubricants', 50), 0);
});

test('the topic is time-retained, not compacted', () => {
  const c = historyTopicConfigs(604_800_000, 2, 104_857_600);
  assert.equal(c['cleanup.policy'], 'delete');
  assert.equal(c['retention.ms'], '604800000');
  assert.equal(c['min.insync.replicas'], '2');
});
