/**
 * The messages between the main thread (WorkerShards) and a shard worker (shard-worker.ts), all
 * structured-clone data. Produce records travel as a view (shared memory: nothing is copied) or
 * inside an ArrayBuffer moved in the transfer list; fetched records come back the same way.
 * Each postMessage carries an array of them: what its sender posted in one turn (coalesced-posts.ts).
 */
import type { TopicInfo } from '../../../metadata/cluster-model.js';
import type { LogConfig } from '../../../storage/config.js';
import type { ReplicationConfig } from '../../replication-config.js';
import type { LogManagerSettings } from '../log-manager-options.js';
import type { AppendOrigin, AppendOutcome } from '../../append/leader-appends.js';
import type { FetchParams, FetchTarget, PartitionFetchResult } from '../../fetch/fetch-reader.js';
import type { ParkedPart } from './cross-shard-fetch.js';
import type { DirCheckpointEntries } from '../../../storage/manager/log-dir-checkpoints.js';
import type { VerifiedTxnProducer } from '../../append/txn-verification-guards.js';
import type { LeaderAndIsrPartition, StopReplicaPartition } from '../../hosting/role-changes.js';
import type { IsrChange } from '../../partition/partition.js';
import type { InterBrokerRequest } from '../../../client/inter-broker-interceptor.js';
import type { ClientSecurity } from '../../../security/client-security.js';

/** A live broker's inter-broker endpoint, as the controller's UpdateMetadata named it (a follower's fetcher connects there). */
export interface BrokerEndpoint {
  id: number;
  host: string;
  port: number;
}

/**
 * Cluster mode (docs/threads.md step 3): the shard's ReplicaManager is the controller's to drive
 * (LeaderAndIsr, StopReplica), its followers fetch from their leaders, and what a worker cannot
 * do itself (write ZooKeeper, consult a test's interceptor) it asks the main thread.
 */
export interface ClusterShardInit {
  /** The live brokers' inter-broker endpoints as last known (UpdateMetadata posts newer ones). */
  brokers: BrokerEndpoint[];
  /** How fetchers secure their connections to leaders (TLS material as bytes: structured clone makes Buffers plain Uint8Arrays). */
  security?: ClientSecurity;
  /** Whether the broker has an inter-broker interceptor (a test seam): the worker's fetchers then ask the main thread before each request. */
  intercepted: boolean;
}

/** What a worker starts from (workerData). */
export interface ShardInit {
  index: number;
  shards: number;
  config: ReplicationConfig;
  /** Per log directory, whether the lock holder found a clean shutdown marker there. */
  hadCleanShutdown: Record<string, boolean>;
  topics: TopicInfo[];
  /** Each topic's effective log config (dynamic broker defaults included), where the main thread knows it. */
  logConfigs?: Record<string, LogConfig>;
  /** This shard's LogManager settings (the broker's, log-manager-options.ts); absent: the shard tests' defaults. */
  logs?: LogManagerSettings;
  maintenanceIntervalMs?: number;
  /** Cluster mode's part; absent in embedded mode. */
  cluster?: ClusterShardInit;
  /**
   * A worker started in place of one that ended (worker-shards.ts): the topics whose deletion
   * this shard never confirmed. The worker that ended may have died before it deleted their
   * logs; the new one deletes every log of theirs it finds before it serves, also when the name
   * was created again meanwhile (its partitions here then start from empty logs, as elsewhere).
   */
  deleteLogsOf?: string[];
  /**
   * Cluster mode: partitions a StopReplica deleted while this shard's worker was down or opening
   * (WorkerRestarts' stale partitions): their logs are deleted before it serves, as `deleteLogsOf`'s.
   */
  deletePartitions?: [string, number][];
}

/** Bytes of one part: a window of a shared or a transferred buffer. */
export interface RecordsWindow {
  buffer: SharedArrayBuffer | ArrayBuffer;
  offset: number;
  length: number;
}

export interface ProducePart {
  topic: string;
  partition: number;
  records: RecordsWindow | null;
  verifiedTxn?: VerifiedTxnProducer;
}

