/**
 * What the partitions' owner answers, per partition, for the request-level calls of
 * PartitionShards that read a partition's state (ListOffsets, OffsetForLeaderEpoch,
 * DescribeProducers, DeleteRecords): the logic the handlers and LogAdmin used to run on a
 * Partition they held, moved to the owner's side of the seam (docs/threads.md step 0). Plain
 * results only.
 */
import { ErrorCode } from '../../protocol/errors.js';
import type { MetadataStore } from '../../metadata/metadata-store.js';
import { allInSlices, type LoopSlicer } from '../../common/slices.js';
import { errorCodeOf } from '../errors.js';
import { leaderEpochError } from '../fetch/fetch-reader.js';
import type { Partition } from '../partition/partition.js';
import type {
  ActiveProducer,
  DeleteRecordsPart,
  DeleteRecordsResult,
  EpochEndPart,
  EpochEndResult,
  ListOffsetsOptions,
  ListOffsetsPart,
  ListOffsetsResult,
} from './partition-shards.js';

const LATEST_TIMESTAMP = -1n;
const EARLIEST_TIMESTAMP = -2n;
const MAX_TIMESTAMP = -3n;
const EARLIEST_LOCAL_TIMESTAMP = -4n;
const LATEST_TIERED_TIMESTAMP = -5n;

/** A partition as the request lookups find it: the leader's, or why not. */
export type LeaderLookup = (topic: string, partition: number) => { partition?: Partition; errorCode: number };

function listOffsetsFailure(errorCode: number): ListOffsetsResult {
  return { errorCode, found: false, offset: -1, timestamp: -1, leaderEpoch: -1 };
}

/**
 * Kafka's Partition.fetchOffsetForTimestamp. A client (not a replica) asking a leader whose high
 * watermark has not reached the start of its epoch (a new leader whose followers have not
 * fetched yet) gets OFFSET_NOT_AVAILABLE (retriable) for the latest offset, and for a timestamp
 * lookup that finds nothing below what it may read; the earliest offset is always known.
 */
export async function listOffsetsOf(lookup: LeaderLookup, part: ListOffsetsPart, opts: ListOffsetsOptions): Promise<ListOffsetsResult> {
  const { partition: p, errorCode } = lookup(part.topic, part.partition);
  if (!p) return listOffsetsFailure(errorCode);
  const epochErr = leaderEpochError(part.currentLeaderEpoch, p.leaderEpoch);
  if (epochErr !== ErrorCode.NONE) return listOffsetsFailure(epochErr);
  const { timestamp } = part;
  const lastFetchable = opts.fromReplica ? p.logEndOffset : opts.isolationCommitted ? p.lastStableOffset : p.highWatermark;
  const notAvailable = !opts.fromReplica && p.leaderEpochStartOffset > p.highWatermark;
  const answer = (offset: number, ts: number, leaderEpoch: number): ListOffsetsResult => ({
    errorCode: ErrorCode.NONE,
    found: true,
    offset,
    timestamp: ts,
    leaderEpoch,
  });
  if (timestamp === LATEST_TIMESTAMP) return notAvailable ? listOffsetsFailure(ErrorCode.OFFSET_NOT_AVAILABLE) : answer(lastFetchable, -1, p.leaderEpoch);
  if (timestamp === EARLIEST_TIMESTAMP || timestamp === EARLIEST_LOCAL_TIMESTAMP) return answer(p.logStartOffset, -1, p.epochAt(p.logStartOffset));
  // No tiered storage: nothing is tiered, Kafka answers "no offset" here.
  if (timestamp === LATEST_TIERED_TIMESTAMP) return listOffsetsFailure(ErrorCode.NONE);
  let found: { offset: number; timestamp: number } | null;
  try {
    found = await p.offsetForTimestamp(timestamp === MAX_TIMESTAMP ? 'max' : Number(timestamp));
  } catch (err) {
    return listOffsetsFailure(errorCodeOf(err));
  }
  // Consumers only see what is below the high watermark (the last stable offset for read_committed).
  if (found && found.offset < lastFetchable) return answer(found.offset, found.timestamp, p.epochAt(found.offset));
  return listOffsetsFailure(notAvailable ? ErrorCode.OFFSET_NOT_AVAILABLE : ErrorCode.NONE);
}

