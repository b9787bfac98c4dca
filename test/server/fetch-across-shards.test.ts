/**
 * A Fetch over partitions on several shards (docs/threads.md "A Fetch across shards", step 2),
 * at num.io.threads=1 and at 3 (a topic on both workers): 8 partitions, each with a backlog
 * larger than partition_max_bytes, fetched with max_bytes below the sum of their budgets. Each
 * answer is what one reader going through the partitions in request order gives (Kafka's),
 * within the limits; a consumer reads every record once, in order, by raw fetches and by kcat;
 * at 3 the shards read nothing that the answers do not hold. A long poll whose min_bytes spans
 * two shards answers when the bytes on both reach it, and one that never reaches it at max_wait.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { encodeBatch, decodeBatch, iterateBatches } from '../../src/protocol/records/index.js';
import { shardOf } from '../../src/replication/shards/partition-shards.js';
import { WorkerShards } from '../../src/replication/shards/worker/worker-shards.js';
import { startTestBroker, type TestBroker } from '../helpers/broker.js';
import { RawClient } from '../helpers/raw-client.js';
import { requirePeer } from '../helpers/peers.js';
import { partitionState } from '../helpers/partition-state.js';
import { waitFor } from '../helpers/wait-for.js';
import { kcatConsume } from '../interop/kcat-helpers.js';
import { createTopic, fetch, produce } from './handlers/data-plane-helpers.js';

const PARTITIONS = 8;
const BATCHES = 12;
const PER_BATCH = 5;

/** One batch of PER_BATCH records `tag-i` (i from `base`), each value padded to 200 bytes: every batch the same size. */
function batch(tag: string, base: number): Buffer {
  return encodeBatch({
    records: Array.from({ length: PER_BATCH }, (_, i) => ({
      attributes: 0,
      timestampDelta: i,
      offsetDelta: i,
      key: null,
      value: Buffer.from(`${tag}-${String(base + i).padStart(3, '0')}`.padEnd(200, '.')),
      headers: [],
    })),
    baseTimestamp: 1_700_000_000_000n,
  });
}

/** Every record of a records section: [offset, value]. */
function recordsOf(records: Buffer | null): { offset: number; value: string }[] {
  const out: { offset: number; value: string }[] = [];
  if (!records) return out;
  for (const e of iterateBatches(records)) {
    const b = decodeBatch(records, e.start, { maxBytes: 1 << 30 });
    b.records.forEach((r) => out.push({ offset: Number(b.baseOffset) + r.offsetDelta, value: r.value!.toString().replace(/\.+$/, '') }));
  }
  return out;
}

function workerShards(b: TestBroker): WorkerShards | undefined {
  const shards = b.broker.services.shards;
  return shards instanceof WorkerShards ? shards : undefined;
}

const SIZE = batch('p0', 0).length;
const PMB = 4 * SIZE;
const MAX = 10 * SIZE;

/** One reader's answer (Kafka's): per partition, whole batches up to its limit and what the response has left, in order. */
function oneReader(offsets: readonly number[], maxBytes: number): number[] {
  let left = maxBytes;
  return offsets.map((o) => {
    const fit = Math.min(BATCHES - o / PER_BATCH, Math.floor(Math.min(PMB, left) / SIZE));
    left -= fit * SIZE;
    return fit * SIZE;
  });
}

