/**
 * A Fetch's byte limits across shards (replication/shards/worker/fetch-budget.ts): the answer
 * holds at most max_bytes over all partitions in request order and partition_max_bytes each,
 * whole batches only, except the first batch of the first partition with records (Fetch v3+).
 * The cut alone, then a broker at num.io.threads=1 and at 3 with a topic on both workers.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { encodeBatch, decodeBatch, iterateBatches, lastOffsetAt } from '../../../src/protocol/records/index.js';
import { continueFrom, joined, roundAllowances, trimToFetchBudget, wholeBatchesWithin } from '../../../src/replication/shards/worker/fetch-budget.js';
import type { FetchTarget, PartitionFetchResult } from '../../../src/replication/fetch/fetch-reader.js';
import { shardOf } from '../../../src/replication/shards/partition-shards.js';
import { startTestBroker } from '../../helpers/broker.js';
import { RawClient } from '../../helpers/raw-client.js';
import { createTopic, fetch, produce } from '../../server/handlers/data-plane-helpers.js';

/** One batch of `count` records whose values are `tag-i`, padded to `valueBytes`, starting at `base`. */
function batch(tag: string, base: number, count = 5, valueBytes = 200): Buffer {
  const buf = encodeBatch({
    records: Array.from({ length: count }, (_, i) => ({
      attributes: 0,
      timestampDelta: i,
      offsetDelta: i,
      key: null,
      value: Buffer.from(`${tag}-${base + i}`.padEnd(valueBytes, '.')),
      headers: [],
    })),
    baseTimestamp: 1_700_000_000_000n,
  });
  buf.writeBigInt64BE(BigInt(base), 0);
  return buf;
}

function result(records: Buffer | null, abortedTransactions?: { producerId: bigint; firstOffset: number }[]): PartitionFetchResult {
  return { errorCode: 0, highWatermark: 100, lastStableOffset: 100, logStartOffset: 0, records, ...(abortedTransactions ? { abortedTransactions } : {}) };
}

function target(partition: number, partitionMaxBytes = 1 << 20): FetchTarget {
  return { topic: 't', partition, fetchOffset: 0, partitionMaxBytes, currentLeaderEpoch: -1 };
}

test('the cut keeps whole batches within the budget, the first batch whatever its size when it is free', () => {
  const one = batch('a', 0);
  const three = Buffer.concat([one, batch('a', 5), batch('a', 10)]);
  assert.equal(wholeBatchesWithin(three, three.length, false), three.length);
  assert.equal(wholeBatchesWithin(three, 2 * one.length + 10, false), 2 * one.length);
  assert.equal(wholeBatchesWithin(three, 10, false), 0);
  assert.equal(wholeBatchesWithin(three, 10, true), one.length);
  assert.equal(wholeBatchesWithin(three, 0, true), one.length);
});

test('trimToFetchBudget: request order, partition and response limits, one free first batch (v3+), none for a hard limit (v0-v2)', () => {
  const size = batch('x', 0).length;
  const three = (tag: string) => Buffer.concat([batch(tag, 0), batch(tag, 5), batch(tag, 10)]);
  // An empty partition first: the first batch that is free is the first partition *with records*.
  const targets = [target(0), target(1, 2 * size), target(2), target(3)];
  const fresh = () => [result(Buffer.alloc(0)), result(three('b')), result(three('c')), result(three('d'))];

  const within = fresh();
  trimToFetchBudget(targets, within, { maxBytes: 4 * size, hardMaxBytes: false });
  assert.deepEqual(
    within.map((r) => r.records!.length),
    [0, 2 * size, 2 * size, 0],
    'partition 1 stops at its own limit, 2 takes the rest of the response, 3 nothing',
  );

  const tiny = fresh();
  trimToFetchBudget(targets, tiny, { maxBytes: 10, hardMaxBytes: false });
  assert.deepEqual(
    tiny.map((r) => r.records!.length),
    [0, size, 0, 0],
    'v3+: the first batch of the first partition with records, alone',
  );

  const hard = fresh();
  trimToFetchBudget(targets, hard, { maxBytes: 10, hardMaxBytes: true });
  assert.deepEqual(
    hard.map((r) => r.records!.length),
    [0, 0, 0, 0],
    'v0-v2: max_bytes is a hard limit',
  );

  const aborted = [
    result(three('e'), [
      { producerId: 7n, firstOffset: 3 },
      { producerId: 8n, firstOffset: 6 },
    ]),
  ];
  trimToFetchBudget([target(0)], aborted, { maxBytes: size, hardMaxBytes: false });
  assert.deepEqual(aborted[0]!.abortedTransactions, [{ producerId: 7n, firstOffset: 3 }], 'aborted transactions past the cut are dropped');
});

