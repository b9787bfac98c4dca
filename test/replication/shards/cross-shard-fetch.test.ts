/**
 * A Fetch across shards (replication/shards/worker/cross-shard-fetch.ts) over fake shards that
 * read as fetch-reader.ts does: what the budgeted rounds answer against one reader going through
 * every partition in request order (Kafka's), what the shards read against what the answer
 * holds (nothing read is dropped), and a long poll that counts every shard's appended bytes.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { BATCH_LENGTH, LOG_OVERHEAD } from '../../../src/protocol/records/batch-header.js';
import type { FetchParams, FetchTarget, PartitionFetchResult } from '../../../src/replication/fetch/fetch-reader.js';
import { fetchAcrossShards, type FetchShardsAccess, type ParkedPart } from '../../../src/replication/shards/worker/cross-shard-fetch.js';
import { trimToFetchBudget } from '../../../src/replication/shards/worker/fetch-budget.js';

/** A batch of `size` bytes framed as on disk (base offset, then its length). */
function frame(offset: number, size: number): Buffer {
  const b = Buffer.alloc(size);
  b.writeBigInt64BE(BigInt(offset), 0);
  b.writeInt32BE(size - LOG_OVERHEAD, BATCH_LENGTH);
  return b;
}

interface Parked {
  shard: number;
  parts: ParkedPart[];
  replicaId: number;
  counted: (bytes: number) => void;
  cancelled: boolean;
}

/** Partitions of topic 't' as lists of batch sizes (one offset each); partition p lives on shard 1 + p % shardCount. */
class FakeShards implements FetchShardsAccess {
  readonly stats = { fetchBytesDropped: 0 };
  readBytes = 0;
  reads = 0;
  /** Every read's fetch offsets, by partition. */
  readonly readAt: [number, number][] = [];
  /** A high watermark below the log end, by partition (a follower's fetch reads past it); the log end when absent. */
  readonly hw = new Map<number, number>();
  readonly parked: Parked[] = [];

  constructor(
    readonly logs: number[][],
    private readonly shardCount = 2,
  ) {}

  shardOf(_topic: string, partition: number): number {
    return 1 + (partition % this.shardCount);
  }

  /** fetch-reader.ts's readAll over these logs: each partition up to its limit and what the shard's maxBytes has left, the first batch free once (v3+). */
  read(_shard: number, targets: FetchTarget[], params: FetchParams): Promise<PartitionFetchResult[]> {
    this.reads++;
    for (const t of targets) this.readAt.push([t.partition, t.fetchOffset]);
    const out = oneReader(this.logs, targets, params);
    for (const r of out) this.readBytes += r.records!.length;
    // As a shard answers a follower: the HW it keeps, and the log end (shard-host.ts).
    if ((params.replicaId ?? -1) >= 0)
      targets.forEach((t, k) =>
        Object.assign(out[k]!, { highWatermark: this.hw.get(t.partition) ?? out[k]!.highWatermark, logEndOffset: this.logs[t.partition]!.length }),
      );
    return Promise.resolve(out);
  }

  park(shard: number, parts: ParkedPart[], _minBytes: number, _maxWaitMs: number, replicaId: number, counted: (bytes: number) => void) {
    const p: Parked = { shard, parts, replicaId, counted, cancelled: false };
    this.parked.push(p);
    return { ended: new Promise<void>(() => undefined), cancel: () => void (p.cancelled = true) };
  }

  /** Appends a batch and tells the shard's parked waits, as a shard's DelayedFetch hears it. */
  append(partition: number, size: number): void {
    this.logs[partition]!.push(size);
    for (const p of this.parked) if (!p.cancelled && p.parts.some((x) => x.partition === partition)) p.counted(size);
  }
}

function oneReader(logs: number[][], targets: readonly FetchTarget[], params: FetchParams): PartitionFetchResult[] {
  let bytes = 0;
  let minOneBatch = !params.hardMaxBytes;
  return targets.map((t) => {
    const log = logs[t.partition]!;
    const limit = Math.min(t.partitionMaxBytes, params.maxBytes - bytes);
    const taken: Buffer[] = [];
    let size = 0;
    for (let o = t.fetchOffset; o < log.length; o++) {
      const next = size + log[o]!;
      if (next > limit && !(taken.length === 0 && minOneBatch)) break;
      taken.push(frame(o, log[o]!));
      size = next;
    }
    if (size > 0) minOneBatch = false;
    bytes += size;
    return { errorCode: 0, highWatermark: log.length, lastStableOffset: log.length, logStartOffset: 0, records: Buffer.concat(taken) };
  });
}

function targets(pmb: number, offsets: readonly number[]): FetchTarget[] {
  return offsets.map((fetchOffset, partition) => ({ topic: 't', partition, fetchOffset, partitionMaxBytes: pmb, currentLeaderEpoch: -1 }));
}

