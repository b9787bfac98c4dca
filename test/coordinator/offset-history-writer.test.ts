/**
 * The offset history writer: creates __consumer_offsets_history on first use with the offsets
 * topic's partitions and replicas and its time-retention configs, appends a submission as one
 * batch to the group's partition (the one __consumer_offsets uses), in order, and never lets a
 * history that cannot be written grow without bound: retried until a deadline, then dropped and
 * counted, as are entries over the queue's bound.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import pino from 'pino';
import { OffsetHistoryWriter } from '../../src/coordinator/group/history/history-writer.js';
import type { MetadataStore } from '../../src/metadata/metadata-store.js';
import type { NewTopic, TopicInfo } from '../../src/metadata/cluster-model.js';
import type { CoordinatorReplicas } from '../../src/coordinator/runtime/coordinator-shell.js';
import {
  OFFSET_HISTORY_TOPIC,
  decodeHistoryKey,
  decodeHistoryValue,
  historyPartitionFor,
  type HistoryValue,
} from '../../src/protocol/offset-history/history-record.js';
import { iterateBatches, decodeBatch } from '../../src/protocol/records/index.js';
import { ErrorCode } from '../../src/protocol/errors.js';

const value = (newOffset: bigint): HistoryValue => ({
  topic: 't',
  partition: 0,
  previousOffset: newOffset - 1n,
  newOffset,
  leaderEpoch: -1,
  cause: 'commit',
  memberId: 'm',
  clientId: 'c',
  clientHost: '/127.0.0.1',
  generation: 1,
});

/** Broker 1 of a cluster whose offsets topic has 3 partitions on brokers [1,2], [2,1], [1,2]. */
function setup(opts: { leaderOfHistory?: number; appendDeadlineMs?: number; maxQueued?: number } = {}) {
  const topics = new Map<string, TopicInfo>();
  const part = (p: number, replicas: number[]) => ({ partition: p, leader: replicas[0]!, leaderEpoch: 0, replicas, isr: replicas, offlineReplicas: [] });
  topics.set('__consumer_offsets', {
    name: '__consumer_offsets',
    topicId: 'o',
    internal: true,
    partitions: [part(0, [1, 2]), part(1, [2, 1]), part(2, [1, 2])],
    configs: {},
  });
  const created: NewTopic[] = [];
  const metadata = {
    topic: (n: string) => topics.get(n),
    createTopic: async (spec: NewTopic) => {
      created.push(spec);
      const info: TopicInfo = {
        name: spec.name,
        topicId: 'h',
        internal: false,
        partitions: spec.assignment!.map((r, p) => ({
          partition: p,
          leader: opts.leaderOfHistory ?? r[0]!,
          leaderEpoch: 0,
          replicas: r,
          isr: r,
          offlineReplicas: [],
        })),
        configs: spec.configs ?? {},
      };
      topics.set(spec.name, info);
      return info;
    },
  } as unknown as MetadataStore;
  const appended: { partition: number; batch: Buffer }[] = [];
  const replicaManager = {
    syncTopic: async () => undefined,
    getPartition: () => undefined,
    appendRecords: async (_t: string, partition: number, batch: Buffer) => {
      appended.push({ partition, batch });
      return { errorCode: ErrorCode.NONE, errorMessage: null };
    },
  } as unknown as CoordinatorReplicas;
  const writer = new OffsetHistoryWriter({
    brokerId: 1,
    metadata,
    replicaManager,
    logger: pino({ level: 'silent' }),
    offsetsTopic: '__consumer_offsets',
    ensureOffsetsTopic: async () => undefined,
    numPartitions: 50,
    retentionMs: 604_800_000,
    segmentBytes: 1 << 20,
    ...(opts.appendDeadlineMs !== undefined ? { appendDeadlineMs: opts.appendDeadlineMs } : {}),
    ...(opts.maxQueued !== undefined ? { maxQueued: opts.maxQueued } : {}),
  });
  return { writer, created, appended };
}

function records(batch: Buffer) {
  const out: { group: string; value: HistoryValue; timestamp: bigint }[] = [];
  for (const e of iterateBatches(batch)) {
    const b = decodeBatch(e.buf, e.start, { maxBytes: 1 << 20 });
    for (const r of b.records)
      out.push({ group: decodeHistoryKey(r.key!)!.group, value: decodeHistoryValue(r.value!)!, timestamp: b.baseTimestamp + BigInt(r.timestampDelta) });
  }
  return out;
}

test('first use creates the topic with the offsets topic assignment and time retention; a submission is one batch in the group partition', async () => {
  const { writer, created, appended } = setup({ leaderOfHistory: 1 });
  writer.submit('shop', [value(5n), value(6n)], 1_700_000_000_000);
  await writer.flush();
  assert.equal(created.length, 1);
  assert.equal(created[0]!.name, OFFSET_HISTORY_TOPIC);
  assert.deepEqual(created[0]!.assignment, [
    [1, 2],
    [2, 1],
    [1, 2],
  ]);
  assert.equal(created[0]!.configs!['cleanup.policy'], 'delete');
  assert.equal(created[0]!.configs!['retention.ms'], '604800000');
  assert.equal(created[0]!.internal, true);
  const p = historyPartitionFor('shop', 3);
  assert.equal(appended.length, 1, 'one batch');
  assert.equal(appended[0]!.partition, p);
  const rs = records(appended[0]!.batch);
  assert.deepEqual(
    rs.map((r) => [r.group, r.value.newOffset, r.timestamp]),
    [
      ['shop', 5n, 1_700_000_000_000n],
      ['shop', 6n, 1_700_000_000_000n],
    ],
  );
  assert.equal(writer.stats.recordsWritten, 2);
});

test('a partition led elsewhere with no connection to it: retried until the deadline, then dropped and counted', async () => {
  const { writer, appended } = setup({ leaderOfHistory: 2, appendDeadlineMs: 300 });
  writer.submit('shop', [value(1n)], Date.now());
  assert.equal(writer.stats.recordsQueued, 1, 'waiting while retried');
  await writer.flush();
  assert.equal(writer.stats.recordsQueued, 0);
  assert.equal(appended.length, 0);
  assert.equal(writer.stats.recordsDropped, 1);
  assert.equal(writer.stats.appendFailures, 1);
  // It goes on afterwards (the queue is not stuck).
  writer.submit('shop', [value(2n)], Date.now());
  await writer.flush();
  assert.equal(writer.stats.recordsDropped, 2);
});

test('entries over the queue bound are dropped and counted, the rest written in order', async () => {
  const { writer, appended } = setup({ leaderOfHistory: 1, maxQueued: 3 });
  const values = Array.from({ length: 5 }, (_, i) => value(BigInt(i)));
  writer.submit('shop', values, Date.now());
  assert.equal(writer.stats.recordsQueued, 3);
  await writer.flush();
  assert.equal(writer.stats.recordsQueued, 0);
  assert.equal(writer.stats.recordsDropped, 2);
  assert.deepEqual(
    appended.flatMap((a) => records(a.batch).map((r) => r.value.newOffset)),
    [0n, 1n, 2n],
  );
});

test('closing writes what still lingers at once, and takes nothing more', async () => {
  const { writer, appended } = setup({ leaderOfHistory: 1 });
  writer.submit('shop', [value(1n)], Date.now());
  writer.close();
  writer.submit('shop', [value(2n)], Date.now());
  await writer.flush();
  assert.deepEqual(
    appended.flatMap((a) => records(a.batch).map((r) => r.value.newOffset)),
    [1n],
  );
});
