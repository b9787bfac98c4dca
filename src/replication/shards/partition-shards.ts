/**
 * The seam between the request handlers and the partitions' owners (issue 26, docs/threads.md
 * "The order to build it", step 0). With shard workers a partition may live on another thread,
 * so nothing outside its owner may hold a `Partition`: the handlers and admin services ask the
 * owners through this interface instead. Every call is request-level (a threaded implementation
 * sends ONE message per (request, shard)), async, takes and returns plain structured-cloneable
 * data (no Partition, no functions, no class instances), and answers in the caller's order.
 *
 * Implementations: in-thread-shards.ts (today's: one shard, ReplicaManager in the same thread);
 * shard workers (step 1) add a second one. `shardOf` is the pure assignment every thread computes
 * without asking anyone.
 */
import { INTERNAL_TOPICS } from '../../metadata/cluster-model.js';
import type { AppendOutcome, AppendRequest, TxnMarker } from '../append/leader-appends.js';
import type { VerifiedTxnProducer } from '../append/txn-verification-guards.js';
import type { FetchParams, FetchTarget, PartitionFetchResult } from '../fetch/fetch-reader.js';
import type { LogDirState } from '../../storage/manager/log-manager.js';
import type { LogConfig } from '../../storage/config.js';

export type { AppendOutcome, FetchParams, FetchTarget, PartitionFetchResult, LogDirState, TxnMarker };

/** One partition's part of a Produce. */
export interface ProducePart {
  topic: string;
  partition: number;
  records: Buffer | null;
  /** KIP-890: the transactional producer verification admitted for this partition. */
  verifiedTxn?: VerifiedTxnProducer;
}

/** KIP-890: a transactional producer's batch to one partition, before its append (server/txn-produce-verification.ts). */
export interface TxnGuardPart {
  topic: string;
  partition: number;
  producer: VerifiedTxnProducer;
}

/** Whether the partition is led here, and whether a verification (or the log's open transaction) already vouches for the producer. */
export interface TxnGuardState {
  leader: boolean;
  held: boolean;
  /** The leader epoch now: a grant for a verification asked at this epoch. */
  leaderEpoch: number;
}

/** What a Produce says for all its partitions (AppendRequest without the per-partition fields). */
export type ProduceOptions = Omit<AppendRequest, 'verifiedTxn'>;

/** ListOffsets for one partition. */
export interface ListOffsetsPart {
  topic: string;
  partition: number;
  /** -1: latest, -2: earliest, -3: max timestamp, -4: earliest local, -5: latest tiered; else a timestamp. */
  timestamp: bigint;
  /** -1: not checked (ListOffsets before v4). */
  currentLeaderEpoch: number;
}

export interface ListOffsetsOptions {
  /** read_committed: the latest offset is the last stable offset. */
  isolationCommitted: boolean;
  /** A replica asks (replica id >= 0): it may read up to the log end. */
  fromReplica: boolean;
}

/** One partition's answer; `found` false (with NONE) when no offset matches. */
export interface ListOffsetsResult {
  errorCode: number;
  found: boolean;
  offset: number;
  timestamp: number;
  leaderEpoch: number;
}

/** OffsetForLeaderEpoch for one partition. */
export interface EpochEndPart {
  topic: string;
  partition: number;
  /** -1: not checked (before v2). */
  currentLeaderEpoch: number;
  leaderEpoch: number;
}

export interface EpochEndResult {
  errorCode: number;
  leaderEpoch: number;
  endOffset: number;
}

/** DeleteRecords for one partition: cut the log before `offset` (-1: the high watermark). */
export interface DeleteRecordsPart {
  topic: string;
  partition: number;
  offset: number;
}

export interface DeleteRecordsResult {
  errorCode: number;
  /** The log start offset after the deletion (the low watermark with followers); -1 on error. */
  lowWatermark: number;
}

/** WriteTxnMarkers for one partition. */
export interface TxnMarkerPart {
  topic: string;
  partition: number;
  marker: TxnMarker;
}

/** One producer a partition's leader tracks (DescribeProducers, KIP-664). */
export interface ActiveProducer {
  producerId: bigint;
  producerEpoch: number;
  lastSequence: number;
  lastTimestamp: number;
  coordinatorEpoch: number;
  currentTxnStartOffset: number;
}

export interface DescribeProducersResult {
  errorCode: number;
  activeProducers: ActiveProducer[];
}

export interface TopicPartitionRef {
  topic: string;
  partition: number;
}

/**
 * A hosted partition as its owner sees it, as plain data (metrics, health, tests): what a reader
 * used to take off a `Partition` it held.
 */
export interface PartitionState {
  topic: string;
  partition: number;
  /** Whether this broker leads it (embedded mode: always, once its log is open). */
  leader: boolean;
  leaderEpoch: number;
  logStartOffset: number;
  logEndOffset: number;
  highWatermark: number;
  lastStableOffset: number;
  /** Bytes of the log on disk. */
  sizeBytes: number;
  segmentCount: number;
  /** The replicas and ISR the partition itself holds (cluster mode; empty in embedded mode, where the metadata's [self] stands). */
  replicas: number[];
  isr: number[];
  /** A reassignment is in progress (cluster mode). */
  reassigning: boolean;
  /** Consumer fetches parked on it, waiting for data. */
  fetchWaiters: number;
  /** The folder of its log's files (`<log dir>/<topic>-<partition>`). */
  logDir: string;
  /** Its log directory failed (the partition answers errors until the broker restarts). */
  offline: boolean;
  /** The log's effective config, only when asked for (`PartitionStatesOptions.config`). */
  config?: LogConfig;
}