/** OffsetForLeaderEpoch for one partition: the end offset of the epoch from the leader-epoch cache. */
export function epochEndOf(lookup: LeaderLookup, part: EpochEndPart, fromReplica: boolean): EpochEndResult {
  const { partition: p, errorCode } = lookup(part.topic, part.partition);
  if (!p) return { errorCode, leaderEpoch: -1, endOffset: -1 };
  const epochErr = leaderEpochError(part.currentLeaderEpoch, p.leaderEpoch);
  if (epochErr !== ErrorCode.NONE) return { errorCode: epochErr, leaderEpoch: -1, endOffset: -1 };
  const res = p.endOffsetForEpoch(part.leaderEpoch);
  // Consumers (validating their position) never learn offsets beyond the high watermark.
  const endOffset = !fromReplica && res.endOffset > p.highWatermark ? p.highWatermark : res.endOffset;
  return { errorCode: ErrorCode.NONE, leaderEpoch: res.epoch, endOffset };
}

/** The producers a leader tracks, as DescribeProducers lists them. */
export function activeProducersOf(p: Partition): ActiveProducer[] {
  const out: ActiveProducer[] = [];
  for (const e of p.producers.producers.values()) {
    out.push({
      producerId: e.producerId,
      producerEpoch: e.epoch,
      lastSequence: e.batches.at(-1)?.lastSeq ?? -1,
      lastTimestamp: e.lastTimestamp,
      coordinatorEpoch: e.coordinatorEpoch,
      currentTxnStartOffset: e.currentTxnFirstOffset,
    });
  }
  return out;
}

/** What DeleteRecords needs of a leader (a Partition is one; so is server/admin's LocalPartition). */
export interface DeletableLeader {
  readonly log: { deleteRecordsBefore(offset: number): Promise<number> };
  readonly highWatermark: number;
  /** False for a follower (cluster mode): its log is not the admin's to cut. */
  readonly isLeader: boolean;
  /** Called after the log start moved under the partition. */
  onLogTruncated(): void;
  /** The lowest log start offset among this leader and its live followers (absent: the log's own). */
  lowWatermark?(isAlive: (brokerId: number) => boolean): number;
  /** Resolves once the low watermark reaches `offset`, or REQUEST_TIMED_OUT after `timeoutMs`. */
  awaitLowWatermark?(offset: number, timeoutMs: number, isAlive: (brokerId: number) => boolean): Promise<DeleteRecordsResult>;
}

/**
 * DeleteRecords over the leaders `local` finds, as Kafka's ReplicaManager.deleteRecords: each
 * leader cuts its own log, then, with followers, its answer waits until every live replica's
 * log start has followed (they learn it from their fetch responses and report theirs in their
 * fetches), or REQUEST_TIMED_OUT after `timeoutMs`. Every partition is cut first (started in
 * slices: a request may name 100,000), then they wait together. Results in `parts` order.
 */
export function deleteRecordsOn(
  local: (topic: string, partition: number) => DeletableLeader | undefined,
  metadata: Pick<MetadataStore, 'topic' | 'brokers'>,
  parts: readonly DeleteRecordsPart[],
  timeoutMs: number,
  slicer?: LoopSlicer,
): Promise<DeleteRecordsResult[]> {
  const one = async (part: DeleteRecordsPart): Promise<DeleteRecordsResult> => {
    const t = metadata.topic(part.topic);
    if (!t || !t.partitions.some((p) => p.partition === part.partition)) return { errorCode: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, lowWatermark: -1 };
    const p = local(part.topic, part.partition);
    if (!p || !p.isLeader) return { errorCode: ErrorCode.NOT_LEADER_OR_FOLLOWER, lowWatermark: -1 };
    const hw = p.highWatermark;
    const target = part.offset === -1 ? hw : part.offset;
    if (target < 0 || target > hw) return { errorCode: ErrorCode.OFFSET_OUT_OF_RANGE, lowWatermark: -1 };
    try {
      const logStart = await p.log.deleteRecordsBefore(target);
      p.onLogTruncated();
      if (!p.lowWatermark || !p.awaitLowWatermark) return { errorCode: ErrorCode.NONE, lowWatermark: logStart };
      const live = new Set(metadata.brokers().map((b) => b.id));
      const isAlive = (id: number): boolean => live.has(id);
      const lowWatermark = p.lowWatermark(isAlive);
      if (lowWatermark >= target) return { errorCode: ErrorCode.NONE, lowWatermark };
      return await p.awaitLowWatermark(target, timeoutMs, isAlive);
    } catch (err) {
      return { errorCode: errorCodeOf(err), lowWatermark: -1 };
    }
  };
  return allInSlices(parts, one, slicer);
}
