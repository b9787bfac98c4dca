/**
 * The follower side of replication (issue 12), after Kafka's AbstractFetcherThread /
 * ReplicaFetcherThread / LeaderEndPoint: what a fetcher needs from the local replica and from the
 * leader, kept as interfaces so the state machine is testable with a fake leader.
 */

/** replica.* settings a fetcher uses (Kafka's names in the comments). */
/** What this broker's replica fetchers count for the metrics: record bytes appended as a follower (Kafka's ReplicationBytesInPerSec). */
export interface ReplicationTraffic {
  bytesIn: number;
}

export interface FetcherConfig {
  /** broker.id: sent as replica_id so the leader treats the fetch as a follower's. */
  brokerId: number;
  /** num.replica.fetchers: fetchers (connections) per source broker. */
  numFetchers: number;
  /** replica.fetch.max.bytes: per partition. */
  fetchMaxBytes: number;
  /** replica.fetch.response.max.bytes: per response. */
  fetchResponseMaxBytes: number;
  /** replica.fetch.min.bytes */
  fetchMinBytes: number;
  /** replica.fetch.wait.max.ms */
  fetchWaitMaxMs: number;
  /** replica.fetch.backoff.ms: after an error, before retrying a partition (or reconnecting). */
  fetchBackoffMs: number;
  /** replica.socket.timeout.ms: connect and request timeout towards the leader. */
  socketTimeoutMs: number;
}

/** The local replica a fetcher writes to (a Partition led elsewhere). */
export interface FollowerReplica {
  readonly topic: string;
  readonly partition: number;
  readonly logStartOffset: number;
  readonly logEndOffset: number;
  readonly highWatermark: number;
  /** Its log directory is offline: no write can succeed there while this broker runs. */
  readonly offline: boolean;
  /** The latest leader epoch the log holds data of, -1 when none. */
  latestEpoch(): number;
  /** Kafka's UnifiedLog.endOffsetForEpoch: largest epoch <= `epoch` and its end offset; undefined when none. */
  endOffsetForEpoch(epoch: number): { epoch: number; endOffset: number } | undefined;
  appendAsFollower(records: Buffer): Promise<unknown>;
  truncateTo(offset: number): Promise<void>;
  truncateFullyAndStartAt(offset: number): Promise<void>;
  setFollowerHighWatermark(leaderHw: number): number;
  followLeaderLogStartOffset(leaderLogStartOffset: number): Promise<void>;
}

/** One partition of a replica Fetch. */
export interface ReplicaFetchPartition {
  topic: string;
  /** The topic id ('' or the zero uuid when unknown: the fetch then uses v12, which names topics). */
  topicId: string;
  partition: number;
  fetchOffset: number;
  currentLeaderEpoch: number;
  /** -1: none (no truncation check by the leader). */
  lastFetchedEpoch: number;
  logStartOffset: number;
  maxBytes: number;
}

/** A partition's answer to a replica Fetch. */
export interface ReplicaFetchData {
  errorCode: number;
  highWatermark: number;
  logStartOffset: number;
  /** Set when the leader says our log diverged (Fetch v12+). */
  divergingEpoch: { epoch: number; endOffset: number } | undefined;
  records: Buffer;
}

export interface EpochEndOffsetResult {
  errorCode: number;
  leaderEpoch: number;
  endOffset: number;
}

export interface FetchParams {
  maxWaitMs: number;
  minBytes: number;
  maxBytes: number;
}

/** The leader as a fetcher sees it (Kafka's LeaderEndPoint). Results are keyed by tpKey. */
export interface LeaderEndpoint {
  readonly leaderId: number;
  /**
   * Connects if not connected. `truncationOnFetch`: the leader speaks Fetch v12+, so it answers
   * diverging_epoch and no OffsetForLeaderEpoch round is needed before fetching.
   */
  connect(): Promise<{ truncationOnFetch: boolean }>;
  fetch(partitions: readonly ReplicaFetchPartition[], params: FetchParams): Promise<Map<string, ReplicaFetchData>>;
  fetchEpochEndOffsets(
    partitions: readonly { topic: string; partition: number; currentLeaderEpoch: number; leaderEpoch: number }[],
  ): Promise<Map<string, EpochEndOffsetResult>>;
  /** The leader's log start ('earliest') or log end ('latest'); throws on an error answer. */
  fetchOffset(topic: string, partition: number, currentLeaderEpoch: number, which: 'earliest' | 'latest'): Promise<number>;
  close(): void;
}

/** Where a partition starts fetching (Kafka's InitialFetchState). */
export interface InitialFetchState {
  replica: FollowerReplica;
  topicId: string;
  leaderId: number;
  leaderEpoch: number;
  fetchOffset: number;
}
