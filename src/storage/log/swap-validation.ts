/**
 * Checking a cleaner `.log.swap` file before recovery lets it replace a segment. A swap that
 * reached the commit point was written and fsynced whole by the cleaner, so anything short of
 * a fully valid file (a torn batch, a CRC mismatch, offsets outside the segment it replaces)
 * means the file is not what the cleaner wrote: it must not overwrite the original.
 */
import { open, type FileHandle } from 'node:fs/promises';
import { BATCH_LENGTH, LOG_OVERHEAD, RECORD_BATCH_OVERHEAD, baseOffsetAt, lastOffsetAt } from '../../protocol/records/batch-header.js';
import { MIN_BATCH_LENGTH, checkBatch, readAt, scanBatchHeaders } from '../segment/batch-scan.js';

const CHUNK = 8 * 1024 * 1024;

/**
 * Offset after the last batch whose header parses in a segment file (headers only, no CRC):
 * `baseOffset` for a file without a batch, undefined when the file is missing.
 */
export async function segmentFileEndOffset(file: string, baseOffset: number): Promise<number | undefined> {
  let fh: FileHandle;
  try {
    fh = await open(file, 'r');
  } catch {
    return undefined;
  }
  try {
    const size = (await fh.stat()).size;
    let end = baseOffset;
    await scanBatchHeaders(fh, 0, size, (buf, start) => {
      end = lastOffsetAt(buf, start) + 1;
      return true;
    });
    return end;
  } finally {
    await fh.close();
  }
}

/**
 * Validates every batch of a swap file: framing, magic 2, CRC, batch size within
 * `maxBatchBytes`, strictly increasing offsets, all within [baseOffset, endOffset). Returns
 * why the file is unusable, or undefined when every byte belongs to a valid batch.
 */
export async function swapFileProblem(file: string, baseOffset: number, endOffset: number, maxBatchBytes: number): Promise<string | undefined> {
  let fh: FileHandle;
  try {
    fh = await open(file, 'r');
  } catch (err) {
    return `unreadable (${(err as Error).message})`;
  }
  try {
    const fileSize = (await fh.stat()).size;
    let pos = 0;
    let prevLast = baseOffset - 1;
    let chunk: Buffer = Buffer.alloc(0);
    let chunkPos = 0;
    while (pos < fileSize) {
      // Walk an 8 MiB chunk in place; re-read from the batch that straddles its end.
      if (pos + RECORD_BATCH_OVERHEAD > chunkPos + chunk.length || pos < chunkPos) {
        chunk = await readAt(fh, pos, Math.min(CHUNK, fileSize - pos));
        chunkPos = pos;
      }
      const i = pos - chunkPos;
      if (i + RECORD_BATCH_OVERHEAD > chunk.length) return `incomplete batch header at position ${pos}`;
      const length = chunk.readInt32BE(i + BATCH_LENGTH);
      const size = length + LOG_OVERHEAD;
      if (length < MIN_BATCH_LENGTH || size > maxBatchBytes + LOG_OVERHEAD + RECORD_BATCH_OVERHEAD)
        return `implausible batch length ${length} at position ${pos}`;
      if (pos + size > fileSize) return `batch of ${size} bytes at position ${pos} runs past the end of the file (${fileSize} bytes)`;
      const base = baseOffsetAt(chunk, i);
      const last = lastOffsetAt(chunk, i);
      if (base <= prevLast) return `batch at position ${pos} starts at offset ${base}, not above ${prevLast}`;
      if (last >= endOffset) return `batch at position ${pos} ends at offset ${last}, beyond the replaced segment's range [${baseOffset}, ${endOffset})`;
      let batchBuf: Buffer = chunk;
      let start = i;
      if (i + size > chunk.length) {
        if (size > CHUNK) {
          batchBuf = await readAt(fh, pos, size); // larger than a chunk: read alone
          start = 0;
        } else {
          chunk = await readAt(fh, pos, Math.min(CHUNK, fileSize - pos));
          chunkPos = pos;
          batchBuf = chunk;
          start = 0;
        }
      }
      const problem = checkBatch(batchBuf, start, size);
      if (problem) return `${problem} in the batch at position ${pos} (offsets ${base} to ${last})`;
      prevLast = last;
      pos += size;
    }
    return undefined;
  } finally {
    await fh.close();
  }
}
