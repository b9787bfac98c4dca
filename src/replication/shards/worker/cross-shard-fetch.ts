/**
 * A Fetch whose partitions live on several shards (docs/threads.md "A Fetch across shards", step
 * 2): the shards read in parallel within byte budgets the main thread gives them, so what they
 * read is what the answer holds, and a long poll counts every shard's new bytes towards
 * min_bytes. Sessions, throttling and down-conversion stay with the fetch service; this is its
 * `reads.fetch` at num.io.threads > 1.
 *
 * Reads: when every partition may take its whole partition_max_bytes within max_bytes (the usual
 * case: 1 MiB per partition, 50 MiB per request), every shard reads its partitions at once with
 * their full budgets. Otherwise in rounds: each round gives each partition what fetch-budget.ts's
 * `roundAllowances` leaves it (its whole budget while the earlier ones' whole budgets fit, then
 * the rest, then nothing), the shards read their parts in parallel, and the next round gives the
 * bytes the round did not use to the partitions it left out that have records, in request
 * order. A backlog fills the budget in the first round; the next one runs only while the budget
 * left could hold a batch as small as the smallest read so far, at most MAX_ROUNDS in all.
 *
 * Only the shard holding the first partition may read a first batch larger than the budget
 * (v3+); when nothing at all was read but a partition has records, that partition is read once
 * more, alone, with that right, so a consumer never stalls behind a batch larger than its limits.
 */
import type { FetchParams, FetchTarget, PartitionFetchResult } from '../../fetch/fetch-reader.js';
import type { HandoverStats } from './records-handover.js';
import { byShard, enoughToAnswer } from './shard-parts.js';
import { hasMoreToRead, partitionBudgetsSum, recordBytes, roundAllowances, smallestBatch, trimToFetchBudget } from './fetch-budget.js';

/** Rounds of shard reads for one answer, at most (the first included). */
export const MAX_ROUNDS = 3;

/** A partition a shard parks on: where the fetch reads from and the high watermark its last read saw. */
export interface ParkedPart {
  topic: string;
  partition: number;
  fetchOffset: number;
  seenHighWatermark: number;
}

/** A long poll parked on one shard: ends when that shard stops waiting (itself, or `cancel`). */
export interface ShardPark {
  readonly ended: Promise<void>;
  cancel(): void;
}

/** What a cross-shard fetch needs of WorkerShards. */
export interface FetchShardsAccess {
  shardOf(topic: string, partition: number): number;
  /** One shard reads its `targets` (request order) under `params`: results in that order. */
  read(shard: number, targets: FetchTarget[], params: FetchParams): Promise<PartitionFetchResult[]>;
  /**
   * Parks on one shard: `counted` hears the bytes of each append past a part's fetch offset; the
   * shard ends the wait when it alone counted `minBytes`, when an append came in between the read
   * and the park, at `maxWaitMs`, or when it ends.
   */
  park(shard: number, parts: ParkedPart[], minBytes: number, maxWaitMs: number, counted: (bytes: number) => void): ShardPark;
  readonly stats: Pick<HandoverStats, 'fetchBytesDropped'>;
}

/** Reads for Fetch across shards; results in `targets` order. */
export async function fetchAcrossShards(targets: readonly FetchTarget[], params: FetchParams, shards: FetchShardsAccess): Promise<PartitionFetchResult[]> {
  const groups = byShard(targets, (t) => shards.shardOf(t.topic, t.partition));
  if (groups.size <= 1) {
    // One shard reads its partitions in request order under the request's limits and long-polls itself.
    const [s] = groups.keys();
    return s === undefined ? [] : shards.read(s, [...targets], params);
  }
  const started = Date.now();
  let out = await readWithinBudget(targets, params, groups, shards);
  for (;;) {
    const waitMs = params.maxWaitMs - (Date.now() - started);
    if (enoughToAnswer(out, params.minBytes) || waitMs <= 0) return out;
    const woken = await parkOnShards(targets, out, groups, Math.max(1, params.minBytes) - recordBytes(out), waitMs, shards);
    // Fewer than min_bytes were read: the read after the wait carries them again.
    shards.stats.fetchBytesDropped += recordBytes(out);
    out = await readWithinBudget(targets, params, groups, shards);
    if (!woken) return out;
  }
}

