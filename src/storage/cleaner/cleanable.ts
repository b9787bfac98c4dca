/**
 * Which part of a compacted log the cleaner may touch, and whether it is worth it:
 * [firstDirty, firstUncleanable) is dirty, everything below firstDirty was cleaned before.
 * The active segment, segments younger than min.compaction.lag.ms and segments reaching the last
 * stable offset are never cleaned.
 */
import type { LogSegment } from '../segment/log-segment.js';
import type { UnifiedLog } from '../log/unified-log.js';

export interface CleanablePlan {
  /** Non-active segments entirely below firstUncleanable, oldest first. */
  segments: LogSegment[];
  /** The subset whose offsets reach firstDirty or beyond (they feed the key → offset map). */
  dirtySegments: LogSegment[];
  firstDirty: number;
  firstUncleanable: number;
  cleanBytes: number;
  dirtyBytes: number;
  dirtyRatio: number;
}

export function planCleaning(log: UnifiedLog, checkpointedFirstDirty: number | undefined, now: number): CleanablePlan {
  const all = log.segments;
  const active = all[all.length - 1]!;
  const firstDirty = Math.max(checkpointedFirstDirty ?? log.logStartOffset, log.logStartOffset);
  // Never at or past the last stable offset: an open transaction's records may still be aborted
  // (Kafka's firstUncleanableOffset takes the LSO, and so the high watermark, into account).
  let firstUncleanable = Math.min(active.baseOffset, log.lastStableOffset);
  const lag = log.config.minCompactionLagMs;
  for (const seg of all) {
    if (seg === active) break;
    if (seg.nextOffset > firstDirty && lag > 0 && seg.maxTimestampSoFar >= 0 && now - seg.maxTimestampSoFar < lag) {
      firstUncleanable = Math.min(firstUncleanable, seg.baseOffset);
      break;
    }
  }
  const segments: LogSegment[] = [];
  const dirtySegments: LogSegment[] = [];
  let cleanBytes = 0;
  let dirtyBytes = 0;
  for (let i = 0; i < all.length - 1; i++) {
    const seg = all[i]!;
    const next = all[i + 1]!;
    if (next.baseOffset > firstUncleanable) break;
    segments.push(seg);
    if (next.baseOffset <= firstDirty) cleanBytes += seg.size;
    else {
      dirtySegments.push(seg);
      dirtyBytes += seg.size;
    }
  }
  const total = cleanBytes + dirtyBytes;
  return {
    segments,
    dirtySegments,
    firstDirty,
    firstUncleanable,
    cleanBytes,
    dirtyBytes,
    dirtyRatio: total === 0 ? 0 : dirtyBytes / total,
  };
}