for (const threads of ['1', '3']) {
  test(`num.io.threads=${threads}: 8 partitions with backlogs, max_bytes below their budgets: one reader's answers in request order, every record once, nothing read and dropped`, async (t) => {
    const b = await startTestBroker({ 'num.io.threads': threads });
    const c = await RawClient.connect(b.port);
    try {
      const topic = 'backlog';
      if (threads === '3') {
        const shards = new Set(Array.from({ length: PARTITIONS }, (_, p) => shardOf(topic, p, 3)));
        assert.deepEqual([...shards].sort(), [1, 2], 'the topic lives on both workers');
      }
      await createTopic(b, topic, PARTITIONS);
      for (let p = 0; p < PARTITIONS; p++) {
        for (let k = 0; k < BATCHES; k++)
          assert.equal((await produce(c, 9, topic, p, batch(`p${p}`, k * PER_BATCH))).responses[0]!.partitionResponses[0]!.errorCode, 0);
      }
      const shards = workerShards(b);
      const before = { ...shards?.stats };
      const fetchFrom = async (offsets: readonly number[]) => {
        const res = await fetch(c, 11, {
          maxWaitMs: 0,
          minBytes: 0,
          maxBytes: MAX,
          isolationLevel: 0,
          topics: [{ topic, partitions: offsets.map((o, partition) => ({ partition, fetchOffset: BigInt(o), partitionMaxBytes: PMB })) }],
        });
        return res.responses[0]!.partitions;
      };
      const sizes = (parts: Awaited<ReturnType<typeof fetchFrom>>) => parts.map((p) => p.records?.length ?? 0);

      const zero = new Array<number>(PARTITIONS).fill(0);
      assert.deepEqual(
        sizes(await fetchFrom(zero)),
        [4, 4, 2, 0, 0, 0, 0, 0].map((n) => n * SIZE),
        'the first partitions take their budgets, the third the rest',
      );
      const later = [BATCHES * PER_BATCH, (BATCHES - 2) * PER_BATCH, 0, 0, 0, 0, 0, 0];
      assert.deepEqual(
        sizes(await fetchFrom(later)),
        [0, 2, 4, 4, 0, 0, 0, 0].map((n) => n * SIZE),
        'a partition at its end and one near it leave the rest to the next ones, in order',
      );

      // A consumer with these limits: each answer one reader's, every record once, in order.
      const offsets = [...zero];
      const seen = Array.from({ length: PARTITIONS }, () => [] as string[]);
      let answered = 0;
      for (let round = 0; offsets.some((o) => o < BATCHES * PER_BATCH); round++) {
        assert.ok(round < PARTITIONS * BATCHES, 'the consumer progresses');
        const parts = await fetchFrom(offsets);
        assert.deepEqual(sizes(parts), oneReader(offsets, MAX), `round ${round} from ${offsets.join(' ')}`);
        for (const p of parts) {
          assert.equal(p.errorCode, 0);
          answered += p.records?.length ?? 0;
          for (const r of recordsOf(p.records)) {
            assert.equal(r.offset, offsets[p.partitionIndex], `partition ${p.partitionIndex}: offsets follow on`);
            seen[p.partitionIndex]!.push(r.value);
            offsets[p.partitionIndex]!++;
          }
        }
      }
      const expected = (p: number) => Array.from({ length: BATCHES * PER_BATCH }, (_, i) => `p${p}-${String(i).padStart(3, '0')}`);
      seen.forEach((values, p) => assert.deepEqual(values, expected(p)));
      if (shards) {
        assert.equal(shards.stats.fetchBytesDropped - before.fetchBytesDropped!, 0, 'nothing read and dropped');
        assert.ok(shards.stats.fetchBytesRead - before.fetchBytesRead! >= answered, 'the shards read what was answered');
      }

      if (requirePeer(t, 'kcat')) {
        const mark = { ...shards?.stats };
        // librdkafka raises fetch.max.bytes to message.max.bytes + 512 at least: a small message.max.bytes keeps it small.
        const limits = ['-X', `fetch.max.bytes=${MAX}`, '-X', `max.partition.fetch.bytes=${PMB}`, '-X', 'message.max.bytes=4096'];
        const lines = (await kcatConsume(b.bootstrap, topic, ['-o', 'beginning', '-f', '%p %o %s\\n', ...limits])).split('\n').filter((l) => l !== '');
        const byPartition = Array.from({ length: PARTITIONS }, () => [] as string[]);
        for (const line of lines) {
          const [p, o, value] = line.split(' ');
          assert.equal(Number(o), byPartition[Number(p)]!.length, `kcat: partition ${p} in offset order`);
          byPartition[Number(p)]!.push(value!.replace(/\.+$/, ''));
        }
        byPartition.forEach((values, p) => assert.deepEqual(values, expected(p), `kcat: partition ${p} every record once`));
        if (shards) assert.equal(shards.stats.fetchBytesDropped - mark.fetchBytesDropped!, 0, 'kcat: nothing read and dropped');
      }
    } finally {
      c.close();
      await b.stop();
    }
  });

  test(`num.io.threads=${threads}: a long poll whose min_bytes spans two shards answers when both partitions' bytes reach it, one that never does at max_wait`, async () => {
    const b = await startTestBroker({ 'num.io.threads': threads });
    const consumer = await RawClient.connect(b.port);
    const producer = await RawClient.connect(b.port);
    try {
      const topic = 'poll';
      if (threads === '3') assert.notEqual(shardOf(topic, 0, 3), shardOf(topic, 1, 3), 'partitions 0 and 1 on different workers');
      await createTopic(b, topic, 2);
      const poll = (minBytes: number, maxWaitMs: number, from: readonly number[]) =>
        fetch(consumer, 11, {
          maxWaitMs,
          minBytes,
          maxBytes: 1 << 20,
          isolationLevel: 0,
          topics: [{ topic, partitions: from.map((o, partition) => ({ partition, fetchOffset: BigInt(o), partitionMaxBytes: 1 << 20 })) }],
        });
      // The fetch has read and waits (an append before it parked would end the wait at once: it reads again).
      const parkedOnBoth = () =>
        waitFor('the fetch parked on both partitions', 5000, async () => {
          const states = await Promise.all([0, 1].map((p) => partitionState(b, topic, p)));
          return states.every((st) => (st?.fetchWaiters ?? 0) > 0);
        });
      const bytes = (res: Awaited<ReturnType<typeof poll>>) => res.responses[0]!.partitions.map((p) => p.records?.length ?? 0);

      let answeredAt = 0;
      const parked = poll(SIZE + 1, 20_000, [0, 0]).then((res) => {
        answeredAt = Date.now();
        return res;
      });
      await parkedOnBoth();
      assert.equal((await produce(producer, 9, topic, 0, batch('a', 0))).responses[0]!.partitionResponses[0]!.errorCode, 0);
      // One more round trip through both shards after the append, for a wrong answer to show.
      const check = await RawClient.connect(b.port);
      try {
        await fetch(check, 11, {
          maxWaitMs: 0,
          minBytes: 0,
          maxBytes: 1 << 20,
          isolationLevel: 0,
          topics: [{ topic, partitions: [0, 1].map((partition) => ({ partition, fetchOffset: 0n, partitionMaxBytes: 1 << 20 })) }],
        });
      } finally {
        check.close();
      }
      assert.equal(answeredAt, 0, 'one batch on one shard is not min_bytes: still parked');
      const second = Date.now();
      assert.equal((await produce(producer, 9, topic, 1, batch('b', 0))).responses[0]!.partitionResponses[0]!.errorCode, 0);
      const res = await parked;
      assert.deepEqual(bytes(res), [SIZE, SIZE], 'both batches answered');
      assert.ok(answeredAt - second < 5000, `answered ${answeredAt - second} ms after the second batch, long before max_wait`);

      // min_bytes never reached: the answer at max_wait, with what there is. max_wait leaves the
      // park and the append seconds to happen in, on a loaded machine too.
      const started = Date.now();
      const late = poll(1 << 20, 2000, [PER_BATCH, 0]);
      await parkedOnBoth();
      assert.equal((await produce(producer, 9, topic, 0, batch('a', PER_BATCH))).responses[0]!.partitionResponses[0]!.errorCode, 0);
      const lateRes = await late;
      const waited = Date.now() - started;
      assert.deepEqual(bytes(lateRes), [SIZE, SIZE]);
      assert.ok(waited >= 1950 && waited < 10_000, `answered after ${waited} ms for max_wait 2000`);
    } finally {
      consumer.close();
      producer.close();
      await b.stop();
    }
  });
}
