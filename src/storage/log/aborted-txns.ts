/**
 * The log-wide view of the segments' transaction indexes: which aborted transactions a
 * read_committed fetch of [fetchOffset, upperBound) must report (Kafka's
 * UnifiedLog.collectAbortedTransactions), and where an abort is recorded.
 */
import type { LogSegment } from '../segment/log-segment.js';
import type { AbortedTxn } from '../segment/transaction-index.js';
import { segmentIndexFor } from './segment-list.js';

/**
 * Aborted transactions overlapping [fetchOffset, upperBound), from the segment holding the
 * fetch offset onwards until one segment's index says no later abort can overlap.
 */
export function collectAbortedTxns(segments: readonly LogSegment[], fetchOffset: number, upperBound: number): AbortedTxn[] {
  const out: AbortedTxn[] = [];
  for (let i = segmentIndexFor(segments, fetchOffset); i < segments.length; i++) {
    const seg = segments[i]!;
    if (seg.txnIndex.size === 0) continue;
    const r = seg.txnIndex.collectAbortedTxns(fetchOffset, upperBound);
    out.push(...r.aborted);
    if (r.complete) break;
  }
  return out;
}

/**
 * Records an abort in the segment holding its marker. `ifMissing` (replaying the log after a
 * crash) skips one already there, and one that would land before the index's last entry.
 */
export async function recordAbortedTxn(segments: readonly LogSegment[], t: AbortedTxn, ifMissing: boolean): Promise<void> {
  const seg = segments[segmentIndexFor(segments, t.lastOffset)];
  if (!seg) return;
  if (ifMissing) {
    const last = seg.txnIndex.all().at(-1);
    if (last && last.lastOffset >= t.lastOffset) return;
  }
  await seg.txnIndex.append(t);
}
