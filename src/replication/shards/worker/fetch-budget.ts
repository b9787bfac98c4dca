/**
 * A Fetch's byte limits across shards (docs/threads.md "A Fetch across shards"). Each shard reads
 * its partitions at once with the request's whole max_bytes, so together they can read more than
 * the response may hold; this trims what they read to what one reader going through the
 * partitions in request order would have kept, at most: each partition at most its
 * partition_max_bytes and what the response budget has left, whole batches only, except that the
 * first batch of the first partition with records is kept whatever its size (Fetch v3+: a consumer
 * always progresses; v0-v2 make max_bytes a hard limit). A shard's read of a partition is a prefix
 * of the batches that a smaller budget reads, so cutting it gives what that budget would have read.
 * It can keep less than one reader would: a shard that spent its budget on a partition the cut
 * drops read its later partitions empty (their turn comes on the next fetch, the client rotating
 * partitions as Kafka's do).
 */
import { baseOffsetAt, BATCH_LENGTH, LOG_OVERHEAD } from '../../../protocol/records/batch-header.js';
import type { FetchParams, FetchTarget, PartitionFetchResult } from '../../fetch/fetch-reader.js';

/** Cuts `results` (in `targets` order) to the request's limits, in place. */
export function trimToFetchBudget(
  targets: readonly FetchTarget[],
  results: PartitionFetchResult[],
  params: Pick<FetchParams, 'maxBytes' | 'hardMaxBytes'>,
): void {
  let bytes = 0;
  let firstBatchFree = !params.hardMaxBytes;
  for (let i = 0; i < results.length; i++) {
    const r = results[i]!;
    const records = r.records;
    if (!records || records.length === 0) continue;
    const budget = Math.max(0, Math.min(targets[i]!.partitionMaxBytes, params.maxBytes - bytes));
    const kept = wholeBatchesWithin(records, budget, firstBatchFree);
    if (kept < records.length) results[i] = cut(r, records, kept);
    if (kept > 0) firstBatchFree = false;
    bytes += kept;
  }
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
