/**
 * Reads for Fetch: per-partition limits within the response limit, the first batch whole even
 * when larger (v3+), and a long-poll wait for min.bytes woken by appends.
 *
 * A replica fetch (replica id >= 0, a follower) is Kafka's Partition.fetchRecords for followers:
 * only the leader answers it; a replica id outside the partition's replicas is refused
 * (UNKNOWN_LEADER_EPOCH when the fetch names a leader epoch, else NOT_LEADER_OR_FOLLOWER); a
 * last fetched epoch the leader's epoch history does not back answers diverging_epoch and
 * nothing else; otherwise the follower's fetch state is recorded (which may advance the high
 * watermark or bring it back into the ISR) and it reads up to the log end, not the HW.
 */
import { BATCH_LENGTH, LOG_OVERHEAD, lastOffsetAt } from '../../protocol/records/batch-header.js';
import { ErrorCode } from '../../protocol/errors.js';
import { OffsetOutOfRangeError } from '../../storage/errors.js';
import { DelayedFetch } from './delayed-fetch.js';
import { errorCodeOf } from '../errors.js';
import type { Partition } from '../partition/partition.js';

export interface FetchTarget {
  topic: string;
  partition: number;
  fetchOffset: number;
  partitionMaxBytes: number;
  /** -1 = not checked. */
  currentLeaderEpoch: number;
  /** Fetch v12+: the epoch of the last batch the fetcher holds (-1 = none), checked against the epoch history. */
  lastFetchedEpoch?: number;
  /** A replica fetch (v5+): the follower's log start offset; -1 = not given. */
  replicaLogStartOffset?: number;
  /** Set by the caller when it already knows the answer (unknown topic id...). */
  presetError?: number;
}

export interface FetchParams {
  maxWaitMs: number;
  minBytes: number;
  maxBytes: number;
  readCommitted: boolean;
  /** Fetch v0-v2: maxBytes is a hard limit (no oversized first batch). */
  hardMaxBytes: boolean;
  /** The fetching broker for a replica fetch (>= 0); -1 (or absent) for consumers. */
  replicaId?: number;
}

/**
 * Kafka's FetchRequest.DEBUGGING_CONSUMER_ID: a consumer (kafka-replica-verification.sh) that
 * may read any replica of a partition, a follower's too, up to that replica's high watermark.
 */
export const DEBUGGING_CONSUMER_ID = -2;

export interface PartitionFetchResult {
  errorCode: number;
  highWatermark: number;
  lastStableOffset: number;
  logStartOffset: number;
  records: Buffer | null;
  /** Where the fetcher's log diverges from the leader's (its last fetched epoch is not backed here). */
  divergingEpoch?: { epoch: number; endOffset: number };
  /** read_committed: aborted transactions overlapping the records returned (Kafka's FetchResponse field). */
  abortedTransactions?: { producerId: bigint; firstOffset: number }[];
  /**
   * A replica fetch read on a shard worker: the leader's log end offset just after the read (a
   * follower reads up to it, not the HW), so a fetch across shards knows what is left. Not encoded.
   */
  logEndOffset?: number;
}

export type PartitionLookup = (topic: string, partition: number) => { partition?: Partition; errorCode: number };

const EMPTY = Buffer.alloc(0);

export function leaderEpochError(requested: number, current: number): number {
  if (requested < 0 || requested === current) return ErrorCode.NONE;
  return requested < current ? ErrorCode.FENCED_LEADER_EPOCH : ErrorCode.UNKNOWN_LEADER_EPOCH;
}

/**
 * Kafka's validateLastFetchedEpoch: the end of the fetcher's last epoch in the leader's history;
 * diverging when the leader knows no such epoch (an earlier one ends its history there) or the
 * epoch ended before the fetch offset. undefined: no divergence. Throws OffsetOutOfRangeError
 * when the history says nothing of it or the fetch offset is below the log start.
 */
function divergingEpochOf(p: Partition, lastFetchedEpoch: number, fetchOffset: number): { epoch: number; endOffset: number } | undefined {
  const end = p.log.epochs.endOffsetFor(lastFetchedEpoch, p.logEndOffset);
  if (end.epoch < 0 || end.endOffset < 0 || fetchOffset < p.logStartOffset) throw new OffsetOutOfRangeError(fetchOffset, p.logStartOffset, p.logEndOffset);
  return end.epoch < lastFetchedEpoch || end.endOffset < fetchOffset ? end : undefined;
}

