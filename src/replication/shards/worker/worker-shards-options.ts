/** What WorkerShards.open takes (worker-shards.ts). */
import type { TopicInfo } from '../../../metadata/cluster-model.js';
import type { ReplicationConfig } from '../../replication-config.js';
import type { LogConfig } from '../../../storage/config.js';
import type { StorageLogger } from '../../../storage/logger.js';
import type { LogManagerConfig } from '../log-manager-options.js';
import type { SharedRecordsLender } from './records-handover.js';
import type { RestartTimings } from './restart-policy.js';
import type { ClusterShardInit } from './shard-protocol.js';
import type { MainSide } from './main-answers.js';
import type { ClusterHooks } from './cluster-hooks.js';

/** Cluster mode (docs/threads.md step 3): what the workers start from, what the main thread does for them, shard 0's hooks. */
export interface WorkerShardsCluster {
  init: ClusterShardInit;
  main: MainSide;
  local: ClusterHooks;
  /** A restarted worker serves again: its partitions' last roles are sent to it (shard-roles.ts). */
  restarted?: (index: number) => void;
}

export interface WorkerShardsOptions {
  config: ReplicationConfig;
  /** Worker threads (num.io.threads); the shards are these and shard 0 on the main thread. */
  workers: number;
  /** The topics known at start (the metadata store's). */
  topics: readonly TopicInfo[];
  /** A topic's effective log config (the broker's admin: dynamic broker defaults under its overrides); absent: static defaults under its overrides. */
  logConfigFor?: (topic: string) => LogConfig | undefined;
  logger?: StorageLogger;
  /** The shards' log level (pino); default warn. */
  workerLogLevel?: string;
  /** The broker's log settings (BrokerConfig has them): every shard's LogManager takes them; absent: LogManager's defaults and no cleaner. */
  logs?: LogManagerConfig;
  /**
   * Whether a produced Buffer that owns its ArrayBuffer may be moved to its worker (default
   * true). The broker says false: its frame buffers are pooled and reused once answered, and a
   * moved one would be detached under the network layer; its parts are copied instead.
   */
  moveProduceBuffers?: boolean;
  /**
   * The lender of the shared memory produce records may sit in (the broker's Produce frames,
   * server/network/shared-frame-buffers.ts): each shard reading a window of it holds it until
   * that shard answers or ends, so it is not reused under the shard.
   */
  sharedRecords?: SharedRecordsLender;
  maintenanceIntervalMs?: number;
  /** The old generation each worker's heap may grow to, in MiB (default: the process's limit); past it that worker ends, not the broker (tests set a small one). */
  workerHeapMb?: number;
  /** Cluster mode's part; absent in embedded mode. */
  cluster?: WorkerShardsCluster;
  /** When a worker that ended is started again (restart-policy.ts; the defaults: at once, 1 s doubling for quick crashes, offline after 3 in 10 min). */
  restart?: RestartTimings;
}