test('a round gives each partition its whole budget while the earlier whole budgets fit, then the rest, then nothing', () => {
  assert.deepEqual(roundAllowances([4, 4, 4, 4], 10), [4, 4, 2, 0]);
  assert.deepEqual(roundAllowances([4, 4], 100), [4, 4]);
  assert.deepEqual(roundAllowances([4, 0, 4], 5), [4, 0, 1]);
  assert.deepEqual(roundAllowances([4, 4], 0), [0, 0]);
});

test('a partition goes on from the offset after its last batch while records remain below the HW (LSO for read_committed); two parts join', () => {
  const first = Buffer.concat([batch('a', 0), batch('a', 5)]);
  const t = { ...target(0), fetchOffset: 0 };
  assert.equal(continueFrom(t, result(first), false), 10, 'after two batches of five');
  assert.equal(continueFrom(t, { ...result(first), highWatermark: 10 }, false), undefined, 'nothing past the HW');
  assert.equal(continueFrom(t, { ...result(first), lastStableOffset: 10 }, true), undefined, 'read_committed stops at the LSO');
  assert.equal(continueFrom(t, result(Buffer.alloc(0)), false), 0, 'nothing read: from the fetch offset');
  assert.equal(continueFrom(t, { ...result(first), errorCode: 6 }, false), undefined, 'an error ends it');
  const second = batch('a', 10);
  const both = joined(result(first, [{ producerId: 7n, firstOffset: 3 }]), {
    ...result(second, [
      { producerId: 7n, firstOffset: 3 },
      { producerId: 8n, firstOffset: 12 },
    ]),
    highWatermark: 200,
  });
  assert.deepEqual(
    recordsOf(both.records).map((r) => r.offset),
    Array.from({ length: 15 }, (_, i) => i),
  );
  assert.equal(both.highWatermark, 200, "the later part's offsets");
  assert.deepEqual(
    both.abortedTransactions,
    [
      { producerId: 7n, firstOffset: 3 },
      { producerId: 8n, firstOffset: 12 },
    ],
    'a transaction in both parts once',
  );
});

/** Every record of a fetched records section: [offset, value] in order. */
function recordsOf(records: Buffer | null): { offset: number; value: string }[] {
  const out: { offset: number; value: string }[] = [];
  if (!records) return out;
  for (const e of iterateBatches(records)) {
    const b = decodeBatch(records, e.start, { maxBytes: 1 << 30 });
    b.records.forEach((r) => out.push({ offset: Number(b.baseOffset) + r.offsetDelta, value: r.value!.toString().replace(/\.+$/, '') }));
  }
  return out;
}

const PARTITIONS = 6;
const BATCHES = 8;

