/**
 * Fetch-side helpers of Log: locating the segment of an offset and reading whole batches from
 * an immutable snapshot of the segment list (sizes captured up front, so a concurrent append
 * is never half-read).
 */
import type { LogSegment } from '../segment/log-segment.js';

export interface ReadResult {
  records: Buffer;
  firstBatchOffset: number;
}

/** Index of the last segment whose base offset <= offset (0 if none). */
export function segmentIndexFor(segments: readonly LogSegment[], offset: number): number {
  let lo = 0;
  let hi = segments.length - 1;
  let found = 0;
  while (lo <= hi) {
    const mid = (lo + hi) >>> 1;
    if (segments[mid]!.baseOffset <= offset) {
      found = mid;
      lo = mid + 1;
    } else hi = mid - 1;
  }
  return found;
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
