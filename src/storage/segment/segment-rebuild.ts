/**
 * Full validation of a segment file: every batch's framing, magic, CRC and offset order is
 * checked while both indexes are rebuilt; the file is truncated at the first invalid byte.
 * Reads 8 MiB chunks, so a 1 GiB segment costs ~128 reads plus the CRC work.
 */
import { BATCH_LENGTH, LOG_OVERHEAD, RECORD_BATCH_OVERHEAD, baseOffsetAt, lastOffsetAt } from '../../protocol/records/batch-header.js';
import { MIN_BATCH_LENGTH, checkBatch, readAt } from './batch-scan.js';
import type { LogSegment } from './log-segment.js';

/** What a rebuild found: the bytes kept, the bytes cut off after the first invalid one, and why. */
export interface RecoveryResult {
  validBytes: number;
  truncatedBytes: number;
  reason?: string;
}

export async function rebuildSegment(seg: LogSegment, validate: boolean, maxBatchBytes: number): Promise<RecoveryResult> {
  seg.resetTracking();
  const fileSize = (await seg.file.stat()).size;
  const chunkSize = 8 * 1024 * 1024;
  let pos = 0;
  let reason: string | undefined;
  let prevLast = seg.baseOffset - 1;
  outer: while (pos < fileSize) {
    const chunk = await readAt(seg.file, pos, Math.min(chunkSize, fileSize - pos));
    let i = 0;
    while (i < chunk.length) {
      if (i + RECORD_BATCH_OVERHEAD > chunk.length) {
        if (pos + i + RECORD_BATCH_OVERHEAD > fileSize) {
          reason = 'incomplete batch header';
          pos += i;
          break outer;
        }
        break; // header straddles the chunk: re-read from here
      }
      const length = chunk.readInt32BE(i + BATCH_LENGTH);
      const size = length + LOG_OVERHEAD;
      if (length < MIN_BATCH_LENGTH || size > maxBatchBytes + LOG_OVERHEAD + RECORD_BATCH_OVERHEAD) {
        reason = `implausible batch length ${length}`;
        pos += i;
        break outer;
      }
      if (pos + i + size > fileSize) {
        reason = `batch of ${size} bytes runs past the end of the file`;
        pos += i;
        break outer;
      }
      let batchBuf = chunk;
      let batchStart = i;
      if (i + size > chunk.length) {
        if (i > 0) break; // re-read so the batch starts the chunk
        batchBuf = await readAt(seg.file, pos, size); // a batch larger than the chunk
        batchStart = 0;
      }
      const base = baseOffsetAt(batchBuf, batchStart);
      const problem =
        (validate ? checkBatch(batchBuf, batchStart, size) : undefined) ??
        (base <= prevLast ? `base offset ${base} not above previous ${prevLast}` : undefined) ??
        (lastOffsetAt(batchBuf, batchStart) - seg.baseOffset > 0x7fffffff ? 'offset overflows the segment' : undefined);
      if (problem) {
        reason = problem;
        pos += i;
        break outer;
      }
      prevLast = lastOffsetAt(batchBuf, batchStart);
      seg.trackBatch(batchBuf, batchStart, pos + i, size);
      i += size;
      if (batchBuf !== chunk) {
        pos += i;
        continue outer;
      }
    }
    pos += i;
  }
  const validBytes = Math.min(pos, fileSize);
  const truncatedBytes = fileSize - validBytes;
  if (truncatedBytes > 0) await seg.file.truncate(validBytes);
  seg.size = validBytes;
  seg.unflushedBytes = 0;
  return { validBytes, truncatedBytes, reason: truncatedBytes > 0 ? reason : undefined };
}
