/**
 * Produce-path validation of v2 batches, reading the header in place and never building
 * objects per record. Returns `null` when valid, else a typed reason the broker maps to
 * CORRUPT_MESSAGE or INVALID_RECORD (see errors.ts).
 */
import {
  ATTR_COMPRESSION_MASK,
  ATTR_CONTROL,
  ATTRIBUTES,
  BASE_SEQUENCE,
  BATCH_LENGTH,
  CompressionType,
  LAST_OFFSET_DELTA,
  LOG_OVERHEAD,
  MAGIC,
  PRODUCER_ID,
  RECORD_BATCH_OVERHEAD,
  RECORDS_COUNT,
  computeCrc,
  storedCrcOf,
} from './batch-header.js';
import { decompress, isKnownCompression } from './compression/index.js';
import { type BatchValidationError, validationError } from './errors.js';
import { WalkResult, walkRecordsSection } from './record-walk.js';

export interface ValidateOptions {
  /**
   * Apply the checks Kafka makes on batches coming from clients (default true): at least one
   * record, lastOffsetDelta + 1 === count, no control batches, idempotent batches carry a
   * sequence. Turn off for replication/compacted data, where empty batches are legal.
   */
  fromClient?: boolean;
  /** Walk uncompressed records checking their lengths (no allocation). Default true. */
  walkRecords?: boolean;
  /**
   * Also decompress compressed batches and walk them, checking offset deltas are 0..n-1 as
   * Kafka does for compressed input. Costs a decompression; default false.
   */
  walkCompressed?: boolean;
}

/** Walks `count` records in [from, end) without allocating; maps the outcome to an error. */
function walkRecords(
  buf: Buffer,
  from: number,
  end: number,
  count: number,
  checkOffsets: boolean,
): BatchValidationError | null {
  switch (walkRecordsSection(buf, from, end, count, checkOffsets)) {
    case WalkResult.Ok:
      return null;
    case WalkResult.BadRecord:
      return validationError('bad_record', 'a record in the batch is malformed');
    case WalkResult.CountMismatch:
      return validationError('record_count_mismatch', `batch does not hold exactly the ${count} records it declares`);
    case WalkResult.OffsetMismatch:
      return validationError('inner_offset_mismatch', 'record offset deltas are not 0..n-1');
  }
}

/** Validates the v2 batch at `start` (which must be complete within `buf`). */
export function validateBatchHeader(
  buf: Buffer,
  start = 0,
  options: ValidateOptions = {},
): BatchValidationError | null {
  const available = buf.length - start;
  if (available < LOG_OVERHEAD) return validationError('truncated', 'buffer shorter than the batch prefix');
  const length = buf.readInt32BE(start + BATCH_LENGTH);
  if (length < RECORD_BATCH_OVERHEAD - LOG_OVERHEAD) {
    return validationError('bad_length', `batch size ${length + LOG_OVERHEAD} is below the ${RECORD_BATCH_OVERHEAD}-byte overhead`);
  }
  const size = length + LOG_OVERHEAD;
  if (size > available) return validationError('truncated', `batch of ${size} bytes but only ${available} available`);
  const magic = buf.readInt8(start + MAGIC);
  if (magic !== 2) return validationError('bad_magic', `expected magic 2, found ${magic}`);
  const stored = storedCrcOf(buf, start);
  const computed = computeCrc(buf, start);
  if (stored !== computed) return validationError('crc_mismatch', `stored CRC ${stored} differs from computed ${computed}`);

  const attributes = buf.readInt16BE(start + ATTRIBUTES);
  const compression = attributes & ATTR_COMPRESSION_MASK;
  if (!isKnownCompression(compression)) return validationError('bad_compression', `unknown compression id ${compression}`);
  const count = buf.readInt32BE(start + RECORDS_COUNT);
  if (count < 0) return validationError('bad_record_count', `negative record count ${count}`);

  if (options.fromClient !== false) {
    if (count === 0) return validationError('bad_record_count', 'batch has no records');
    const lastOffsetDelta = buf.readInt32BE(start + LAST_OFFSET_DELTA);
    if (lastOffsetDelta + 1 !== count) {
      return validationError('offset_range_mismatch', `lastOffsetDelta ${lastOffsetDelta} inconsistent with ${count} records`);
    }
    if (attributes & ATTR_CONTROL) return validationError('control_batch_from_client', 'clients may not write control batches');
    if (buf.readBigInt64BE(start + PRODUCER_ID) >= 0n && buf.readInt32BE(start + BASE_SEQUENCE) < 0) {
      return validationError('invalid_sequence', 'idempotent batch without a base sequence');
    }
  }

  const recordsStart = start + RECORD_BATCH_OVERHEAD;
  const end = start + size;
  if (compression === CompressionType.None) {
    return options.walkRecords === false ? null : walkRecords(buf, recordsStart, end, count, false);
  }
  if (!options.walkCompressed) return null;
  let section: Buffer;
  try {
    section = decompress(compression, buf.subarray(recordsStart, end));
  } catch (err) {
    return validationError('decompression_failed', `cannot decompress batch: ${(err as Error).message}`);
  }
  return walkRecords(section, 0, section.length, count, true);
}

/**
 * Validates a whole produce payload: every entry must be a complete, valid v2 batch, and there
 * must be no trailing partial bytes (a partial batch from a client is corruption, unlike in a
 * Fetch response).
 */
export function validateBatches(buf: Buffer, options: ValidateOptions = {}): BatchValidationError | null {
  let start = 0;
  if (buf.length === 0) return validationError('truncated', 'empty record set');
  while (start < buf.length) {
    const err = validateBatchHeader(buf, start, options);
    if (err) return err;
    start += buf.readInt32BE(start + BATCH_LENGTH) + LOG_OVERHEAD;
  }
  return null;
}
