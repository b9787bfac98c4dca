/**
 * Walking the batch headers of a segment file without materialising records. Reads are
 * chunked so a scan costs a handful of syscalls, and a visitor sees each header in place.
 */
import type { FileHandle } from 'node:fs/promises';

/** What reads need of a file: positional reads (a FileHandle, or a segment's lazily opened file). */
export interface PositionalFile {
  read(buffer: Buffer, offset: number, length: number, position: number): Promise<{ bytesRead: number }>;
}
import { BATCH_LENGTH, LOG_OVERHEAD, RECORD_BATCH_OVERHEAD, isCrcValid, lastOffsetDeltaOf, magicOf } from '../../protocol/records/batch-header.js';

/** Smallest possible value of the batch length field of a v2 batch (header without records). */
export const MIN_BATCH_LENGTH = RECORD_BATCH_OVERHEAD - LOG_OVERHEAD;

export async function readAt(file: PositionalFile, position: number, length: number, alloc: (length: number) => Buffer = Buffer.allocUnsafe): Promise<Buffer> {
  const buf = alloc(length);
  let done = 0;
  while (done < length) {
    const { bytesRead } = await file.read(buf, done, length - done, position + done);
    if (bytesRead === 0) break;
    done += bytesRead;
  }
  return done === length ? buf : buf.subarray(0, done);
}

/** Writes all of buf at position (retrying short writes). */
export async function writeFully(file: FileHandle, buf: Buffer, position: number): Promise<void> {
  let done = 0;
  while (done < buf.length) {
    const { bytesWritten } = await file.write(buf, done, buf.length - done, position + done);
    done += bytesWritten;
  }
}

/**
 * Calls visit(buf, start, filePosition) for each batch header in [from, to). The header's first
 * 61 bytes are in buf at start; the batch body may not be. Return false from visit to stop.
 * Stops (silently) at a header whose length field is implausible; recovery validates fully.
 */
export async function scanBatchHeaders(
  file: PositionalFile,
  from: number,
  to: number,
  visit: (buf: Buffer, start: number, position: number, size: number) => boolean,
  chunkSize = 64 * 1024,
): Promise<number> {
  let pos = from;
  while (pos + RECORD_BATCH_OVERHEAD <= to) {
    const chunk = await readAt(file, pos, Math.min(chunkSize, to - pos));
    let i = 0;
    while (i + RECORD_BATCH_OVERHEAD <= chunk.length) {
      const length = chunk.readInt32BE(i + BATCH_LENGTH);
      if (length < MIN_BATCH_LENGTH) return pos + i;
      const size = length + LOG_OVERHEAD;
      if (pos + i + size > to) return pos + i;
      if (!visit(chunk, i, pos + i, size)) return pos + i;
      i += size;
    }
    if (i === 0) break; // short read: file shorter than expected
    pos += i;
  }
  return pos;
}

export interface BatchProblem {
  position: number;
  reason: string;
}

/** Full validation of one batch that lies entirely in buf at start. */
export function checkBatch(buf: Buffer, start: number, size: number): string | undefined {
  const magic = magicOf(buf, start);
  if (magic !== 2) return `unsupported magic ${magic}`;
  if (!isCrcValid(buf, start)) return 'CRC mismatch';
  const lastOffsetDelta = lastOffsetDeltaOf(buf, start);
  if (lastOffsetDelta < 0) return `negative last offset delta ${lastOffsetDelta}`;
  if (size < RECORD_BATCH_OVERHEAD) return `batch size ${size} below the header size`;
  return undefined;
}
