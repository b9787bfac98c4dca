/**
 * What the admin service needs from the data plane (ReplicaManager / LogManager): the local
 * partitions with their logs and high watermarks, and the state of the log directories.
 * Kept narrow so admin does not depend on how replication is built.
 */
import type { UnifiedLog } from '../../storage/log/unified-log.js';
import type { LogDirState } from '../../storage/manager/log-manager.js';

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
  /** The partition if this broker hosts it (leader or follower), else undefined. */
  localPartition(topic: string, partition: number): LocalPartition | undefined;
  logDirsState(): LogDirState[];
  /** Resolves once the logs of `topic` match metadata (created, reconfigured or deleted). */
  syncTopic(topic: string): Promise<void>;
}
