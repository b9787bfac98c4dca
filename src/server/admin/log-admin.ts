/**
 * DeleteRecords and DescribeLogDirs: administrative operations on the partition logs this
 * broker hosts, through the narrow PartitionAccess view of the data plane.
 */
import { statfs } from 'node:fs/promises';
import type { MetadataStore } from '../../metadata/metadata-store.js';
import { ErrorCode } from '../../protocol/errors.js';
import { errorCodeOf } from '../../replication/errors.js';
import type { PartitionAccess } from './partition-access.js';

export interface DeleteRecordsOutcome {
  errorCode: number;
  /** The log start offset after the deletion; -1 on error. */
  lowWatermark: number;
}

export interface LogDirReport {
  dir: string;
  errorCode: number;
  topics: { name: string; partitions: { partition: number; size: number; offsetLag: number }[] }[];
  /** -1 when unknown (statfs failed or the directory is offline). */
  totalBytes: number;
  usableBytes: number;
}

/** DeleteRecords' wait for the followers when the caller gives no timeout (the Java admin client's default). */
export const DEFAULT_DELETE_RECORDS_TIMEOUT_MS = 30_000;

export class LogAdmin {
  constructor(
    private readonly metadata: MetadataStore,
    private readonly partitions: () => PartitionAccess | undefined,
  ) {}

  /**
   * Moves the log start of one partition to `offset` (-1: the high watermark), as Kafka's
   * ReplicaManager.deleteRecords: the leader cuts its own log, then, with followers, answers once
   * every live replica's log start has followed (they learn it from their fetch responses and
   * report theirs in their fetches), or REQUEST_TIMED_OUT after `timeoutMs`.
   */
  async deleteRecords(topic: string, partition: number, offset: number, timeoutMs = DEFAULT_DELETE_RECORDS_TIMEOUT_MS): Promise<DeleteRecordsOutcome> {
    const t = this.metadata.topic(topic);
    if (!t || !t.partitions.some((p) => p.partition === partition)) {
      return { errorCode: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, lowWatermark: -1 };
    }
    const local = this.partitions()?.localPartition(topic, partition);
    if (!local || !local.isLeader) return { errorCode: ErrorCode.NOT_LEADER_OR_FOLLOWER, lowWatermark: -1 };
    const hw = local.highWatermark;
    const target = offset === -1 ? hw : offset;
    if (target < 0 || target > hw) return { errorCode: ErrorCode.OFFSET_OUT_OF_RANGE, lowWatermark: -1 };
    try {
      const logStart = await local.log.deleteRecordsBefore(target);
      local.onLogTruncated();
      if (!local.lowWatermark || !local.awaitLowWatermark) return { errorCode: ErrorCode.NONE, lowWatermark: logStart };
      const live = new Set(this.metadata.brokers().map((b) => b.id));
      const isAlive = (id: number): boolean => live.has(id);
      const lowWatermark = local.lowWatermark(isAlive);
      if (lowWatermark >= target) return { errorCode: ErrorCode.NONE, lowWatermark };
      return await local.awaitLowWatermark(target, timeoutMs, isAlive);
    } catch (err) {
      return { errorCode: errorCodeOf(err), lowWatermark: -1 };
    }
  }

  /** Every log directory, or only the partitions in `filter` (topic → partitions). */
  async describeLogDirs(filter: ReadonlyMap<string, ReadonlySet<number>> | null): Promise<LogDirReport[]> {
    const access = this.partitions();
    if (!access) return [];
    return Promise.all(
      access.logDirsState().map(async (d) => {
        const byTopic = new Map<string, { partition: number; size: number; offsetLag: number }[]>();
        for (const l of d.logs) {
          if (filter && !filter.get(l.topic)?.has(l.partition)) continue;
          const list = byTopic.get(l.topic) ?? [];
          list.push({ partition: l.partition, size: l.size, offsetLag: l.offsetLag });
          byTopic.set(l.topic, list);
        }
        const space = d.online ? await volumeSpace(d.dir) : { totalBytes: -1, usableBytes: -1 };
        return {
          dir: d.dir,
          errorCode: d.online ? ErrorCode.NONE : ErrorCode.KAFKA_STORAGE_ERROR,
          topics: [...byTopic].map(([name, partitions]) => ({ name, partitions: partitions.sort((a, b) => a.partition - b.partition) })),
          ...space,
        };
      }),
    );
  }
}

async function volumeSpace(dir: string): Promise<{ totalBytes: number; usableBytes: number }> {
  try {
    const s = await statfs(dir);
    return { totalBytes: s.blocks * s.bsize, usableBytes: s.bavail * s.bsize };
  } catch {
    return { totalBytes: -1, usableBytes: -1 };
  }
}
