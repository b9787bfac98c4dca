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
import { baseOffsetAt, BATCH_LENGTH, lastOffsetAt, LOG_OVERHEAD } from '../../../protocol/records/batch-header.js';
import { ErrorCode } from '../../../protocol/errors.js';
import type { FetchParams, FetchTarget, PartitionFetchResult } from '../../fetch/fetch-reader.js';

/** What the request's partitions may read in all: their partition_max_bytes summed (a partition answered with an error reads nothing). */
export function partitionBudgetsSum(targets: readonly FetchTarget[]): number {
  let sum = 0;
  for (const t of targets) if (t.presetError === undefined) sum += Math.max(0, t.partitionMaxBytes);
  return sum;
}

/**
 * What each partition still to read may read this round out of `budget`, given each one's own
 * budget left (request order): its whole budget while the earlier ones' whole budgets leave that
 * much, then the rest, then 0. Their sum never exceeds `budget`.
 */
export function roundAllowances(budgets: readonly number[], budget: number): number[] {
  let left = Math.max(0, budget);
  return budgets.map((own) => {
    const mine = Math.min(Math.max(0, own), left);
    left -= mine;
    return mine;
  });
}

/**
 * Where a partition's read would go on: the offset after its answer's last batch (its fetch
 * offset when it answered none) while records remain below the HW (the LSO for read_committed;
 * for a follower's fetch, `replica`, the log end offset: it reads past the HW, and without that
 * offset in the answer something may remain); undefined when nothing remains or it answered an error.
 */
export function continueFrom(target: FetchTarget, r: PartitionFetchResult, readCommitted: boolean, replica = false): number | undefined {
  if (r.errorCode !== ErrorCode.NONE || r.divergingEpoch) return undefined;
  const next = readEnd(target, r);
  const end = replica ? (r.logEndOffset ?? Infinity) : readCommitted ? r.lastStableOffset : r.highWatermark;
  return end > next ? next : undefined;
}

/** The offset after the answer's last whole batch; its fetch offset when it answered none. */
export function readEnd(target: FetchTarget, r: PartitionFetchResult): number {
  return r.records && r.records.length > 0 ? nextOffsetAfter(r.records) : target.fetchOffset;
}

/** Where the magic byte sits in a batch and in a v0/v1 message set entry alike. */
const MAGIC_AT = 16;

/** The offset after the last whole batch of `records`. */
function nextOffsetAfter(records: Buffer): number {
  let pos = 0;
  let next = -1;
  while (pos + LOG_OVERHEAD <= records.length) {
    const size = LOG_OVERHEAD + records.readInt32BE(pos + BATCH_LENGTH);
    if (pos + size > records.length) break;
    // Batches (magic 2) carry their last offset delta; a v0/v1 message set's offset field is its last offset.
    next = (records[pos + MAGIC_AT] ?? 0) >= 2 ? lastOffsetAt(records, pos) + 1 : baseOffsetAt(records, pos) + 1;
    pos += size;
  }
  return next;
}

/** One partition's answer read in two parts (the second from where the first ended): its records one after the other, the later offsets. */
export function joined(first: PartitionFetchResult, second: PartitionFetchResult): PartitionFetchResult {
  const more = second.records?.length ?? 0;
  if (more === 0 || second.errorCode !== ErrorCode.NONE)
    return { ...first, highWatermark: second.highWatermark, lastStableOffset: second.lastStableOffset, logStartOffset: second.logStartOffset };
  const out: PartitionFetchResult = {
    ...second,
    records: first.records && first.records.length > 0 ? Buffer.concat([first.records, second.records!]) : second.records,
  };
  if (first.abortedTransactions || second.abortedTransactions) {
    // A transaction overlapping both parts is in both lists.
    const seen = new Set<string>();
    out.abortedTransactions = [...(first.abortedTransactions ?? []), ...(second.abortedTransactions ?? [])].filter((t) => {
      const key = `${t.producerId}:${t.firstOffset}`;
      if (seen.has(key)) return false;
      seen.add(key);
      return true;
    });
  }
  return out;
}

/** Whether a partition that answered no records has some to read from its fetch offset (`continueFrom`'s limits). */
export function hasMoreToRead(target: FetchTarget, r: PartitionFetchResult, readCommitted: boolean, replica = false): boolean {
  return (r.records?.length ?? 0) === 0 && continueFrom(target, r, readCommitted, replica) !== undefined;
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
