/** Per-append decisions of Log: when to roll the active segment, which epochs to record. */
import { baseOffsetAt, batchSize, partitionLeaderEpochOf } from '../../protocol/records/batch-header.js';
import type { LogConfig } from '../config.js';
import type { LeaderEpochCache } from './leader-epoch-cache.js';
import type { LogSegment } from '../segment/log-segment.js';

/** Kafka's roll rules: size, age (segment.ms), index capacity, relative offset overflow. */
export function shouldRoll(seg: LogSegment, config: LogConfig, appendBytes: number, lastOffset: number, maxTs: number, now: number): boolean {
  if (seg.size === 0) return false;
  // Age counts from the first batch's timestamp to the incoming one, else wall-clock since creation.
  const waited =
    seg.rollingBasedTimestamp !== undefined && seg.rollingBasedTimestamp >= 0 && maxTs >= 0 ? maxTs - seg.rollingBasedTimestamp : now - seg.createdMs;
  return seg.size + appendBytes > config.segmentBytes || waited > config.segmentMs || seg.indexesFull() || lastOffset - seg.baseOffset > 0x7fffffff;
}

/** Leader appends carry one epoch; replica appends carry each batch's own. True if changed. */
export function recordEpochs(epochs: LeaderEpochCache, batches: Buffer, leaderEpoch: number | undefined, firstOffset: number): boolean {
  if (leaderEpoch !== undefined) return epochs.assign(leaderEpoch, firstOffset);
  let changed = false;
  for (let pos = 0; pos < batches.length; pos += batchSize(batches, pos)) {
    changed = epochs.assign(partitionLeaderEpochOf(batches, pos), baseOffsetAt(batches, pos)) || changed;
  }
  return changed;
}