/** One answer's reads, without waiting: every shard's parts within the request's limits, in request order. */
async function readWithinBudget(
  targets: readonly FetchTarget[],
  params: FetchParams,
  groups: Map<number, number[]>,
  shards: FetchShardsAccess,
): Promise<PartitionFetchResult[]> {
  const out = new Array<PartitionFetchResult>(targets.length);
  const now = { ...params, maxWaitMs: 0 };
  const shardOfTarget = (i: number): number => shards.shardOf(targets[i]!.topic, targets[i]!.partition);
  // Only the shard of the first partition still to read may take an oversized first batch (v3+): another would read one the answer may not hold.
  const paramsFor = (s: number, maxBytes: number, firstBatchShard: number | undefined): FetchParams => ({
    ...now,
    maxBytes,
    hardMaxBytes: params.hardMaxBytes || s !== firstBatchShard,
  });
  if (partitionBudgetsSum(targets) <= params.maxBytes) {
    const first = shardOfTarget(0);
    await Promise.all(
      [...groups].map(async ([s, indexes]) => fill(out, indexes, await shards.read(s, pick(targets, indexes), paramsFor(s, params.maxBytes, first)))),
    );
  } else {
    await readInRounds(targets, params, groups, shards, out, paramsFor);
  }
  shards.stats.fetchBytesDropped += trimToFetchBudget(targets, out, params);
  if (!params.hardMaxBytes && recordBytes(out) === 0) {
    const stalled = targets.findIndex((t, i) => hasMoreToRead(t, out[i]!, params.readCommitted));
    if (stalled >= 0) {
      const t = targets[stalled]!;
      const [again] = await shards.read(shards.shardOf(t.topic, t.partition), [t], { ...now, hardMaxBytes: false });
      out[stalled] = again!;
    }
  }
  return out;
}

/** Reads in rounds while the partitions' whole budgets exceed max_bytes (the module's comment). */
async function readInRounds(
  targets: readonly FetchTarget[],
  params: FetchParams,
  groups: Map<number, number[]>,
  shards: FetchShardsAccess,
  out: PartitionFetchResult[],
  paramsFor: (s: number, maxBytes: number, firstBatchShard: number | undefined) => FetchParams,
): Promise<void> {
  let order = targets.map((_, i) => i);
  let budget = params.maxBytes;
  let smallest = Infinity;
  for (let round = 1; ; round++) {
    // The first batch is free only until some partition has answered records.
    const firstBatchShard = smallest === Infinity ? shards.shardOf(targets[order[0]!]!.topic, targets[order[0]!]!.partition) : undefined;
    const allowance = new Map<number, number>();
    roundAllowances(targets, order, budget).forEach((a, k) => allowance.set(order[k]!, a));
    const reads: Promise<void>[] = [];
    for (const [s, indexes] of groups) {
      // The first round asks every partition (its offsets and errors answer even with nothing to read); later ones only those given bytes.
      const mine = indexes.filter((i) => allowance.has(i) && (round === 1 || allowance.get(i)! > 0));
      if (mine.length === 0) continue;
      let shardBudget = 0;
      for (const i of mine) shardBudget += allowance.get(i)!;
      const limited = mine.map((i) => ({ ...targets[i]!, partitionMaxBytes: allowance.get(i)! }));
      reads.push(shards.read(s, limited, paramsFor(s, shardBudget, firstBatchShard)).then((results) => fill(out, mine, results)));
    }
    await Promise.all(reads);
    for (const i of order) {
      if (allowance.get(i)! === 0) continue;
      budget -= out[i]!.records?.length ?? 0;
      smallest = Math.min(smallest, smallestBatch(out[i]!.records));
    }
    order = order.filter((i) => allowance.get(i) === 0 && hasMoreToRead(targets[i]!, out[i]!, params.readCommitted));
    // In a backlog the batches are alike: a budget smaller than every batch read so far would read nothing more.
    if (order.length === 0 || budget <= 0 || (smallest !== Infinity && budget < smallest) || round >= MAX_ROUNDS) return;
  }
}

/**
 * Parks the fetch on every shard of the request until their appends past the fetch offsets sum
 * to `needed` bytes (true), a shard ends its wait early (true: read again), or `waitMs` (false).
 */
function parkOnShards(
  targets: readonly FetchTarget[],
  read: readonly PartitionFetchResult[],
  groups: Map<number, number[]>,
  needed: number,
  waitMs: number,
  shards: FetchShardsAccess,
): Promise<boolean> {
  return new Promise((resolve) => {
    const parks: ShardPark[] = [];
    let counted = 0;
    let done = false;
    const finish = (woken: boolean): void => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      for (const p of parks) p.cancel();
      resolve(woken);
    };
    const timer = setTimeout(() => finish(false), waitMs);
    for (const [s, indexes] of groups) {
      const parts = indexes.map((i) => {
        const t = targets[i]!;
        return { topic: t.topic, partition: t.partition, fetchOffset: t.fetchOffset, seenHighWatermark: read[i]!.highWatermark };
      });
      const park = shards.park(s, parts, needed, waitMs, (bytes) => {
        counted += bytes;
        if (counted >= needed) finish(true);
      });
      parks.push(park);
      void park.ended.then(() => finish(true));
    }
  });
}

function pick(targets: readonly FetchTarget[], indexes: readonly number[]): FetchTarget[] {
  return indexes.map((i) => targets[i]!);
}

function fill(out: PartitionFetchResult[], indexes: readonly number[], results: readonly PartitionFetchResult[]): void {
  indexes.forEach((i, k) => (out[i] = results[k]!));
}
