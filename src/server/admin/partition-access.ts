/**
 * What the admin service needs from the data plane: the partitions' owners for DeleteRecords
 * and DescribeLogDirs (replication/shards: they may live on other threads), and, for config and
 * topic administration, the local partitions with their logs (on this thread until a later
 * threads step moves config updates to the owners). Kept narrow so admin does not depend on how
 * replication is built.
 */
import type { UnifiedLog } from '../../storage/log/unified-log.js';
import type { LogDirState } from '../../storage/manager/log-manager.js';
import type { PartitionShards } from '../../replication/shards/partition-shards.js';
import { inThreadShardsOf } from '../../replication/shards/in-thread-shards.js';
import type { ReplicaManager } from '../../replication/replica-manager.js';
import type { MetadataStore } from '../../metadata/metadata-store.js';

export interface LocalPartition {
  readonly log: UnifiedLog;
  readonly highWatermark: number;
  /** False for a follower (cluster mode): its log is not the admin's to cut. */
  readonly isLeader: boolean;
  /** Called after the log start/end moved under the partition (DeleteRecords). */
  onLogTruncated(): void;
  /** The lowest log start offset among this leader and its live followers (absent: the log's own). */
  lowWatermark?(isAlive: (brokerId: number) => boolean): number;
  /** Resolves once the low watermark reaches `offset`, or REQUEST_TIMED_OUT after `timeoutMs`. */
  awaitLowWatermark?(offset: number, timeoutMs: number, isAlive: (brokerId: number) => boolean): Promise<{ errorCode: number; lowWatermark: number }>;
}

export interface PartitionAccess {
  /**
   * The partitions' owners (docs/threads.md step 0): LogAdmin's DeleteRecords and
   * DescribeLogDirs go through them. The broker always gives them; a partial access without
   * (tests) is served on this thread from localPartition and logDirsState.
   */
  shards?: Pick<PartitionShards, 'deleteRecords' | 'logDirs'>;
  /** The partition if this broker hosts it (leader or follower), else undefined. */
  localPartition(topic: string, partition: number): LocalPartition | undefined;
  logDirsState(): LogDirState[];
  /** Resolves once the logs of `topic` match metadata (created, reconfigured or deleted). */
  syncTopic(topic: string): Promise<void>;
  /**
   * Shard workers (server/shard-wiring.ts): whether the partition lives on a worker that is
   * running, so `localPartition` cannot show it; syncTopic has already failed if its log did not open.
   */
  onWorker?(topic: string, partition: number): boolean;
  /** Shard workers: the topic's effective config changed (a dynamic broker default); its logs on workers take it. */
  reconfigure?(topic: string): void;
}

/** The broker's access over its ReplicaManager: the partitions' owners (in-thread: one shard), its local partitions, its logs' directories. */
export function partitionAccessOf(rm: ReplicaManager, metadata: Pick<MetadataStore, 'topic' | 'brokers'>): PartitionAccess {
  return {
    shards: inThreadShardsOf(rm, metadata),
    localPartition: (topic, partition) => rm.getPartition(topic, partition),
    logDirsState: () => rm.logManager.logDirsState(),
    syncTopic: (topic) => rm.syncTopic(topic),
  };
}
