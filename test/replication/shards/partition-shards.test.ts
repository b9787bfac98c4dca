/**
 * Issue 26, threads step 0: the seam between the handlers and the partitions' owners.
 * shardOf's assignment (pure, internal topics on shard 0, a topic's partitions spread), and the
 * in-thread PartitionShards answering a request whose partitions are out of order in the
 * caller's order, with every arrival turn taken before produce() returns.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { shardOf, type PartitionShards } from '../../../src/replication/shards/partition-shards.js';
import { InThreadShards, type InThreadReplicas } from '../../../src/replication/shards/in-thread-shards.js';
import type { AppendOutcome } from '../../../src/replication/append/leader-appends.js';
import type { MetadataStore } from '../../../src/metadata/metadata-store.js';
import { ErrorCode } from '../../../src/protocol/errors.js';
import { startTestBroker, type TestBroker } from '../../helpers/broker.js';
import { batchOf, createTopic, valuesOf } from '../../server/handlers/data-plane-helpers.js';

test('shardOf: one shard takes everything; internal topics stay on shard 0; the rest spread over 1..count-1', () => {
  for (const t of ['orders', '__consumer_offsets', 'x']) for (let p = 0; p < 20; p++) assert.equal(shardOf(t, p, 1), 0);
  for (const t of ['__consumer_offsets', '__transaction_state', '__consumer_offsets_history'])
    for (const count of [2, 3, 9]) for (let p = 0; p < 50; p++) assert.equal(shardOf(t, p, count), 0, `${t}-${p} of ${count}`);
  for (const count of [2, 3, 5, 9]) {
    for (const t of ['orders', 'payments', 'a', 'topic-with-a-long-name.and.dots']) {
      const workers = count - 1;
      // Consecutive partitions on consecutive shards: `workers` of them fill every worker once.
      const first = Array.from({ length: workers }, (_, p) => shardOf(t, p, count));
      assert.deepEqual(
        [...first].sort((a, b) => a - b),
        Array.from({ length: workers }, (_, i) => i + 1),
        `${t} over ${count}`,
      );
      for (let p = 0; p < 40; p++) {
        const s = shardOf(t, p, count);
        assert.ok(s >= 1 && s < count, `${t}-${p} -> ${s} of ${count}`);
        assert.equal(shardOf(t, p + workers, count), s, 'periodic in the worker count');
      }
    }
  }
});

test('shardOf is a pure function of the name: pinned values (a restart, another thread, another Node give the same)', () => {
  // FNV-1a 32 of the name, pinned as the shards it gives: a change of the hash (which would move logs between shards) shows here.
  const pinned = [shardOf('orders', 0, 9), shardOf('payments', 0, 9), shardOf('a', 0, 9), shardOf('orders', 5, 4)];
  assert.deepEqual(pinned, PINNED);
  // Different topics start on different shards (not all on shard 1).
  const starts = new Set(['t0', 't1', 't2', 't3', 't4', 't5', 't6', 't7'].map((t) => shardOf(t, 0, 9)));
  assert.ok(starts.size >= 4, `starts ${[...starts]}`);
});
const PINNED = [5, 7, 5, 2];

test('in-thread produce: every append is started (arrival turn taken) before produce() returns; results in the caller order', async () => {
  const calls: string[] = [];
  const resolvers: (() => void)[] = [];
  const rm = {
    appendRecords(topic: string, partition: number, _records: Buffer | null, req: { verifiedTxn?: unknown }) {
      calls.push(`${topic}-${partition}${req.verifiedTxn ? '+txn' : ''}`);
      return new Promise<AppendOutcome>((resolve) =>
        resolvers.push(() =>
          resolve({ errorCode: ErrorCode.NONE, errorMessage: null, baseOffset: partition * 100, logAppendTime: -1, logStartOffset: 0, recordErrors: [] }),
        ),
      );
    },
  } as unknown as InThreadReplicas;
  const shards = new InThreadShards(rm, {} as MetadataStore);
  const parts = [
    { topic: 'b', partition: 3, records: null },
    { topic: 'a', partition: 1, records: null, verifiedTxn: { producerId: 1n, producerEpoch: 0 } as never },
    { topic: 'b', partition: 0, records: null },
  ];
  const p = shards.produce(parts, { requiredAcks: 1, origin: 'client' });
  assert.deepEqual(calls, ['b-3', 'a-1+txn', 'b-0'], 'all started synchronously, in order');
  // The appends finish in reverse order; the answer keeps the parts' order.
  for (const r of [...resolvers].reverse()) r();
  assert.deepEqual(
    (await p).map((o) => o.baseOffset),
    [300, 100, 0],
  );
});

test('the data-plane handlers and LogAdmin reach partitions only through the shards: no Partition, no lookup, no getPartition', async () => {
  const files = [
    'src/server/handlers/00-produce.ts',
    'src/server/handlers/01-fetch.ts',
    'src/server/handlers/02-list-offsets.ts',
    'src/server/handlers/21-delete-records.ts',
    'src/server/handlers/23-offset-for-leader-epoch.ts',
    'src/server/handlers/27-write-txn-markers.ts',
    'src/server/handlers/61-describe-producers.ts',
    'src/server/admin/log-admin.ts',
  ];
  for (const f of files) {
    const text = await readFile(new URL(`../../../${f}`, import.meta.url), 'utf8');
    // LogAdmin keeps localPartition for a PartitionAccess given without shards (tests' partial ones); the broker's has them.
    const bypasses = [/replication\/partition\//, /\.lookup\(/, /getPartition\(/, /appendRecords\(/, /appendTxnMarker\(/, /replicaManager\.fetch\(/];
    for (const bypass of bypasses) assert.doesNotMatch(text.replace(/\/\/.*$|\/\*[\s\S]*?\*\//gm, ''), bypass, `${f} bypasses the shards`);
  }
});

let b: TestBroker;
let shards: PartitionShards;
before(async () => {
  b = await startTestBroker({ 'auto.create.topics.enable': 'false' });
  await createTopic(b, 'sa', 3);
  await createTopic(b, 'sb', 2);
  shards = b.broker.services.shards!;
});
after(async () => {
  await b.stop();
});

test('the broker wires one shard per num.io.threads (the in-thread shards at 1), assigned by shardOf', () => {
  // FJORD_TEST_IO_THREADS=3 runs this file on shard workers: the count follows the setting.
  const threads = b.broker.services.config.numIoThreads;
  assert.equal(shards.count, threads);
  assert.equal(shards instanceof InThreadShards, threads === 1);
  for (let p = 0; p < 3; p++) assert.equal(shards.shardOf('sa', p), shardOf('sa', p, threads));
});

test('a request whose partitions are out of order is answered in its order: produce, fetch, ListOffsets, OffsetForLeaderEpoch, DescribeProducers, DeleteRecords', async () => {
  const order = [
    { topic: 'sb', partition: 1 },
    { topic: 'sa', partition: 2 },
    { topic: 'nope', partition: 0 },
    { topic: 'sa', partition: 0 },
    { topic: 'sb', partition: 0 },
  ];
  // Partition i of the request gets i + 1 records, so each answer shows whose it is.
  const produced = await shards.produce(
    order.map((tp, i) => ({ ...tp, records: batchOf(Array.from({ length: i + 1 }, (_, k) => `${tp.topic}-${tp.partition}-${k}`)) })),
    { requiredAcks: -1, origin: 'client', produceVersion: 9, timeoutMs: 5000 },
  );
  assert.deepEqual(
    produced.map((o) => o.errorCode),
    [0, 0, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, 0, 0],
  );
  assert.deepEqual(
    produced.map((o) => o.baseOffset),
    [0, 0, -1, 0, 0],
  );

  const fetched = await shards.fetch(
    order.map((tp) => ({ ...tp, fetchOffset: 0, partitionMaxBytes: 1 << 20, currentLeaderEpoch: -1 })),
    { maxWaitMs: 0, minBytes: 0, maxBytes: 1 << 22, readCommitted: false, hardMaxBytes: false },
  );
  assert.deepEqual(
    fetched.map((r) => r.highWatermark),
    [1, 2, -1, 4, 5],
  );
  assert.deepEqual(valuesOf(fetched[1]!.records), ['sa-2-0', 'sa-2-1']);
  assert.equal(fetched[2]!.errorCode, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);

  const latest = await shards.listOffsets(
    order.map((tp) => ({ ...tp, timestamp: -1n, currentLeaderEpoch: -1 })),
    { isolationCommitted: false, fromReplica: false },
  );
  assert.deepEqual(
    latest.map((r) => [r.errorCode, r.offset]),
    [
      [0, 1],
      [0, 2],
      [ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, -1],
      [0, 4],
      [0, 5],
    ],
  );

  const ends = await shards.offsetsForLeaderEpoch(
    order.map((tp) => ({ ...tp, currentLeaderEpoch: -1, leaderEpoch: 0 })),
    false,
  );
  assert.deepEqual(
    ends.map((r) => r.endOffset),
    [1, 2, -1, 4, 5],
  );

  const producers = await shards.describeProducers(order);
  assert.deepEqual(
    producers.map((r) => [r.errorCode, r.activeProducers.length]),
    [
      [0, 0],
      [0, 0],
      [ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, 0],
      [0, 0],
      [0, 0],
    ],
  );

  // Cut each partition before its request index (-1: the high watermark for the last).
  const cut = await shards.deleteRecords(
    order.map((tp, i) => ({ ...tp, offset: i === order.length - 1 ? -1 : i })),
    1000,
  );
  assert.deepEqual(
    cut.map((r) => [r.errorCode, r.lowWatermark]),
    [
      [0, 0],
      [0, 1],
      [ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, -1],
      [0, 3],
      [0, 5],
    ],
  );

  const dirs = await shards.logDirs();
  const logs = dirs.flatMap((d) => d.logs.map((l) => `${l.topic}-${l.partition}`));
  for (const tp of ['sa-0', 'sa-1', 'sa-2', 'sb-0', 'sb-1']) assert.ok(logs.includes(tp), `${tp} in ${logs}`);
});
