/**
 * A replica fetcher's per-partition state (Kafka's PartitionFetchState) and the small pure pieces
 * the fetcher loop uses: which errors mean "the leader is not ready yet", the whole batches of an
 * answer, error classification.
 */
import { ErrorCode } from '../../protocol/errors.js';
import { batchSize } from '../../protocol/records/batch-header.js';
import type { FollowerReplica, InitialFetchState } from './types.js';

export type FetchStateKind = 'pending' | 'truncating' | 'fetching';

/** Kafka's PartitionFetchState. */
export interface PartitionFetchState {
  readonly key: string;
  readonly replica: FollowerReplica;
  readonly topicId: string;
  readonly currentLeaderEpoch: number;
  fetchOffset: number;
  /** -1 when unknown. */
  lastFetchedEpoch: number;
  /** pending: added, waiting to learn whether the leader truncates on fetch. */
  kind: FetchStateKind;
  /** Not fetched before this time (ms) after an error. */
  delayUntil: number;
  /** How far behind the leader's high watermark the last fetch left it; -1 unknown. */
  lag: number;
  /** An append or truncation in progress. */
  busy: Promise<unknown> | undefined;
  /** Whether the leader has answered a fetch of it without error since it was added. */
  answered: boolean;
  /** Quick retries spent on "the leader is not ready yet" errors before the first answer. */
  quickRetries: number;
}

/**
 * Errors a follower meets when it asks before the leader has processed its own LeaderAndIsr (or
 * the UpdateMetadata with the topic's id): the controller sends both brokers theirs at once.
 */
export const LEADER_NOT_READY = new Set<number>([
  ErrorCode.UNKNOWN_TOPIC_ID,
  ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
  ErrorCode.NOT_LEADER_OR_FOLLOWER,
  ErrorCode.UNKNOWN_LEADER_EPOCH,
]);
/** Before a partition's first answer, those errors are retried after this long (not replica.fetch.backoff.ms)... */
export const QUICK_RETRY_MS = 50;
/** ...this many times (about one default backoff in all), then the backoff applies. */
export const QUICK_RETRIES = 20;

export const EMPTY = Buffer.alloc(0);
/** Kafka's 12-byte log overhead (base offset + length). */
const LOG_OVERHEAD = 12;

/** The whole batches at the front of `records` (a leader may cut the last one short). */
export function wholeBatches(records: Buffer): Buffer {
  let pos = 0;
  while (pos + LOG_OVERHEAD <= records.length) {
    const size = batchSize(records, pos);
    if (size <= LOG_OVERHEAD || pos + size > records.length) break;
    pos += size;
  }
  return pos === records.length ? records : records.subarray(0, pos);
}

/** A partition's state when it is added (or re-added with a new leader epoch). */
export function initialFetchState(key: string, init: InitialFetchState): PartitionFetchState {
  return {
    key,
    replica: init.replica,
    topicId: init.topicId,
    currentLeaderEpoch: init.leaderEpoch,
    fetchOffset: init.fetchOffset,
    lastFetchedEpoch: -1,
    kind: 'pending',
    delayUntil: 0,
    lag: -1,
    busy: undefined,
    answered: false,
    quickRetries: 0,
  };
}

export function isCorrupt(err: unknown): boolean {
  return err instanceof Error && (err.name === 'CorruptRecordError' || err.name === 'RecordTooLargeError');
}