export interface PartitionStatesOptions {
  /** Include each log's effective config. A scrape leaves it out: it triples what crosses per partition. */
  config?: boolean;
  /**
   * Leave out a shard that has not answered within this many ms (num.io.threads > 1): a metrics
   * scrape must not wait on a worker whose loop is stuck. Without it, every live shard is awaited.
   */
  deadlineMs?: number;
}

/**
 * One shard's LogManager figures for the broker-wide metrics (flushes, offline directories), as
 * plain data: the main thread sums every shard's at scrape time (num.io.threads > 1).
 */
export interface LogManagerStats {
  /** The flushes that synced data (LogFlushRateAndTimeMs): a copy of the shard's LatencyHistogram. */
  flush: { count: number; sumMs: number; buckets: Float64Array };
  /** Each log directory and whether it is online on this shard. */
  dirs: { dir: string; online: boolean }[];
  /** Cluster mode: this shard's replica fetchers (bytes appended as a follower, the largest lag in records, partitions given up). */
  replication?: ReplicationStats;
}

export interface ReplicationStats {
  bytesIn: number;
  maxLag: number;
  failedPartitions: number;
}

export interface PartitionShards {
  /** How many shards there are (1: every partition on this thread). */
  readonly count: number;
  /** The shard that owns a partition: the pure assignment `shardOf` below, for this `count`. */
  shardOf(topic: string, partition: number): number;

  /**
   * Appends each part's batches (Produce). Ordering contract (KIP-890's admission and the
   * per-partition arrival order): every part's arrival turn is taken SYNCHRONOUSLY inside this
   * call, before it returns its promise, so a caller that releases a producer's later batches
   * (TxnAdmission.release) right after calling it keeps today's order. A threaded
   * implementation does so by posting its messages (FIFO per channel) before returning.
   * Results in `parts` order.
   */
  produce(parts: readonly ProducePart[], req: ProduceOptions): Promise<AppendOutcome[]>;

  /** Fetch's reads with the long-poll wait (sessions and throttling stay with the caller). Results in `targets` order. */
  fetch(targets: readonly FetchTarget[], params: FetchParams): Promise<PartitionFetchResult[]>;

  /** ListOffsets (Kafka's Partition.fetchOffsetForTimestamp per partition). Results in `parts` order. */
  listOffsets(parts: readonly ListOffsetsPart[], opts: ListOffsetsOptions): Promise<ListOffsetsResult[]>;

  /** OffsetForLeaderEpoch; a consumer (fromReplica false) never learns offsets beyond the high watermark. */
  offsetsForLeaderEpoch(parts: readonly EpochEndPart[], fromReplica: boolean): Promise<EpochEndResult[]>;

  /**
   * DeleteRecords: every partition is cut first, then they wait together for their followers'
   * log starts (one timeout for the request). Results in `parts` order.
   */
  deleteRecords(parts: readonly DeleteRecordsPart[], timeoutMs: number): Promise<DeleteRecordsResult[]>;

  /** WriteTxnMarkers: each marker in arrival order with produces, answered once the ISR holds it. Error codes in `parts` order. */
  writeTxnMarkers(parts: readonly TxnMarkerPart[]): Promise<number[]>;

  /** DescribeProducers: the producers each partition's leader tracks. */
  describeProducers(parts: readonly TopicPartitionRef[]): Promise<DescribeProducersResult[]>;

  /**
   * KIP-890, on the partitions' owners (the guards live with the ReplicaManager that appends):
   * each part's state; a producer whose transaction the log already has open is granted at once.
   */
  txnGuardStates(parts: readonly TxnGuardPart[]): Promise<TxnGuardState[]>;

  /** KIP-890: the coordinator confirmed these; each is granted as of the leader epoch it was asked at. */
  grantTxnGuards(parts: readonly (TxnGuardPart & { leaderEpoch: number })[]): Promise<number[]>;

  /** DescribeLogDirs: every log directory and the logs in it (each shard's, merged by directory). */
  logDirs(): Promise<LogDirState[]>;

  /**
   * The state of hosted partitions: those of `filter` that are hosted here, in `filter` order
   * (one not hosted is left out), or, without a filter, every hosted partition (shard by shard).
   * One message per shard however many partitions: a scrape of 10,000 is N messages.
   */
  partitionStates(filter?: readonly TopicPartitionRef[], opts?: PartitionStatesOptions): Promise<PartitionState[]>;

  /** Each live shard's flush stats and log directories (one message per shard), shard by shard; `deadlineMs` as partitionStates'. */
  logManagerStats(opts?: { deadlineMs?: number }): Promise<LogManagerStats[]>;
}

/** FNV-1a over the name's UTF-16 code units: stable across threads, restarts and Node versions. */
function topicHash(topic: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < topic.length; i++) {
    h ^= topic.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

/**
 * The shard of a partition among `count` shards (docs/threads.md "Assignment"). Shard 0 is the
 * control thread's: the internal topics always (the coordinators append to them without a
 * hand-over), and every partition when it is the only shard. Other topics are spread over
 * shards 1..count-1, consecutive partitions of a topic on consecutive shards, starting where
 * the topic's name hashes to. A pure function of (topic, partition, count): the same answer on
 * every thread and after a restart. The name rather than the topic id: no metadata lookup on
 * the hot path, and a re-created topic lands where the old one was.
 */
export function shardOf(topic: string, partition: number, count: number): number {
  if (count <= 1 || INTERNAL_TOPICS.has(topic)) return 0;
  const workers = count - 1;
  return 1 + (((topicHash(topic) % workers) + (partition % workers)) % workers);
}
