/**
 * Walking concatenated entries (v2 batches and legacy magic 0/1 messages) in a larger buffer, as
 * a log segment, a Fetch response or a produce request holds them: where each complete entry
 * starts and ends, without decoding it. Separate from batch.ts (the decoded batch) because
 * readers of legacy messages and of raw logs need only this.
 */
import { BATCH_LENGTH, LOG_OVERHEAD, MAGIC, RECORD_BATCH_OVERHEAD } from './batch-header.js';
import { RecordsError } from './errors.js';

/** Magic 0 and 1 messages start the same way: offset, size, crc, magic at byte 16. */
export const HEADER_SIZE_UP_TO_MAGIC = MAGIC + 1;
/** Smallest legal legacy message body (crc + magic + attributes + key len + value len). */
export const LEGACY_MIN_MESSAGE_SIZE = 14;

/** Position of one complete entry (v2 batch or legacy message) inside a larger buffer. */
export interface BatchEntry {
  buf: Buffer;
  start: number;
  /** Bytes including the 12-byte offset+length prefix; the entry ends at start + size. */
  size: number;
  magic: number;
}

/**
 * Walks concatenated entries (v2 batches, or magic 0/1 messages, which share the offset+size
 * prefix and the position of the magic byte). Like Kafka's log input stream it stops silently
 * at a partial trailing entry (Fetch responses are cut at max bytes) and throws RecordsError
 * for a size below the minimum overhead or an unknown magic.
 */
export function* iterateBatches(buf: Buffer, from = 0): Generator<BatchEntry, void, void> {
  let start = from;
  while (buf.length - start >= HEADER_SIZE_UP_TO_MAGIC) {
    const length = buf.readInt32BE(start + BATCH_LENGTH);
    if (length < LEGACY_MIN_MESSAGE_SIZE) {
      throw new RecordsError('bad_length', `entry at ${start} has size ${length}, below the minimum overhead`);
    }
    const size = length + LOG_OVERHEAD;
    if (start + size > buf.length) return;
    const magic = buf.readInt8(start + MAGIC);
    if (magic < 0 || magic > 2) throw new RecordsError('bad_magic', `entry at ${start} has magic ${magic}`);
    if (magic === 2 && size < RECORD_BATCH_OVERHEAD) {
      throw new RecordsError('bad_length', `batch at ${start} has size ${size}, below the v2 header size`);
    }
    yield { buf, start, size, magic };
    start += size;
  }
}

/** Number of leading bytes of `buf` made of complete entries (what iterateBatches walks). */
export function completeEntriesLength(buf: Buffer, from = 0): number {
  let end = from;
  for (const e of iterateBatches(buf, from)) end = e.start + e.size;
  return end - from;
}