export type ToShard =
  | { type: 'topics'; id: number; topics: TopicInfo[]; logConfigs?: Record<string, LogConfig> }
  | { type: 'deleteTopic'; id: number; topic: string }
  | {
      type: 'produce';
      id: number;
      requiredAcks: number;
      origin: AppendOrigin;
      produceVersion?: number;
      timeoutMs?: number;
      internalTopicsAllowed?: boolean;
      parts: ProducePart[];
    }
  | { type: 'fetch'; id: number; targets: FetchTarget[]; params: FetchParams }
  /**
   * A long poll over several shards (cross-shard-fetch.ts): wait for appends past the parts' fetch
   * offsets, answering 'fetchProgress' with each one's bytes and 'fetchWaited' once the wait ends
   * (`minBytes` counted here alone, an append between the read and this park, `maxWaitMs`, or 'fetchWaitEnd').
   */
  | { type: 'fetchWait'; id: number; parts: ParkedPart[]; minBytes: number; maxWaitMs: number; replicaId: number }
  /** Ends the wait `id` (the main thread answers the fetch): no answer beyond the wait's own 'fetchWaited'. */
  | { type: 'fetchWaitEnd'; id: number }
  /** The seam's other calls, run by the shard's InThreadShards over its own partitions: `args` as the method takes them. */
  | { type: 'call'; id: number; method: ForwardedMethod; args: unknown[] }
  | { type: 'shutdown'; id: number }
  /** Cluster mode: this shard's part of a LeaderAndIsr (`configs`: each topic's configs as the image has them); answered with [tpKey, error] pairs. */
  | {
      type: 'leaderAndIsr';
      id: number;
      states: LeaderAndIsrPartition[];
      configs: Record<string, Record<string, string>>;
      brokers: BrokerEndpoint[];
      /** The ledger's states re-sent to a restarted worker: a leader whose recovered log ends below its checkpointed HW is refused (resumed-leaders.ts). */
      resumed?: boolean;
    }
  /** Cluster mode: this shard's part of a StopReplica; answered with [tpKey, error] pairs. */
  | { type: 'stopReplica'; id: number; parts: StopReplicaPartition[] }
  /** Cluster mode: the live brokers after an UpdateMetadata (the fetchers' leader addresses). */
  | { type: 'brokers'; id: number; brokers: BrokerEndpoint[] }
  /** Tests: makes the worker throw from its message handler (an uncaught error), or allocate until its heap runs out. */
  | { type: 'crash'; how: 'throw' | 'heap' }
  /** Tests: blocks the worker's event loop for `ms` (a worker whose loop is stuck). */
  | { type: 'stall'; ms: number };

/** The main thread's answer to a shard's checkpoint report for `dir` (checkpoint-handover.ts): whether the files that hold it were written. */
export interface CheckpointWritten {
  type: 'checkpointed';
  dir: string;
  written: boolean;
}

/** The main thread's answer to a worker's ask (main-asks.ts): the result, or why it failed. */
export interface MainAnswer {
  type: 'told';
  id: number;
  result?: unknown;
  error?: string;
}

/** What a worker asks the main thread to do for it (cluster mode): it has no ZooKeeper session, and a test's interceptor lives there. */
export type MainAsk =
  | { type: 'ask'; id: number; what: 'writeIsr'; change: IsrChange; previousIsr?: number[] }
  | { type: 'ask'; id: number; what: 'beforeSend'; request: InterBrokerRequest };

/** The PartitionShards calls a shard answers with its InThreadShards (produce and fetch have messages of their own). */
export type ForwardedMethod =
  | 'listOffsets'
  | 'offsetsForLeaderEpoch'
  | 'deleteRecords'
  | 'writeTxnMarkers'
  | 'describeProducers'
  | 'logDirs'
  | 'txnGuardStates'
  | 'grantTxnGuards'
  | 'partitionStates'
  | 'logManagerStats';

/** A fetch result whose records cross as a window of a transferred buffer. */
export type ShardFetchResult = Omit<PartitionFetchResult, 'records'> & { records: RecordsWindow | null };

export type FromShard =
  | { type: 'ready' }
  | { type: 'done'; id: number }
  | { type: 'failed'; id: number; message: string }
  | { type: 'produced'; id: number; outcomes: AppendOutcome[] }
  | { type: 'fetched'; id: number; results: ShardFetchResult[] }
  /** A parked wait's counted append (not its answer: more may follow, until 'fetchWaited'). */
  | { type: 'fetchProgress'; id: number; bytes: number }
  | { type: 'fetchWaited'; id: number }
  | { type: 'answered'; id: number; result: unknown }
  | { type: 'checkpoints'; dir: string; entries: DirCheckpointEntries }
  | { type: 'closed'; dir: string; unclean: string[]; checkpointed: boolean }
  | MainAsk;
