/**
 * The fetch side of LocalLog: reading whole batches from an immutable snapshot of the segment
 * list (sizes captured up front, so a concurrent append is never half-read), from the segment
 * holding the offset (segment-list.ts) onwards.
 */
import type { LogSegment } from '../segment/log-segment.js';
import { segmentIndexFor } from './segment-list.js';

export interface ReadResult {
  records: Buffer;
  firstBatchOffset: number;
}

/**
 * Reads from the segment holding fetchOffset, moving on to later segments when it has nothing
 * at or after the offset (compaction can empty a segment's tail). Undefined: nothing to read.
 */
export async function readFromSegments(
  segments: readonly LogSegment[],
  fetchOffset: number,
  maxBytes: number,
  maxOffset: number | undefined,
  minOneBatch: boolean,
): Promise<ReadResult | undefined> {
  const sizes = segments.map((s) => s.size);
  for (let idx = segmentIndexFor(segments, fetchOffset); idx < segments.length; idx++) {
    const res = await segments[idx]!.read(fetchOffset, maxBytes, sizes[idx]!, maxOffset, minOneBatch);
    if (res) return res;
  }
  return undefined;
}
