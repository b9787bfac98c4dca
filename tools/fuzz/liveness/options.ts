/**
 * The liveness soak's options (`npm run fuzz -- --cluster`), their defaults and the bounds its
 * verdict uses. The defaults are the soak's; the short test (test/fuzz/cluster-liveness.test.ts)
 * passes smaller sizes and time.
 */
export const MB = 1024 * 1024;

/** The topic the replicated acks=all load writes and the consumer group reads. */
export const LOAD_TOPIC = 'liveness-load';
export const LOAD_PARTITIONS = 3;
export const GROUP_ID = 'liveness-group';
export const BROKERS = 3;

export interface LivenessOptions {
  /** Attack time: rounds start until it is up (the soak: 30 minutes). */
  attackMs: number;
  /** Rounds run at least (3: every broker is attacked once), however short the attack time. */
  minRounds: number;
  seed: number;
  /** Records a second of each of the two acks=all producers. */
  loadRate: number;
  /** F1: new topic names in one Metadata v4 request with allow_auto_topic_creation=true. */
  f1Topics: number;
  /** F2: times one DescribeConfigs names the target broker. */
  f2Names: number;
  /** F2: copies sent back to back on one connection whose answers are never read. */
  f2Unread: number;
  /** F5: idle connections opened to the target broker each round. */
  idleConnections: number;
  /** How long the unread answers and the idle connections are held each round. */
  holdMs: number;
  /** Mutated corpus inputs a second, beside the rounds (0: none). */
  fuzzRate: number;
  /** Bombs (tools/fuzz/bombs.ts, short sizes), one per round in turn; [] for none. */
  bombs: readonly string[];
  /** How long one attack may take before the harness gives up on its answer. */
  attackTimeoutMs: number;
  /** Verdict: the peak RSS of every broker must stay under this. */
  rssBoundBytes: number;
  /** A broker past this RSS is killed (protects the machine); that fails the run. */
  rssKillBytes: number;
  /** Verdict: p99 latency of each side client must stay under this. */
  p99BoundMs: number;
  /** zookeeper.session.timeout.ms of the brokers: short, so a held loop shows. */
  sessionTimeoutMs: number;
  /** Extra broker properties. */
  brokerProps?: Record<string, string>;
  log: (line: string) => void;
}

export const LIVENESS_DEFAULTS: Omit<LivenessOptions, 'log'> = {
  attackMs: 30 * 60_000,
  minRounds: 3,
  seed: 1,
  loadRate: 200,
  f1Topics: 10_000,
  f2Names: 10_000,
  f2Unread: 10,
  idleConnections: 3000,
  holdMs: 5000,
  fuzzRate: 20,
  bombs: ['legacy-gzip-100m', 'zstd-2g-list-offsets', 'create-partitions-25k', 'create-topics-25k', 'connections-500'],
  attackTimeoutMs: 60_000,
  rssBoundBytes: 1024 * MB,
  rssKillBytes: 3072 * MB,
  p99BoundMs: 1000,
  sessionTimeoutMs: 6000,
};

/**
 * APIs the fuzz stream never sends here. Without an authorizer any client may use them on
 * purpose (as in Kafka): the controller's and brokers' own requests (LeaderAndIsr, StopReplica,
 * UpdateMetadata, ControlledShutdown, WriteTxnMarkers), leader elections and reassignments,
 * topic and record deletion, config and quota changes. A mutated one may move a leader, delete
 * or expire records, or throttle the side clients by design, which is not what this soak
 * measures; the single-broker fuzz sends them all.
 */
export const FUZZ_DENIED_KEYS: ReadonlySet<number> = new Set([4, 5, 6, 7, 20, 21, 27, 33, 43, 44, 45, 49]);