async function readAll(
  targets: readonly FetchTarget[],
  params: FetchParams,
  lookup: PartitionLookup,
): Promise<{
  results: PartitionFetchResult[];
  bytes: number;
  errors: boolean;
  partitions: Map<Partition, { fetchOffset: number; seenHighWatermark: number }>;
}> {
  const results: PartitionFetchResult[] = [];
  const partitions = new Map<Partition, { fetchOffset: number; seenHighWatermark: number }>();
  let bytes = 0;
  let errors = false;
  let minOneBatch = !params.hardMaxBytes;
  const replicaId = params.replicaId ?? -1;
  const fromFollower = replicaId >= 0;
  const now = fromFollower ? Date.now() : 0;
  for (const t of targets) {
    const found = t.presetError !== undefined ? { errorCode: t.presetError } : lookup(t.topic, t.partition);
    const p = found.partition;
    if (!p) {
      errors = true;
      results.push({ errorCode: found.errorCode, highWatermark: -1, lastStableOffset: -1, logStartOffset: -1, records: EMPTY });
      continue;
    }
    let base = { highWatermark: p.highWatermark, lastStableOffset: p.lastStableOffset, logStartOffset: p.logStartOffset };
    const epochError = leaderEpochError(t.currentLeaderEpoch, p.leaderEpoch);
    if (epochError !== ErrorCode.NONE) {
      errors = true;
      results.push({ errorCode: epochError, ...base, records: EMPTY });
      continue;
    }
    if (fromFollower && (replicaId === p.leaderId || !p.replicas.includes(replicaId))) {
      // Not one of its replicas (yet: a reassignment the leader has not heard of): the follower retries.
      errors = true;
      results.push({ errorCode: t.currentLeaderEpoch >= 0 ? ErrorCode.UNKNOWN_LEADER_EPOCH : ErrorCode.NOT_LEADER_OR_FOLLOWER, ...base, records: EMPTY });
      continue;
    }
    if (t.lastFetchedEpoch !== undefined && t.lastFetchedEpoch >= 0) {
      let diverging: { epoch: number; endOffset: number } | undefined;
      try {
        diverging = divergingEpochOf(p, t.lastFetchedEpoch, t.fetchOffset);
      } catch (err) {
        errors = true;
        results.push({ errorCode: err instanceof OffsetOutOfRangeError ? ErrorCode.OFFSET_OUT_OF_RANGE : errorCodeOf(err), ...base, records: EMPTY });
        continue;
      }
      if (diverging) {
        // Answered at once (no long poll), and the fetch state is not recorded: the fetcher truncates first.
        errors = true;
        results.push({ errorCode: ErrorCode.NONE, ...base, records: EMPTY, divergingEpoch: diverging });
        continue;
      }
    }
    const leaderEnd = p.logEndOffset;
    if (fromFollower && t.fetchOffset >= p.logStartOffset && t.fetchOffset <= leaderEnd) {
      p.updateFollowerFetchState(replicaId, t.fetchOffset, now, t.replicaLogStartOffset ?? -1);
      base = { highWatermark: p.highWatermark, lastStableOffset: p.lastStableOffset, logStartOffset: p.logStartOffset };
    }
    partitions.set(p, { fetchOffset: t.fetchOffset, seenHighWatermark: fromFollower ? leaderEnd : base.highWatermark });
    const limit = Math.min(t.partitionMaxBytes, params.maxBytes - bytes);
    try {
      const upTo = fromFollower ? leaderEnd : params.readCommitted ? p.lastStableOffset : p.highWatermark;
      const { records } = limit > 0 || minOneBatch ? await p.read(t.fetchOffset, Math.max(limit, 0), minOneBatch, upTo) : { records: EMPTY };
      if (records.length > 0) minOneBatch = false;
      bytes += records.length;
      const abortedTransactions = params.readCommitted && !fromFollower ? abortedIn(p, t.fetchOffset, records) : undefined;
      results.push({ errorCode: ErrorCode.NONE, ...base, records, ...(abortedTransactions ? { abortedTransactions } : {}) });
    } catch (err) {
      errors = true;
      const code = err instanceof OffsetOutOfRangeError ? ErrorCode.OFFSET_OUT_OF_RANGE : errorCodeOf(err);
      results.push({ errorCode: code, ...base, records: EMPTY });
    }
  }
  return { results, bytes, errors, partitions };
}

/**
 * The aborted transactions a read_committed consumer needs to drop records of the batches in
 * `records`, read from `fetchOffset`: those overlapping [fetchOffset, end of the last batch].
 */
function abortedIn(p: Partition, fetchOffset: number, records: Buffer): { producerId: bigint; firstOffset: number }[] {
  if (records.length === 0) return [];
  let pos = 0;
  let end = fetchOffset;
  while (pos + LOG_OVERHEAD <= records.length) {
    const size = records.readInt32BE(pos + BATCH_LENGTH) + LOG_OVERHEAD;
    if (pos + size > records.length || records.length - pos < 27) break;
    end = lastOffsetAt(records, pos) + 1;
    pos += size;
  }
  return p.log.collectAbortedTxns(fetchOffset, end).map((t) => ({ producerId: t.producerId, firstOffset: t.firstOffset }));
}

/**
 * Reads every target; when fewer than min.bytes came back (and nothing failed), waits for
 * appends up to max.wait.ms (for a replica fetch, up to what `replicaWait` allows) and reads again.
 */
export async function fetchRecords(
  targets: readonly FetchTarget[],
  params: FetchParams,
  lookup: PartitionLookup,
  waiting: Set<DelayedFetch>,
  replicaWait: (replicaId: number, maxWaitMs: number) => number = (_, ms) => ms,
): Promise<PartitionFetchResult[]> {
  const first = await readAll(targets, params, lookup);
  if (params.maxWaitMs <= 0 || first.bytes >= params.minBytes || first.errors || first.partitions.size === 0) return first.results;
  const replicaId = params.replicaId ?? -1;
  const maxWaitMs = replicaId >= 0 ? replicaWait(replicaId, params.maxWaitMs) : params.maxWaitMs;
  const wait = new DelayedFetch(first.partitions, params.minBytes - first.bytes, maxWaitMs, waiting, replicaId);
  await wait.completed;
  return (await readAll(targets, params, lookup)).results;
}
