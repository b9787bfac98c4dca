/**
 * Opening a partition's local log: the options a LocalLog opens with, and the state it starts from. The
 * segments are those recovery left on disk; the log start offset is the checkpointed one (a
 * checkpoint past everything on disk starts the log fresh, empty, at that offset); the leader
 * epoch history is trimmed to the offsets the log holds.
 */
import type { FlushStats } from './log-flush.js';
import { unlink } from 'node:fs/promises';
import type { LogConfig } from '../config.js';
import { errnoOf } from '../errors.js';
import type { FailureLog } from '../../common/failure-log.js';
import type { LeaderEpochCache } from './leader-epoch-cache.js';
import type { LocalLog } from './local-log.js';
import { LogSegment } from '../segment/log-segment.js';
import type { StorageLogger } from '../logger.js';
import { loadSegments } from './recovery.js';

export interface LogOpenOptions {
  dir: string;
  topic: string;
  partition: number;
  config: LogConfig;
  logger: StorageLogger;
  recoveryPoint?: number;
  logStartOffset?: number;
  hadCleanShutdown?: boolean;
  /** Called on I/O errors other than a full disk, so the manager can take the directory offline. */
  onIoError?: (log: LocalLog, err: unknown) => void;
  /** Called when the log start offset moved (the manager checkpoints it). */
  onLogStartOffsetChanged?: (log: LocalLog) => void;
  clock?: () => number;
  /** Rate-limited logging of I/O failures, shared by the logs of a manager. Default: one per log. */
  failureLog?: FailureLog;
  /** Where the log's flushes are counted and timed (the manager's, shared by its logs). */
  flushStats?: FlushStats;
}

/** Where an opened log's segments and offsets start. */
export interface LogStartState {
  segments: LogSegment[];
  startOffset: number;
  endOffset: number;
  recoveryPoint: number;
}

/** Loads (and recovers) the partition directory's segments and works out the log's offsets. */
export async function loadLogStartState(
  opts: LogOpenOptions,
  clock: () => number,
  settings: { indexIntervalBytes: number; segmentIndexBytes: number },
): Promise<LogStartState> {
  const loaded = await loadSegments(opts.dir, opts.config, {
    recoveryPoint: opts.recoveryPoint ?? 0,
    hadCleanShutdown: opts.hadCleanShutdown ?? false,
    logger: opts.logger,
    now: clock(),
  });
  let segments = loaded.segments;
  let endOffset: number;
  const checkpointedStart = opts.logStartOffset ?? 0;
  if (segments.length === 0 || checkpointedStart > loaded.nextOffset) {
    // Nothing on disk, or everything before the checkpointed start is gone: start fresh there.
    for (const seg of segments) await deleteSegmentFiles(seg);
    const start = segments.length === 0 ? Math.max(checkpointedStart, 0) : checkpointedStart;
    segments = [await LogSegment.open(opts.dir, start, settings, clock())];
    endOffset = start;
  } else {
    endOffset = loaded.nextOffset;
  }
  return {
    segments,
    startOffset: Math.max(checkpointedStart, segments[0]!.baseOffset),
    endOffset,
    recoveryPoint: opts.hadCleanShutdown ? endOffset : Math.min(opts.recoveryPoint ?? 0, endOffset),
  };
}

/** Loads the leader epoch history and drops what lies outside [startOffset, endOffset). */
export async function loadEpochHistory(epochs: LeaderEpochCache, state: LogStartState, logger: StorageLogger, logName: string): Promise<void> {
  await epochs.load((m) => logger.warn(m));
  if (epochs.truncateFromEnd(state.endOffset) || epochs.truncateFromStart(state.startOffset)) {
    // On a full disk the trimmed cache stays in memory; the file is trimmed again next time.
    await epochs.persist().catch((err: unknown) => {
      const code = errnoOf(err);
      if (code !== 'ENOSPC' && code !== 'EDQUOT') throw err;
      logger.warn(`cannot persist leader epochs of ${logName}: ${code} (the disk is full)`);
    });
  }
}

async function deleteSegmentFiles(seg: LogSegment): Promise<void> {
  await seg.close();
  for (const f of [seg.logFile, seg.offsetIndex.file, seg.timeIndex.file]) await unlink(f).catch(() => undefined);
}
