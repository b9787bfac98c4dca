/**
 * A Fetch whose partitions live on several shards (docs/threads.md "A Fetch across shards", step
 * 2): the shards read in parallel within byte budgets the main thread gives them, so what they
 * read is what the answer holds, and a long poll counts every shard's new bytes towards
 * min_bytes. Sessions, throttling and down-conversion stay with the fetch service; this is its
 * `reads.fetch` at num.io.threads > 1.
 *
 * Reads: when every partition may take its whole partition_max_bytes within max_bytes (the usual
 * case: 1 MiB per partition, 50 MiB per request), every shard reads its partitions at once with
 * their full budgets: what one reader would read. Otherwise in rounds (fetch-rounds.ts): each
 * round gives the partitions still to read what is left in request order, the shards read in
 * parallel, the next round goes on with what the round did not use. A backlog fills the budget in
 * one round; partitions with little to read leave the rest to a second.
 *
 * Only the shard holding the first partition still to read may read a first batch larger than
 * the budget (v3+). When a partition that has records answered none before the first one that
 * did (its first batch larger than its limits, or than what the round left it), it is read once
 * more, alone, as one reader would (the whole budget, the first batch free for v3+), and the
 * answer cut to the limits again: a consumer never stalls behind a large batch. That cut is the
 * one case that drops bytes read (counted), and it needs a batch larger than partition_max_bytes.
 */
import type { FetchParams, FetchTarget, PartitionFetchResult } from '../../fetch/fetch-reader.js';
import type { HandoverStats } from './records-handover.js';
import { byShard, enoughToAnswer } from './shard-parts.js';
import { hasMoreToRead, partitionBudgetsSum, readEnd, recordBytes, trimToFetchBudget } from './fetch-budget.js';
import { readInRounds } from './fetch-rounds.js';

/**
 * A partition a shard parks on: where the fetch reads from and the high watermark its last read
 * saw (a follower's fetch: where its read ended, as it reads up to the log end).
 */
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
   * and the park, at `maxWaitMs`, or when it ends. A follower's fetch (`replicaId` >= 0) is woken
   * by appends (its own fetch is what moves the HW); a consumer's (-1) by the HW.
   */
  park(shard: number, parts: ParkedPart[], minBytes: number, maxWaitMs: number, replicaId: number, counted: (bytes: number) => void): ShardPark;
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
    const woken = await parkOnShards(targets, params, out, groups, Math.max(1, params.minBytes) - recordBytes(out), waitMs, shards);
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
  // A follower's fetch never reads in rounds: a read that goes on at a later offset would tell the leader the follower
  // holds what it has not received yet (the HW could pass it). Its max_bytes is the leader's cut, as Kafka's
  // replica.fetch.response.max.bytes: the shards read in parallel and the cut below keeps the answer within it.
  if (replica(params) || partitionBudgetsSum(targets) <= params.maxBytes) {
    const first = shardOfTarget(0);
    await Promise.all(
      [...groups].map(async ([s, indexes]) => fill(out, indexes, await shards.read(s, pick(targets, indexes), paramsFor(s, params.maxBytes, first)))),
    );
  } else {
    await readInRounds(targets, params, shardOfTarget, (s, part, p) => shards.read(s, part, p), out);
  }
  shards.stats.fetchBytesDropped += trimToFetchBudget(targets, out, params);
  // A partition with records that answered none before the first that did: one reader would have given it the whole
  // budget (its first batch whatever its size, v3+), where the round gave it what the earlier partitions' budgets left.
  const firstWithRecords = out.findIndex((r) => (r.records?.length ?? 0) > 0);
  const passed = targets.findIndex(
    (t, i) => (firstWithRecords < 0 || i < firstWithRecords) && hasMoreToRead(t, out[i]!, params.readCommitted, replica(params)),
  );
  if (passed >= 0) {
    const t = targets[passed]!;
    const [again] = await shards.read(shardOfTarget(passed), [t], now);
    out[passed] = again!;
    shards.stats.fetchBytesDropped += trimToFetchBudget(targets, out, params);
  }
  return out;
}

/**
 * Parks the fetch on every shard of the request until their appends past the fetch offsets sum
 * to `needed` bytes (true), a shard ends its wait early (true: read again), or `waitMs` (false).
 */
function parkOnShards(
  targets: readonly FetchTarget[],
  params: FetchParams,
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
    const replicaId = params.replicaId ?? -1;
    for (const [s, indexes] of groups) {
      const parts = indexes.map((i) => {
        const t = targets[i]!;
        const seen = replicaId >= 0 ? readEnd(t, read[i]!) : read[i]!.highWatermark;
        return { topic: t.topic, partition: t.partition, fetchOffset: t.fetchOffset, seenHighWatermark: seen };
      });
      const park = shards.park(s, parts, needed, waitMs, replicaId, (bytes) => {
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

/** A follower's fetch (its broker id >= 0). */
function replica(params: FetchParams): boolean {
  return (params.replicaId ?? -1) >= 0;
}
