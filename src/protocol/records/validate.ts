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
  BASE_TIMESTAMP,
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
import { DecompressionLimitError, decompressBoundedAsync } from './compression/bounded.js';
import { type BatchValidationError, validationError } from './errors.js';
import { RecordWalk, WalkResult, walkRecordsSection } from './record-walk.js';
import { MIN_RECORD_SIZE } from './record.js';

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

function walkError(result: WalkResult, count: number): BatchValidationError | null {
  switch (result) {
    case WalkResult.Ok:
    case WalkResult.InProgress:
      return null;
    case WalkResult.BadRecord:
      return validationError('bad_record', 'a record in the batch is malformed');
    case WalkResult.CountMismatch:
      return validationError('record_count_mismatch', `batch does not hold exactly the ${count} records it declares`);
    case WalkResult.OffsetMismatch:
      return validationError('inner_offset_mismatch', 'record offset deltas are not 0..n-1');
  }
  return null;
}

/** Walks `count` records in [from, end) without allocating; maps the outcome to an error. */
function walkRecords(buf: Buffer, from: number, end: number, count: number, checkOffsets: boolean): BatchValidationError | null {
  return walkError(walkRecordsSection(buf, from, end, count, checkOffsets), count);
}

/** Validates the v2 batch at `start` (which must be complete within `buf`). */
export function validateBatchHeader(buf: Buffer, start = 0, options: ValidateOptions = {}): BatchValidationError | null {
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
    // The producer id's sign from its high word: no BigInt per batch on the produce path.
    if (buf.readInt32BE(start + PRODUCER_ID) >= 0 && buf.readInt32BE(start + BASE_SEQUENCE) < 0) {
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

/** Bytes of inflated records walked between two yields to the event loop. */
const WALK_SLICE_BYTES = 256 << 10;

export interface RecordsCheckOptions {
  /** Collect the indexes of records without a key (compacted topics refuse them). */
  compacted: boolean;
  /** CreateTime topics: record timestamps must lie in [min, max] (message.timestamp.difference.max.ms). */
  timestampRange?: { min: number; max: number };
  /** Cap on the bytes a compressed records section may inflate to. */
  maxUncompressedBytes: number;
}

/** Outcome of walking the records of one batch whose header is already validated. */
export type RecordsVerdict =
  | { kind: 'ok'; maxTimestampDelta: number }
  | { kind: 'invalid'; error: BatchValidationError }
  | { kind: 'keyless'; total: number; indexes: number[] }
  | { kind: 'bad_timestamps'; total: number; indexes: number[]; timestamps: number[] };

function verdictOf(walk: RecordWalk, result: WalkResult): RecordsVerdict {
  const error = walkError(result, walk.count);
  if (error) return { kind: 'invalid', error };
  if (walk.keyless > 0) return { kind: 'keyless', total: walk.keyless, indexes: walk.keylessIndexes };
  if (walk.badTimestamps > 0) {
    return { kind: 'bad_timestamps', total: walk.badTimestamps, indexes: walk.badTimestampIndexes, timestamps: walk.badTimestampValues };
  }
  return { kind: 'ok', maxTimestampDelta: walk.maxTimestampDelta };
}

/**
 * Walks the records of the uncompressed batch at `start` in place (synchronous: the batch is at
 * most max.message.bytes and the walk allocates nothing per record).
 */
export function checkUncompressedRecords(buf: Buffer, start: number, opts: Omit<RecordsCheckOptions, 'maxUncompressedBytes'>): RecordsVerdict {
  const end = start + buf.readInt32BE(start + BATCH_LENGTH) + LOG_OVERHEAD;
  const count = buf.readInt32BE(start + RECORDS_COUNT);
  const walk = new RecordWalk(buf, start + RECORD_BATCH_OVERHEAD, end, count, true, opts.compacted);
  if (opts.timestampRange) walk.checkTimestamps(baseTimestampNumber(buf, start), opts.timestampRange.min, opts.timestampRange.max);
  return verdictOf(walk, walk.step());
}

function baseTimestampNumber(buf: Buffer, start: number): number {
  return buf.readInt32BE(start + BASE_TIMESTAMP) * 0x1_0000_0000 + buf.readUInt32BE(start + BASE_TIMESTAMP + 4);
}

const yieldToLoop = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/**
 * Inflates the compressed batch at `start` with a hard cap (off the event loop, or in slices)
 * and walks its records in slices of WALK_SLICE_BYTES with a yield between them, checking the
 * count, the offset deltas 0..n-1, every length and the header keys, as Kafka does.
 */
export async function checkCompressedRecords(buf: Buffer, start: number, opts: RecordsCheckOptions): Promise<RecordsVerdict> {
  const end = start + buf.readInt32BE(start + BATCH_LENGTH) + LOG_OVERHEAD;
  const count = buf.readInt32BE(start + RECORDS_COUNT);
  const compression = buf.readInt16BE(start + ATTRIBUTES) & ATTR_COMPRESSION_MASK;
  const cap = opts.maxUncompressedBytes;
  if (count > cap / MIN_RECORD_SIZE) {
    return { kind: 'invalid', error: validationError('decompressed_too_large', `${count} records cannot fit in the ${cap}-byte decompression limit`) };
  }
  let section: Buffer;
  try {
    section = await decompressBoundedAsync(compression, buf.subarray(start + RECORD_BATCH_OVERHEAD, end), cap);
  } catch (err) {
    if (err instanceof DecompressionLimitError) {
      return { kind: 'invalid', error: validationError('decompressed_too_large', `batch records ${err.message}`) };
    }
    return { kind: 'invalid', error: validationError('decompression_failed', `cannot decompress batch: ${(err as Error).message}`) };
  }
  const walk = new RecordWalk(section, 0, section.length, count, true, opts.compacted);
  if (opts.timestampRange) walk.checkTimestamps(baseTimestampNumber(buf, start), opts.timestampRange.min, opts.timestampRange.max);
  for (;;) {
    const result = walk.step(walk.pos + WALK_SLICE_BYTES);
    if (result !== WalkResult.InProgress) return verdictOf(walk, result);
    await yieldToLoop();
  }
}
