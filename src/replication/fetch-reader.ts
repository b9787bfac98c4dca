/**
 * Reads for Fetch: per-partition limits within the response limit, the first batch whole even
 * when larger (v3+), and a long-poll wait for min.bytes woken by appends.
 */
import { ErrorCode } from '../protocol/errors.js';
import { OffsetOutOfRangeError } from '../storage/errors.js';
import { DelayedFetch } from './delayed-fetch.js';
import { errorCodeOf } from './errors.js';
import type { Partition } from './partition.js';

export interface FetchTarget {
  topic: string;
  partition: number;
  fetchOffset: number;
  partitionMaxBytes: number;
  /** -1 = not checked. */
  currentLeaderEpoch: number;
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
}

export interface PartitionFetchResult {
  errorCode: number;
  highWatermark: number;
  lastStableOffset: number;
  logStartOffset: number;
  records: Buffer | null;
}

export type PartitionLookup = (topic: string, partition: number) => { partition?: Partition; errorCode: number };

const EMPTY = Buffer.alloc(0);

export function leaderEpochError(requested: number, current: number): number {
  if (requested < 0 || requested === current) return ErrorCode.NONE;
  return requested < current ? ErrorCode.FENCED_LEADER_EPOCH : ErrorCode.UNKNOWN_LEADER_EPOCH;
}

async function readAll(
  targets: readonly FetchTarget[],
  params: FetchParams,
  lookup: PartitionLookup,
): Promise<{ results: PartitionFetchResult[]; bytes: number; errors: boolean; partitions: Map<Partition, { fetchOffset: number; seenHighWatermark: number }> }> {
  const results: PartitionFetchResult[] = [];
  const partitions = new Map<Partition, { fetchOffset: number; seenHighWatermark: number }>();
  let bytes = 0;
  let errors = false;
  let minOneBatch = !params.hardMaxBytes;
  for (const t of targets) {
    const found = t.presetError !== undefined ? { errorCode: t.presetError } : lookup(t.topic, t.partition);
    const p = found.partition;
    if (!p) {
      errors = true;
      results.push({ errorCode: found.errorCode, highWatermark: -1, lastStableOffset: -1, logStartOffset: -1, records: EMPTY });
      continue;
    }
    const base = { highWatermark: p.highWatermark, lastStableOffset: p.lastStableOffset, logStartOffset: p.logStartOffset };
    const epochError = leaderEpochError(t.currentLeaderEpoch, p.leaderEpoch);
    if (epochError !== ErrorCode.NONE) {
      errors = true;
      results.push({ errorCode: epochError, ...base, records: EMPTY });
      continue;
    }
    partitions.set(p, { fetchOffset: t.fetchOffset, seenHighWatermark: base.highWatermark });
    const limit = Math.min(t.partitionMaxBytes, params.maxBytes - bytes);
    try {
      const upTo = params.readCommitted ? p.lastStableOffset : p.highWatermark;
      const { records } = limit > 0 || minOneBatch ? await p.read(t.fetchOffset, Math.max(limit, 0), minOneBatch, upTo) : { records: EMPTY };
      if (records.length > 0) minOneBatch = false;
      bytes += records.length;
      results.push({ errorCode: ErrorCode.NONE, ...base, records });
    } catch (err) {
      errors = true;
      const code = err instanceof OffsetOutOfRangeError ? ErrorCode.OFFSET_OUT_OF_RANGE : errorCodeOf(err);
      results.push({ errorCode: code, ...base, records: EMPTY });
    }
  }
  return { results, bytes, errors, partitions };
}

/**
 * Reads every target; when fewer than min.bytes came back (and nothing failed), waits for
 * appends up to max.wait.ms and reads again.
 */
export async function fetchRecords(
  targets: readonly FetchTarget[],
  params: FetchParams,
  lookup: PartitionLookup,
  waiting: Set<DelayedFetch>,
): Promise<PartitionFetchResult[]> {
  const first = await readAll(targets, params, lookup);
  if (params.maxWaitMs <= 0 || first.bytes >= params.minBytes || first.errors || first.partitions.size === 0) return first.results;
  const wait = new DelayedFetch(first.partitions, params.minBytes - first.bytes, params.maxWaitMs, waiting);
  await wait.completed;
  return (await readAll(targets, params, lookup)).results;
}