const params = (maxBytes: number, o: Partial<FetchParams> = {}): FetchParams => ({
  maxWaitMs: 0,
  minBytes: 1,
  maxBytes,
  readCommitted: false,
  hardMaxBytes: false,
  ...o,
});
const sizes = (rs: readonly PartitionFetchResult[]) => rs.map((r) => r.records?.length ?? 0);
const sum = (xs: readonly number[]) => xs.reduce((a, b) => a + b, 0);
const backlog = (partitions: number, batches: number, size: number) => Array.from({ length: partitions }, () => new Array<number>(batches).fill(size));

test('budgets that fit max_bytes: one parallel read per shard, the answer one reader gives, nothing read that is not answered', async () => {
  const shards = new FakeShards(backlog(8, 10, 1000));
  const ts = targets(4000, new Array(8).fill(0));
  const got = await fetchAcrossShards(ts, params(32_000), shards);
  assert.deepEqual(sizes(got), sizes(oneReader(shards.logs, ts, params(32_000))));
  assert.deepEqual(sizes(got), new Array(8).fill(4000));
  assert.equal(shards.reads, 2, 'one read per shard');
  assert.equal(shards.readBytes, sum(sizes(got)));
  assert.equal(shards.stats.fetchBytesDropped, 0);
});

test('a backlog larger than max_bytes: one round fills the budget in request order, as one reader does, nothing dropped', async () => {
  for (const maxBytes of [10_000, 10_500, 3999, 4000]) {
    const shards = new FakeShards(backlog(8, 10, 1000));
    const ts = targets(4000, new Array(8).fill(0));
    const got = await fetchAcrossShards(ts, params(maxBytes), shards);
    assert.deepEqual(sizes(got), sizes(oneReader(shards.logs, ts, params(maxBytes))), `max_bytes ${maxBytes}`);
    assert.equal(shards.reads, 2, `max_bytes ${maxBytes}: one round`);
    assert.equal(shards.readBytes, sum(sizes(got)), `max_bytes ${maxBytes}: every byte read is answered`);
  }
  const shards = new FakeShards(backlog(8, 10, 1000));
  const got = await fetchAcrossShards(targets(4000, new Array(8).fill(0)), params(10_000), shards);
  assert.deepEqual(sizes(got), [4000, 4000, 2000, 0, 0, 0, 0, 0]);
});

test('partitions with little data: the next round gives the bytes left to the partitions after them, in order', async () => {
  const logs = [[500], [500], [500], ...backlog(5, 10, 1000)];
  const shards = new FakeShards(logs);
  const ts = targets(4000, new Array(8).fill(0));
  const got = await fetchAcrossShards(ts, params(10_000), shards);
  assert.deepEqual(sizes(got), sizes(oneReader(logs, ts, params(10_000))));
  assert.deepEqual(sizes(got), [500, 500, 500, 4000, 4000, 0, 0, 0]);
  assert.equal(shards.readBytes, sum(sizes(got)));
});

test('a partition given what the round left goes on in the next round from where it stopped, joined: what one reader reads', async () => {
  const shards = new FakeShards(backlog(8, 12, 1000));
  const ts = targets(4000, [12, 10, 0, 0, 0, 0, 0, 0]);
  const got = await fetchAcrossShards(ts, params(10_000), shards);
  assert.deepEqual(sizes(got), [0, 2000, 4000, 4000, 0, 0, 0, 0]);
  assert.deepEqual(sizes(got), sizes(oneReader(shards.logs, ts, params(10_000))));
  assert.deepEqual(
    [...got[2]!.records!.subarray(0, 8), ...got[2]!.records!.subarray(3000, 3008)],
    [...frame(0, 12).subarray(0, 8), ...frame(3, 12).subarray(0, 8)],
    'partition 2: offsets 0 to 3, the second part after the first',
  );
  assert.equal(shards.readBytes, sum(sizes(got)));
});

test('a first batch larger than its limits, behind an empty partition on another shard, is still answered (v3+), and never for v0-v2', async () => {
  const logs = [[], [9000, 9000], [1000]];
  const shards = new FakeShards(logs);
  const ts = targets(4000, [0, 0, 0]);
  const got = await fetchAcrossShards(ts, params(10_000), shards);
  assert.deepEqual(sizes(got), [0, 9000, 1000], 'the first partition with records gives its first batch whole, the next what is left');
  assert.deepEqual(sizes(got), sizes(oneReader(logs, ts, params(10_000))));
  const hard = await fetchAcrossShards(ts, params(10_000, { hardMaxBytes: true }), new FakeShards(logs));
  assert.deepEqual(sizes(hard), [0, 0, 1000]);
});

