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

/** Writes the four checkpoint files of `dir` for `logs` (those in it). Rejects when one cannot be written. */
export async function writeDirCheckpoints(dir: string, logs: readonly UnifiedLog[], firstDirtyOffsets: ReadonlyMap<string, number>): Promise<void> {
  const entries = (offset: (l: UnifiedLog) => number | undefined) => {
    const out: { topic: string; partition: number; offset: number }[] = [];
    for (const l of logs) {
      const o = offset(l);
      if (o !== undefined) out.push({ topic: l.topic, partition: l.partition, offset: o });
    }
    return out;
  };
  await writeOffsetCheckpoint(
    path.join(dir, RECOVERY_POINT_CHECKPOINT),
    entries((l) => l.recoveryPoint),
  );
  await writeOffsetCheckpoint(
    path.join(dir, LOG_START_OFFSET_CHECKPOINT),
    entries((l) => l.logStartOffset),
  );
  // Only logs whose high watermark is known (set by replication, or read from this file before).
  await writeOffsetCheckpoint(
    path.join(dir, REPLICATION_OFFSET_CHECKPOINT),
    entries((l) => l.checkpointedHighWatermark),
  );
  await writeOffsetCheckpoint(
    path.join(dir, CLEANER_OFFSET_CHECKPOINT),
    entries((l) => firstDirtyOffsets.get(l.name)),
  );
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
