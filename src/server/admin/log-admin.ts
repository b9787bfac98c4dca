/**
 * DeleteRecords and DescribeLogDirs: administrative operations on the partition logs this
 * broker hosts, through the narrow PartitionAccess view of the data plane (its partitions'
 * owners, replication/shards).
 */
import { statfs } from 'node:fs/promises';
import type { MetadataStore } from '../../metadata/metadata-store.js';
import { ErrorCode } from '../../protocol/errors.js';
import { deleteRecordsOn } from '../../replication/shards/partition-answers.js';
import type { DeleteRecordsPart } from '../../replication/shards/partition-shards.js';
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

  /** DeleteRecords for one partition (see deleteRecordsOf). */
  async deleteRecords(topic: string, partition: number, offset: number, timeoutMs = DEFAULT_DELETE_RECORDS_TIMEOUT_MS): Promise<DeleteRecordsOutcome> {
    const [outcome] = await this.deleteRecordsOf([{ topic, partition, offset }], timeoutMs);
    return outcome!;
  }

  /**
   * Moves the log start of each partition to its offset (-1: the high watermark), as Kafka's
   * ReplicaManager.deleteRecords: each leader cuts its own log, then, with followers, answers
   * once every live replica's log start has followed, or REQUEST_TIMED_OUT after `timeoutMs`
   * (one timeout for the request). One request to the partitions' owners
   * (replication/shards/partition-answers.ts). Results in `parts` order.
   */
  deleteRecordsOf(parts: readonly DeleteRecordsPart[], timeoutMs = DEFAULT_DELETE_RECORDS_TIMEOUT_MS): Promise<DeleteRecordsOutcome[]> {
    const access = this.partitions();
    if (access?.shards) return access.shards.deleteRecords(parts, timeoutMs);
    return deleteRecordsOn((t, p) => access?.localPartition(t, p), this.metadata, parts, timeoutMs);
  }

  /** Every log directory, or only the partitions in `filter` (topic → partitions). */
  async describeLogDirs(filter: ReadonlyMap<string, ReadonlySet<number>> | null): Promise<LogDirReport[]> {
    const access = this.partitions();
    if (!access) return [];
    const dirs = access.shards ? await access.shards.logDirs() : access.logDirsState();
    return Promise.all(
      dirs.map(async (d) => {
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
