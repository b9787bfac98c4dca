/**
 * Decisions over a log's immutable segment list: which segment holds an offset, which oldest
 * segments a deletion takes, which ones a truncation drops. Pure, and apart from LocalLog, which
 * applies them under its lock (rolling, retiring segments and moving its offsets).
 */
import type { LogSegment } from '../segment/log-segment.js';

/**
 * The oldest segments, in order, while `shouldDelete(segment, nextSegment)` holds. All of them only
 * when the active (last) one holds data, which the caller rolls first; an empty active segment stays.
 */
export function oldestSegmentsToDelete(
  segments: readonly LogSegment[],
  shouldDelete: (seg: LogSegment, next: LogSegment | undefined) => boolean,
): LogSegment[] {
  const victims: LogSegment[] = [];
  for (let i = 0; i < segments.length; i++) {
    const seg = segments[i]!;
    if (!shouldDelete(seg, segments[i + 1])) break;
    victims.push(seg);
  }
  if (victims.length === segments.length && victims.at(-1)?.size === 0) victims.pop();
  return victims;
}

/** A truncation to `offset`: the segments that start before it (the first one always) stay, the rest go. */
export function splitForTruncation(segments: readonly LogSegment[], offset: number): { keep: LogSegment[]; dropped: LogSegment[] } {
  const keep = segments.filter((s, i) => i === 0 || s.baseOffset < offset);
  return { keep, dropped: segments.slice(keep.length) };
}

/** Index of the segment holding `offset`: the last one whose base offset is at or below it (0 if none). */
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
