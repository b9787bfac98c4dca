/**
 * ListOffsets by timestamp: the time index narrows the search to a few KB of one segment, batch
 * headers' maxTimestamp skip every batch that cannot hold the target without inflating it, and
 * only the one candidate batch is inflated (bounded) to find the exact first offset with ts >= target.
 */
import { setImmediate as yieldToEventLoop } from 'node:timers/promises';
import { TimestampType, batchRecords, openBatchAsync, recordTimestamp } from '../../protocol/records/batch.js';
import { RecordsError } from '../../protocol/records/errors.js';
import { readAt } from '../segment/batch-scan.js';
import type { LogSegment } from '../segment/log-segment.js';
import { scanBatchHeaders } from '../segment/batch-scan.js';
import { baseOffsetAt, lastOffsetAt, maxTimestampAt } from '../../protocol/records/batch-header.js';

export interface TimestampAndOffset {
  offset: number;
  timestamp: number;
}

/** Records examined between two yields to the event loop while searching one batch. */
const RECORDS_PER_SLICE = 4096;

/**
 * First record (offset >= minOffset) of the batch at `position` whose timestamp satisfies
 * `match`. The batch inflates within `maxDecompressedBytes`, off the event loop, and its records
 * are walked one at a time. When the batch cannot be decoded within the cap (a compression
 * bomb), or not at all, the answer falls back to the batch's own header: its first offset at or
 * after minOffset, with its maxTimestamp, when that timestamp matches. The batch is the first
 * whose maxTimestamp reaches the target, so the exact record lies in it: a consumer seeking to
 * the batch's start misses nothing (it may see a few earlier records of the same batch).
 */
async function recordInBatch(
  seg: LogSegment,
  position: number,
  size: number,
  minOffset: number,
  match: (ts: number) => boolean,
  maxDecompressedBytes: number,
): Promise<TimestampAndOffset | undefined> {
  const bytes = await readAt(seg.file, position, size);
  try {
    const batch = await openBatchAsync(bytes, 0, { verifyCrc: false, maxBytes: maxDecompressedBytes });
    let n = 0;
    for (const r of batchRecords(batch)) {
      const offset = Number(batch.baseOffset) + r.offsetDelta;
      const ts = Number(recordTimestamp(batch, r));
      if (offset >= minOffset && match(ts)) return { offset, timestamp: ts };
      if (batch.timestampType === TimestampType.LogAppendTime && offset >= minOffset) break;
      if (++n % RECORDS_PER_SLICE === 0) await yieldToEventLoop();
    }
  } catch (err) {
    if (!(err instanceof RecordsError)) throw err;
    const base = baseOffsetAt(bytes, 0);
    const maxTs = maxTimestampAt(bytes, 0);
    if (match(maxTs)) return { offset: Math.max(base, minOffset), timestamp: maxTs };
  }
  return undefined;
}

export async function findOffsetByTimestamp(
  segments: readonly LogSegment[],
  target: number,
  logStartOffset: number,
  maxDecompressedBytes: number,
): Promise<TimestampAndOffset | null> {
  for (const seg of segments) {
    if (seg.size === 0 || seg.maxTimestampSoFar < target || seg.nextOffset <= logStartOffset) continue;
    const sizeLimit = seg.size;
    const fromOffset = Math.max(seg.timeIndex.lookup(target), logStartOffset);
    const startPos = seg.offsetIndex.lookup(fromOffset).position;
    const candidates: { position: number; size: number }[] = [];
    await scanBatchHeaders(seg.file, startPos, sizeLimit, (buf, start, pos, size) => {
      const last = lastOffsetAt(buf, start);
      const maxTs = maxTimestampAt(buf, start);
      if (last >= logStartOffset && maxTs >= target) {
        candidates.push({ position: pos, size });
        return false;
      }
      return true;
    });
    const found = candidates[0];
    if (!found) continue;
    const hit = await recordInBatch(seg, found.position, found.size, logStartOffset, (ts) => ts >= target, maxDecompressedBytes);
    if (hit) return hit;
  }
  return null;
}

/** The offset of the record carrying the largest timestamp in the log (ListOffsets -3). */
export async function findMaxTimestampOffset(segments: readonly LogSegment[], maxDecompressedBytes: number): Promise<TimestampAndOffset | null> {
  let best: LogSegment | undefined;
  for (const seg of segments) if (seg.size > 0 && (!best || seg.maxTimestampSoFar > best.maxTimestampSoFar)) best = seg;
  if (!best || best.maxTimestampSoFar < 0) return null;
  const maxTs = best.maxTimestampSoFar;
  const loc = await best.findBatch(best.offsetOfMaxTimestampSoFar, best.size);
  if (!loc) return { offset: best.offsetOfMaxTimestampSoFar, timestamp: maxTs };
  const hit = await recordInBatch(best, loc.position, loc.size, 0, (ts) => ts === maxTs, maxDecompressedBytes);
  return hit ?? { offset: loc.lastOffset, timestamp: maxTs };
}
