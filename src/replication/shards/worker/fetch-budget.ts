/**
 * A Fetch's byte limits across shards (docs/threads.md "A Fetch across shards"): how much each
 * partition may read in a round of shard reads, which partitions a later round still serves, and
 * the cut that keeps a gathered answer within the request's limits in request order.
 *
 * Kafka fills the partitions in request order, each up to its partition_max_bytes and what the
 * response budget has left, whole batches only, the first batch of the first partition with
 * records whatever its size (Fetch v3+: a consumer always progresses; v0-v2 make max_bytes a hard
 * limit). Shards read in parallel, so a round cannot know what an earlier partition on another
 * shard will take: it gives each partition what is left once every earlier partition of the
 * round took its whole partition_max_bytes (`roundAllowances`). That never exceeds max_bytes and
 * is exactly Kafka's read for every partition given its whole budget; the partitions it leaves
 * out get what the round did not use in the next round (cross-shard-fetch.ts).
 */
import { baseOffsetAt, BATCH_LENGTH, LOG_OVERHEAD } from '../../../protocol/records/batch-header.js';
import { ErrorCode } from '../../../protocol/errors.js';
import type { FetchParams, FetchTarget, PartitionFetchResult } from '../../fetch/fetch-reader.js';

/** What the request's partitions may read in all: their partition_max_bytes summed (a partition answered with an error reads nothing). */
export function partitionBudgetsSum(targets: readonly FetchTarget[]): number {
  let sum = 0;
  for (const t of targets) if (t.presetError === undefined) sum += Math.max(0, t.partitionMaxBytes);
  return sum;
}

/**
 * What each of `order` (indexes of `targets`, request order) may read this round out of
 * `budget`: its partition_max_bytes while the earlier ones' full budgets leave that much, then
 * the rest, then 0. Their sum never exceeds `budget`.
 */
export function roundAllowances(targets: readonly FetchTarget[], order: readonly number[], budget: number): number[] {
  let left = Math.max(0, budget);
  return order.map((i) => {
    const t = targets[i]!;
    const mine = t.presetError === undefined ? Math.min(Math.max(0, t.partitionMaxBytes), left) : 0;
    left -= mine;
    return mine;
  });
}

/** Whether a partition answered without error has records past its fetch offset that this answer did not carry (up to the HW, or the LSO for read_committed). */
export function hasMoreToRead(target: FetchTarget, r: PartitionFetchResult, readCommitted: boolean): boolean {
  if (r.errorCode !== ErrorCode.NONE || r.divergingEpoch) return false;
  const upTo = readCommitted ? r.lastStableOffset : r.highWatermark;
  return upTo > target.fetchOffset && (r.records?.length ?? 0) === 0;
}

/** The smallest whole batch in `records` (Infinity for none). */
export function smallestBatch(records: Buffer | null): number {
  let smallest = Infinity;
  if (!records) return smallest;
  let pos = 0;
  while (pos + LOG_OVERHEAD <= records.length) {
    const size = LOG_OVERHEAD + records.readInt32BE(pos + BATCH_LENGTH);
    if (pos + size > records.length) break;
    smallest = Math.min(smallest, size);
    pos += size;
  }
  return smallest;
}

/** Record bytes of an answer. */
export function recordBytes(results: readonly (PartitionFetchResult | undefined)[]): number {
  let n = 0;
  for (const r of results) n += r?.records?.length ?? 0;
  return n;
}

/**
 * Cuts `results` (in `targets` order) to the request's limits, in place, as one reader going
 * through the partitions in request order would have kept them; answers the bytes cut. A read of
 * a partition is a prefix of the batches a larger budget reads, so cutting it gives what the
 * smaller budget would have read. The budgeted rounds read nothing it cuts but a first batch
 * larger than its partition's budget that another shard's partition, earlier in the request,
 * made no longer the first with records.
 */
export function trimToFetchBudget(
  targets: readonly FetchTarget[],
  results: PartitionFetchResult[],
  params: Pick<FetchParams, 'maxBytes' | 'hardMaxBytes'>,
): number {
  let bytes = 0;
  let dropped = 0;
  let firstBatchFree = !params.hardMaxBytes;
  for (let i = 0; i < results.length; i++) {
    const r = results[i]!;
    const records = r.records;
    if (!records || records.length === 0) continue;
    const budget = Math.max(0, Math.min(targets[i]!.partitionMaxBytes, params.maxBytes - bytes));
    const kept = wholeBatchesWithin(records, budget, firstBatchFree);
    if (kept < records.length) {
      results[i] = cut(r, records, kept);
      dropped += records.length - kept;
    }
    if (kept > 0) firstBatchFree = false;
    bytes += kept;
  }
  return dropped;
}

/** How many leading bytes of `records` are whole batches within `budget` (the first batch whatever its size when `firstBatchFree`). */
export function wholeBatchesWithin(records: Buffer, budget: number, firstBatchFree: boolean): number {
  let end = 0;
  // Message sets v0/v1 and batches v2 share the framing: offset (8 bytes), size (4), then size bytes.
  while (end + LOG_OVERHEAD <= records.length) {
    const next = end + LOG_OVERHEAD + records.readInt32BE(end + BATCH_LENGTH);
    if (next > records.length) break;
    if (next > budget && !(end === 0 && firstBatchFree)) break;
    end = next;
  }
  return end;
}

/** The result with only the first `kept` bytes of its records, and the aborted transactions that start before the first batch cut. */
function cut(r: PartitionFetchResult, records: Buffer, kept: number): PartitionFetchResult {
  const out: PartitionFetchResult = { ...r, records: records.subarray(0, kept) };
  // Nothing kept: no aborted transactions either, as a read of no records answers.
  if (kept === 0) {
    if (r.abortedTransactions) out.abortedTransactions = [];
  } else if (r.abortedTransactions && kept + 8 <= records.length) {
    const cutAt = baseOffsetAt(records, kept);
    out.abortedTransactions = r.abortedTransactions.filter((t) => t.firstOffset < cutAt);
  }
  return out;
}
