/**
 * The timestamp of the record at a given offset, found in the bytes a log read or a Fetch answer
 * returned from that offset on (the batch holding the offset comes first). Consumer lag in
 * seconds is "now minus this timestamp" for the record a group would consume next.
 *
 * v2 batches: LogAppendTime batches give every record the batch's max timestamp; otherwise the
 * records are walked (inflated off the event loop when compressed) to the first one at or after
 * the offset (compaction may have removed the offset itself). A batch cut short by the fetch's
 * byte limit gives its base timestamp: the first record's, never younger than the one asked for
 * in the usual case of timestamps rising within a batch. Magic 1 messages carry their own
 * timestamp; magic 0 messages none (undefined: no lag in seconds for them).
 */
import {
  ATTR_TIMESTAMP_TYPE,
  BATCH_LENGTH,
  LOG_OVERHEAD,
  MAGIC,
  RECORD_BATCH_OVERHEAD,
  attributesOf,
  baseOffsetAt,
  baseTimestampAt,
  batchRecords,
  lastOffsetAt,
  maxTimestampAt,
  openBatchAsync,
  readDecompressionCap,
} from '../../../protocol/records/index.js';

/** A magic 1 message's timestamp: after offset (8), size (4), crc (4), magic (1) and attributes (1). */
const LEGACY_TIMESTAMP = 18;

/** Milliseconds, or undefined when the bytes hold no timestamp for `offset` (no record at or after it, magic 0, none set). */
export async function timestampAtOffset(records: Buffer, offset: number): Promise<number | undefined> {
  let start = 0;
  while (records.length - start >= MAGIC + 1) {
    const size = records.readInt32BE(start + BATCH_LENGTH) + LOG_OVERHEAD;
    if (size <= LOG_OVERHEAD) return undefined;
    const magic = records.readInt8(start + MAGIC);
    const complete = start + size <= records.length;
    if (magic === 2) {
      if (records.length - start < RECORD_BATCH_OVERHEAD) return undefined;
      if (lastOffsetAt(records, start) >= offset) return valid(await timestampInBatch(records, start, offset, complete));
    } else if (magic === 1 || magic === 0) {
      // A legacy entry's offset is its last (inner) record's: the first entry reaching `offset` holds it.
      if (baseOffsetAt(records, start) >= offset)
        return magic === 1 && records.length - start >= LEGACY_TIMESTAMP + 8 ? valid(Number(records.readBigInt64BE(start + LEGACY_TIMESTAMP))) : undefined;
    } else return undefined;
    if (!complete) return undefined;
    start += size;
  }
  return undefined;
}

function valid(ts: number | undefined): number | undefined {
  return ts !== undefined && ts >= 0 ? ts : undefined;
}

async function timestampInBatch(buf: Buffer, start: number, offset: number, complete: boolean): Promise<number | undefined> {
  if ((attributesOf(buf, start) & ATTR_TIMESTAMP_TYPE) !== 0) return maxTimestampAt(buf, start);
  const base = baseOffsetAt(buf, start);
  if (!complete || offset <= base) return baseTimestampAt(buf, start);
  const batch = await openBatchAsync(buf, start, { verifyCrc: false, maxBytes: readDecompressionCap() });
  for (const r of batchRecords(batch)) if (base + r.offsetDelta >= offset) return baseTimestampAt(buf, start) + r.timestampDelta;
  return undefined;
}
