/**
 * A log directory's checkpoint files, read when it opens and written by the manager: recovery
 * points, log start offsets, the logs' high watermarks (replication-offset-checkpoint, Kafka's
 * format) and the cleaner's first dirty offsets. Writes of one directory go one at a time, and
 * a request made while a write is queued and not started shares it.
 */
import path from 'node:path';
import {
  CLEANER_OFFSET_CHECKPOINT,
  LOG_START_OFFSET_CHECKPOINT,
  RECOVERY_POINT_CHECKPOINT,
  REPLICATION_OFFSET_CHECKPOINT,
  readOffsetCheckpoint,
  writeOffsetCheckpoint,
} from '../checkpoint/checkpoint-files.js';
import type { StorageLogger } from '../logger.js';
import type { UnifiedLog } from '../log/unified-log.js';

export interface DirCheckpoints {
  recoveryPoints: Map<string, number>;
  logStartOffsets: Map<string, number>;
  highWatermarks: Map<string, number>;
  cleanerOffsets: Map<string, number>;
}

/** Reads the directory's checkpoint files; an unreadable one counts as empty (after a warning). */
export async function readDirCheckpoints(dir: string, logger: StorageLogger): Promise<DirCheckpoints> {
  const read = async (name: string): Promise<Map<string, number>> => {
    try {
      return await readOffsetCheckpoint(path.join(dir, name));
    } catch (err) {
      logger.warn(`ignoring unreadable checkpoint: ${(err as Error).message}`);
      return new Map();
    }
  };
  return {
    recoveryPoints: await read(RECOVERY_POINT_CHECKPOINT),
    logStartOffsets: await read(LOG_START_OFFSET_CHECKPOINT),
    highWatermarks: await read(REPLICATION_OFFSET_CHECKPOINT),
    cleanerOffsets: await read(CLEANER_OFFSET_CHECKPOINT),
  };
}

/** A directory's checkpoint entries, one list per file: plain data, so a shard thread can hand its own to the files' one writer. */
export interface DirCheckpointEntries {
  recoveryPoints: CheckpointEntry[];
  logStartOffsets: CheckpointEntry[];
  highWatermarks: CheckpointEntry[];
  cleanerOffsets: CheckpointEntry[];
}

export interface CheckpointEntry {
  topic: string;
  partition: number;
  offset: number;
}

/** What the four checkpoint files of a directory say of `logs` (those in it). */
export function dirCheckpointEntries(logs: readonly UnifiedLog[], firstDirtyOffsets: ReadonlyMap<string, number>): DirCheckpointEntries {
  const entries = (offset: (l: UnifiedLog) => number | undefined) => {
    const out: CheckpointEntry[] = [];
    for (const l of logs) {
      const o = offset(l);
      if (o !== undefined) out.push({ topic: l.topic, partition: l.partition, offset: o });
    }
    return out;
  };
  return {
    recoveryPoints: entries((l) => l.recoveryPoint),
    logStartOffsets: entries((l) => l.logStartOffset),
    // Only logs whose high watermark is known (set by replication, or read from this file before).
    highWatermarks: entries((l) => l.checkpointedHighWatermark),
    cleanerOffsets: entries((l) => firstDirtyOffsets.get(l.name)),
  };
}

/** Writes the four checkpoint files of `dir`. Rejects when one cannot be written. */
export async function writeDirCheckpointEntries(dir: string, e: DirCheckpointEntries): Promise<void> {
  await writeOffsetCheckpoint(path.join(dir, RECOVERY_POINT_CHECKPOINT), e.recoveryPoints);
  await writeOffsetCheckpoint(path.join(dir, LOG_START_OFFSET_CHECKPOINT), e.logStartOffsets);
  await writeOffsetCheckpoint(path.join(dir, REPLICATION_OFFSET_CHECKPOINT), e.highWatermarks);
  await writeOffsetCheckpoint(path.join(dir, CLEANER_OFFSET_CHECKPOINT), e.cleanerOffsets);
}

/** Writes the four checkpoint files of `dir` for `logs` (those in it). Rejects when one cannot be written. */
export function writeDirCheckpoints(dir: string, logs: readonly UnifiedLog[], firstDirtyOffsets: ReadonlyMap<string, number>): Promise<void> {
  return writeDirCheckpointEntries(dir, dirCheckpointEntries(logs, firstDirtyOffsets));
}

/** Runs writes one at a time; a write requested while another is queued and not started shares it. */
export class CoalescingWrites {
  private chain: Promise<unknown> = Promise.resolve();
  private queued: Promise<boolean> | undefined;

  /** `write` reads the state when it starts, so a shared write covers every request made before. */
  run(write: () => Promise<boolean>): Promise<boolean> {
    if (this.queued) return this.queued;
    const start = (): Promise<boolean> => {
      this.queued = undefined;
      return write();
    };
    const queued = this.chain.then(start, start);
    this.queued = queued;
    this.chain = queued;
    return queued;
  }
}