test('random logs and limits: within max_bytes and each partition_max_bytes, whole batches from the fetch offset, something whenever one reader finds something', async () => {
  let seed = 7;
  const rnd = (n: number) => {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff;
    return seed % n;
  };
  for (let run = 0; run < 300; run++) {
    const partitions = 2 + rnd(8);
    const logs = Array.from({ length: partitions }, () => Array.from({ length: rnd(6) }, () => 100 + rnd(1500)));
    const pmb = 200 + rnd(3000);
    const hard = rnd(4) === 0;
    const p = params(rnd(6000), { hardMaxBytes: hard });
    const ts = targets(
      pmb,
      logs.map((l) => rnd(l.length + 1)),
    );
    const shards = new FakeShards(logs, 1 + rnd(3));
    const got = await fetchAcrossShards(ts, p, shards);
    const copy = [...got];
    assert.equal(trimToFetchBudget(ts, copy, p), 0, `run ${run}: the answer is within the limits already`);
    const reference = oneReader(logs, ts, p);
    if (sum(sizes(reference)) > 0) assert.ok(sum(sizes(got)) > 0, `run ${run}: a consumer progresses`);
    assert.equal(shards.readBytes, sum(sizes(got)) + shards.stats.fetchBytesDropped, `run ${run}: read = answered + dropped`);
    if (logs.every((l) => l.every((b) => b <= Math.min(pmb, p.maxBytes))))
      assert.equal(shards.stats.fetchBytesDropped, 0, `run ${run}: no batch over its limits, nothing dropped`);
    const first = (rs: readonly PartitionFetchResult[]) => rs.findIndex((r) => r.records!.length > 0);
    assert.equal(first(got), first(reference), `run ${run}: the first partition with records is one reader's`);
    got.forEach((r, i) => {
      const log = logs[i]!;
      let expect = 0;
      for (let o = ts[i]!.fetchOffset; expect < r.records!.length; o++) expect += log[o]!;
      assert.equal(expect, r.records!.length, `run ${run}: partition ${i} holds whole batches from its fetch offset`);
    });
  }
});

test('a long poll over two shards answers once the bytes appended on both reach min_bytes, not before', async () => {
  const shards = new FakeShards([[], []]);
  const ts = targets(1 << 20, [0, 0]);
  let answered: PartitionFetchResult[] | undefined;
  const pending = fetchAcrossShards(ts, params(1 << 20, { minBytes: 1500, maxWaitMs: 30_000 }), shards).then((r) => (answered = r));
  await new Promise((resolve) => setImmediate(resolve));
  assert.deepEqual(
    shards.parked.map((p) => p.shard),
    [1, 2],
    'parked on both shards',
  );
  shards.append(0, 1000);
  await new Promise((resolve) => setImmediate(resolve));
  assert.equal(answered, undefined, '1000 of 1500 bytes: still waiting');
  shards.append(1, 1000);
  await pending;
  assert.deepEqual(sizes(answered!), [1000, 1000]);
  assert.ok(
    shards.parked.every((p) => p.cancelled),
    'both waits ended',
  );
});

test('a follower fetch parks as a replica (woken by appends) from where its read ended, not from the HW', async () => {
  // Partition 0 has 2 batches above an HW of 0 that the follower already read; partition 1 is empty.
  const shards = new FakeShards([[100, 100], []]);
  shards.hw.set(0, 0);
  const ts = targets(1 << 20, [2, 0]);
  let answered: PartitionFetchResult[] | undefined;
  const pending = fetchAcrossShards(ts, params(1 << 20, { minBytes: 1, maxWaitMs: 30_000, replicaId: 2 }), shards).then((r) => (answered = r));
  await new Promise((resolve) => setImmediate(resolve));
  assert.deepEqual(
    shards.parked.map((p) => [p.shard, p.replicaId, p.parts[0]!.seenHighWatermark]),
    [
      [1, 2, 2],
      [2, 2, 0],
    ],
    'parked as replica 2 at the read ends (2: the log end; the HW is 0)',
  );
  assert.equal(answered, undefined);
  shards.append(1, 500);
  await pending;
  assert.deepEqual(sizes(answered!), [0, 500]);
});

test('a follower fetch whose budgets exceed max_bytes reads only at its fetch offsets (no rounds: the leader would count a later offset as fetched), cut to max_bytes', async () => {
  const shards = new FakeShards(backlog(8, 10, 1000));
  for (let p = 0; p < 8; p++) shards.hw.set(p, 0);
  const ts = targets(4000, new Array(8).fill(0));
  const got = await fetchAcrossShards(ts, params(10_000, { replicaId: 2 }), shards);
  assert.deepEqual(sizes(got), sizes(oneReader(shards.logs, ts, params(10_000))), 'what one reader answers');
  assert.ok(
    shards.readAt.every(([, offset]) => offset === 0),
    `every read at the fetch offset: ${JSON.stringify(shards.readAt)}`,
  );
  assert.equal(shards.reads, 2, 'one read per shard');
});

test('a follower fetch that answered nothing before a large first batch on another shard reads it alone, past the HW', async () => {
  // Partition 0 (shard 1) is empty; partition 1 (shard 2) has one batch larger than partition_max_bytes, above the HW.
  const shards = new FakeShards([[], [5000]]);
  shards.hw.set(1, 0);
  const ts = targets(4000, [0, 0]);
  const got = await fetchAcrossShards(ts, params(1 << 20, { replicaId: 2 }), shards);
  assert.deepEqual(sizes(got), [0, 5000], 'the oversized first batch answered (v3+), as one reader does');
});