for (const threads of ['1', '3']) {
  test(`num.io.threads=${threads}: a Fetch over partitions on several shards stays within max_bytes; a consumer with a small max_bytes reads every record in order`, async () => {
    const b = await startTestBroker({ 'num.io.threads': threads });
    const c = await RawClient.connect(b.port);
    try {
      const topic = 'spread';
      if (threads === '3') {
        const shards = new Set(Array.from({ length: PARTITIONS }, (_, p) => shardOf(topic, p, 3)));
        assert.deepEqual([...shards].sort(), [1, 2], 'the topic lives on both workers');
      }
      await createTopic(b, topic, PARTITIONS);
      for (let p = 0; p < PARTITIONS; p++) {
        for (let k = 0; k < BATCHES; k++) {
          const res = await produce(c, 9, topic, p, batch(`p${p}`, k * 5));
          assert.equal(res.responses[0]!.partitionResponses[0]!.errorCode, 0);
        }
      }
      const size = batch('p0', 0).length;
      const all = (maxBytes: number, version: number, offsets: readonly number[], partitionMaxBytes = 1 << 20) =>
        fetch(c, version, {
          maxWaitMs: 0,
          minBytes: 0,
          maxBytes,
          isolationLevel: 0,
          topics: [{ topic, partitions: offsets.map((o, partition) => ({ partition, fetchOffset: BigInt(o), partitionMaxBytes })) }],
        });
      const bytesOf = (res: Awaited<ReturnType<typeof all>>) => res.responses[0]!.partitions.map((p) => p.records?.length ?? 0);
      const zero = new Array<number>(PARTITIONS).fill(0);

      // 3.5 batches of budget over 6 partitions of 8 batches: three whole batches, in request order.
      const within = bytesOf(await all(Math.floor(3.5 * size), 11, zero));
      assert.deepEqual(within, [3 * size, 0, 0, 0, 0, 0], `v11, 3.5 batches: ${within.join(' ')}`);
      // v3+: the first batch even when max_bytes, or partition_max_bytes, is smaller; v0-v2 (no
      // max_bytes, partition_max_bytes a hard limit): nothing.
      assert.deepEqual(bytesOf(await all(100, 11, zero)), [size, 0, 0, 0, 0, 0]);
      assert.deepEqual(bytesOf(await all(1 << 20, 11, zero, 100)), [size, 0, 0, 0, 0, 0]);
      assert.deepEqual(bytesOf(await all(1 << 20, 2, zero, 100)), [0, 0, 0, 0, 0, 0]);
      // Past the first partition's end, the budget goes to the next ones in order.
      const later = bytesOf(await all(Math.floor(3.5 * size), 11, [BATCHES * 5 - 5, 0, 0, 0, 0, 0]));
      assert.deepEqual(later, [size, 2 * size, 0, 0, 0, 0], `from the last batch of partition 0: ${later.join(' ')}`);

      // A consumer fetching with max_bytes of two and a half batches gets every record, in order.
      const offsets = [...zero];
      const seen = Array.from({ length: PARTITIONS }, () => [] as string[]);
      for (let round = 0; offsets.some((o) => o < BATCHES * 5); round++) {
        assert.ok(round < PARTITIONS * BATCHES, 'the consumer progresses');
        const res = await all(Math.floor(2.5 * size), 11, offsets);
        const total = bytesOf(res).reduce((x, y) => x + y, 0);
        assert.ok(total > 0 && total <= 2.5 * size, `round ${round}: ${total} bytes`);
        res.responses[0]!.partitions.forEach((p) => {
          assert.equal(p.errorCode, 0);
          for (const r of recordsOf(p.records)) {
            assert.equal(r.offset, offsets[p.partitionIndex], `partition ${p.partitionIndex}: offsets follow on`);
            seen[p.partitionIndex]!.push(r.value);
            offsets[p.partitionIndex]!++;
          }
          if (p.records && p.records.length > 0) {
            let last = -1;
            for (const e of iterateBatches(p.records)) last = lastOffsetAt(p.records, e.start);
            assert.equal(last + 1, offsets[p.partitionIndex]);
          }
        });
      }
      seen.forEach((values, p) =>
        assert.deepEqual(
          values,
          Array.from({ length: BATCHES * 5 }, (_, i) => `p${p}-${i}`),
        ),
      );
    } finally {
      c.close();
      await b.stop();
    }
  });
}
