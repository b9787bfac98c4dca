/**
 * RecordBatch (magic 2): the decoded form, encoder and decoder. Header accessors that work in
 * place live in batch-header.ts, the walker over concatenated entries in batch-entries.ts; this file is for code
 * that needs the records (tests, down-conversion, compaction, tools), not the produce hot path.
 */
import {
  ATTR_COMPRESSION_MASK,
  ATTR_CONTROL,
  ATTR_DELETE_HORIZON,
  ATTR_TIMESTAMP_TYPE,
  ATTR_TRANSACTIONAL,
  ATTRIBUTES,
  BASE_OFFSET,
  BASE_SEQUENCE,
  BASE_TIMESTAMP,
  BATCH_LENGTH,
  CompressionType,
  CRC,
  LAST_OFFSET_DELTA,
  LOG_OVERHEAD,
  MAGIC,
  MAX_TIMESTAMP,
  PARTITION_LEADER_EPOCH,
  PRODUCER_EPOCH,
  PRODUCER_ID,
  RECORD_BATCH_OVERHEAD,
  RECORDS_COUNT,
  computeCrc,
  writeBatchHeader,
} from './batch-header.js';
import { compress, isKnownCompression } from './compression/index.js';
import { DecompressionLimitError, decompressBounded, decompressBoundedAsync } from './compression/bounded.js';
import { RecordsError } from './errors.js';
import { type KafkaRecord, MIN_RECORD_SIZE, decodeRecordsSection, encodeRecords, readRecord } from './record.js';
import { WalkResult, walkRecordsSection } from './record-walk.js';

export enum TimestampType {
  CreateTime = 0,
  LogAppendTime = 1,
}

export const NO_PRODUCER_ID = -1n;
export const NO_PRODUCER_EPOCH = -1;
export const NO_SEQUENCE = -1;
export const NO_TIMESTAMP = -1n;

/** Everything in a v2 batch, decoded. Offsets and timestamps are bigint; deltas are number. */
export interface RecordBatch {
  baseOffset: bigint;
  /** Bytes of the whole batch, including the 12-byte offset+length prefix. */
  sizeInBytes: number;
  partitionLeaderEpoch: number;
  magic: 2;
  crc: number;
  attributes: number;
  compression: CompressionType;
  timestampType: TimestampType;
  isTransactional: boolean;
  isControl: boolean;
  hasDeleteHorizon: boolean;
  lastOffsetDelta: number;
  baseTimestamp: bigint;
  maxTimestamp: bigint;
  producerId: bigint;
  producerEpoch: number;
  baseSequence: number;
  records: KafkaRecord[];
}

export interface BatchInput {
  records: readonly KafkaRecord[];
  baseOffset?: bigint; // default 0
  partitionLeaderEpoch?: number; // default -1
  compression?: CompressionType; // default None
  timestampType?: TimestampType; // default CreateTime
  isTransactional?: boolean;
  isControl?: boolean;
  /** KIP-534: baseTimestamp is the batch's delete horizon (set by the log cleaner). */
  hasDeleteHorizon?: boolean;
  baseTimestamp?: bigint; // default -1 (no timestamp)
  /** Default: baseTimestamp + largest timestampDelta (or baseTimestamp when there are no records). */
  maxTimestamp?: bigint;
  /** Default: largest offsetDelta, or 0 with no records. */
  lastOffsetDelta?: number;
  producerId?: bigint; // default -1
  producerEpoch?: number; // default -1
  baseSequence?: number; // default -1
}

export function encodeBatch(input: BatchInput): Buffer {
  const compression = input.compression ?? CompressionType.None;
  const records = input.records;
  const recordsSection = compress(compression, encodeRecords(records));
  const baseTimestamp = input.baseTimestamp ?? NO_TIMESTAMP;
  let maxDelta = records[0]?.timestampDelta ?? 0;
  let lastOffsetDelta = 0;
  for (const record of records) {
    if (record.timestampDelta > maxDelta) maxDelta = record.timestampDelta;
    if (record.offsetDelta > lastOffsetDelta) lastOffsetDelta = record.offsetDelta;
  }
  let attributes = compression & ATTR_COMPRESSION_MASK;
  if (input.timestampType === TimestampType.LogAppendTime) attributes |= ATTR_TIMESTAMP_TYPE;
  if (input.isTransactional) attributes |= ATTR_TRANSACTIONAL;
  if (input.isControl) attributes |= ATTR_CONTROL;
  if (input.hasDeleteHorizon) attributes |= ATTR_DELETE_HORIZON;

  const buf = Buffer.allocUnsafe(RECORD_BATCH_OVERHEAD + recordsSection.length);
  recordsSection.copy(buf, RECORD_BATCH_OVERHEAD);
  writeBatchHeader(buf, {
    baseOffset: input.baseOffset ?? 0n,
    partitionLeaderEpoch: input.partitionLeaderEpoch ?? -1,
    attributes,
    lastOffsetDelta: input.lastOffsetDelta ?? lastOffsetDelta,
    baseTimestamp,
    maxTimestamp: input.maxTimestamp ?? (records.length > 0 ? baseTimestamp + BigInt(maxDelta) : baseTimestamp),
    producerId: input.producerId ?? NO_PRODUCER_ID,
    producerEpoch: input.producerEpoch ?? NO_PRODUCER_EPOCH,
    baseSequence: input.baseSequence ?? NO_SEQUENCE,
    recordsCount: records.length,
  });
  return buf;
}

export interface DecodeOptions {
  /** Check the CRC32C (default true). */
  verifyCrc?: boolean;
  /**
   * Hard cap on the batch's records section once decompressed, in bytes. Required: a few KB of
   * compressed input can declare gigabytes, so every reader picks its cap (see read-limits.ts).
   * Past the cap the decoder throws RecordsError('decompressed_too_large') without producing
   * (or allocating) more than the cap.
   */
  maxBytes: number;
}

/** A batch's header fields with its records still encoded (decompressed, not yet decoded). */
export type OpenedBatch = Omit<RecordBatch, 'records'> & {
  /** The record count the header declares. */
  count: number;
  /** The uncompressed records section (aliases the input when uncompressed). */
  section: Buffer;
};

interface CheckedHeader {
  start: number;
  end: number;
  crc: number;
  attributes: number;
  compression: CompressionType;
  count: number;
}

function checkHeader(buf: Buffer, start: number, options: DecodeOptions): CheckedHeader {
  if (buf.length - start < RECORD_BATCH_OVERHEAD) throw new RecordsError('truncated', 'buffer shorter than a batch header');
  const length = buf.readInt32BE(start + BATCH_LENGTH);
  if (length < RECORD_BATCH_OVERHEAD - LOG_OVERHEAD) throw new RecordsError('bad_length', `batch length ${length} too small`);
  const end = start + length + LOG_OVERHEAD;
  if (end > buf.length) throw new RecordsError('truncated', `batch of ${end - start} bytes but only ${buf.length - start} available`);
  const magic = buf.readInt8(start + MAGIC);
  if (magic !== 2) throw new RecordsError('bad_magic', `expected magic 2, found ${magic}`);
  const crc = buf.readUInt32BE(start + CRC);
  if (options.verifyCrc !== false && crc !== computeCrc(buf, start)) {
    throw new RecordsError('crc_mismatch', `stored CRC ${crc} differs from computed ${computeCrc(buf, start)}`);
  }
  const attributes = buf.readInt16BE(start + ATTRIBUTES);
  const compression = attributes & ATTR_COMPRESSION_MASK;
  if (!isKnownCompression(compression)) throw new RecordsError('bad_compression', `unknown compression id ${compression}`);
  const count = buf.readInt32BE(start + RECORDS_COUNT);
  if (count < 0) throw new RecordsError('bad_record_count', `negative record count ${count}`);
  // Every record takes at least MIN_RECORD_SIZE bytes: refuse a count the cap cannot hold.
  if (compression !== CompressionType.None && count * MIN_RECORD_SIZE > options.maxBytes) {
    throw new RecordsError('decompressed_too_large', `batch declares ${count} records, more than ${options.maxBytes} bytes can hold`);
  }
  return { start, end, crc, attributes, compression, count };
}

/** The header fields of a v2 batch, read as they are (no CRC, compression or record checks): for tools that report a batch they cannot decode. */
export type BatchHeaderInfo = Omit<OpenedBatch, 'section'>;

export function readBatchHeaderInfo(buf: Buffer, start: number): BatchHeaderInfo {
  if (buf.length - start < RECORD_BATCH_OVERHEAD) throw new RecordsError('truncated', 'buffer shorter than a batch header');
  const attributes = buf.readInt16BE(start + ATTRIBUTES);
  const { section: _section, ...info } = viewOf(
    buf,
    {
      start,
      end: start + LOG_OVERHEAD + buf.readInt32BE(start + BATCH_LENGTH),
      crc: buf.readUInt32BE(start + CRC),
      attributes,
      compression: attributes & ATTR_COMPRESSION_MASK,
      count: buf.readInt32BE(start + RECORDS_COUNT),
    },
    EMPTY_SECTION,
  );
  return info;
}

const EMPTY_SECTION = Buffer.alloc(0);

function viewOf(buf: Buffer, h: CheckedHeader, section: Buffer): OpenedBatch {
  const { start, attributes } = h;
  return {
    baseOffset: buf.readBigInt64BE(start + BASE_OFFSET),
    sizeInBytes: h.end - start,
    partitionLeaderEpoch: buf.readInt32BE(start + PARTITION_LEADER_EPOCH),
    magic: 2,
    crc: h.crc,
    attributes,
    compression: h.compression,
    timestampType: attributes & ATTR_TIMESTAMP_TYPE ? TimestampType.LogAppendTime : TimestampType.CreateTime,
    isTransactional: (attributes & ATTR_TRANSACTIONAL) !== 0,
    isControl: (attributes & ATTR_CONTROL) !== 0,
    hasDeleteHorizon: (attributes & ATTR_DELETE_HORIZON) !== 0,
    lastOffsetDelta: buf.readInt32BE(start + LAST_OFFSET_DELTA),
    baseTimestamp: buf.readBigInt64BE(start + BASE_TIMESTAMP),
    maxTimestamp: buf.readBigInt64BE(start + MAX_TIMESTAMP),
    producerId: buf.readBigInt64BE(start + PRODUCER_ID),
    producerEpoch: buf.readInt16BE(start + PRODUCER_EPOCH),
    baseSequence: buf.readInt32BE(start + BASE_SEQUENCE),
    count: h.count,
    section,
  };
}

function decompressionError(err: unknown): RecordsError {
  if (err instanceof RecordsError) return err;
  if (err instanceof DecompressionLimitError) return new RecordsError('decompressed_too_large', `batch records: ${err.message}`);
  return new RecordsError('decompression_failed', `cannot decompress batch: ${(err as Error).message}`);
}

/** Header plus decompressed records section of the batch at `start`, within `options.maxBytes`. */
export function openBatch(buf: Buffer, start: number, options: DecodeOptions): OpenedBatch {
  const h = checkHeader(buf, start, options);
  const raw = buf.subarray(start + RECORD_BATCH_OVERHEAD, h.end);
  let section: Buffer;
  try {
    // Uncompressed records are already in memory: nothing to inflate, nothing to cap.
    section = h.compression === CompressionType.None ? raw : decompressBounded(h.compression, raw, options.maxBytes);
  } catch (err) {
    throw decompressionError(err);
  }
  return viewOf(buf, h, section);
}

/**
 * As openBatch, with the inflation off the event loop (thread pool, or zstd in slices): for
 * broker code on a request or background path, where a large batch must not stall other clients.
 */
export async function openBatchAsync(buf: Buffer, start: number, options: DecodeOptions): Promise<OpenedBatch> {
  const h = checkHeader(buf, start, options);
  const raw = buf.subarray(start + RECORD_BATCH_OVERHEAD, h.end);
  let section: Buffer;
  try {
    section = h.compression === CompressionType.None ? raw : await decompressBoundedAsync(h.compression, raw, options.maxBytes);
  } catch (err) {
    throw decompressionError(err);
  }
  return viewOf(buf, h, section);
}

/**
 * The records of an opened batch one at a time (no array of all of them), checking that the
 * section holds exactly the declared count. Throws RecordsError on malformed records.
 */
export function* batchRecords(view: OpenedBatch): Generator<KafkaRecord, void, void> {
  const section = view.section;
  const cur = { pos: 0 };
  for (let i = 0; i < view.count; i++) {
    if (cur.pos >= section.length) throw new RecordsError('record_count_mismatch', `batch declares ${view.count} records but holds ${i}`);
    yield readRecord(section, cur, section.length);
  }
  if (cur.pos !== section.length) throw new RecordsError('record_count_mismatch', `bytes left after the ${view.count} declared records`);
}

/**
 * Checks an opened batch's records without building them (an allocation-free walk): undefined
 * when every record's lengths are consistent and the section holds exactly the declared count.
 * Callers that act on a batch record by record check first, so a malformed record cannot leave
 * a batch half applied.
 */
export function checkBatchRecords(view: OpenedBatch): RecordsError | undefined {
  const result = walkRecordsSection(view.section, 0, view.section.length, view.count, false);
  if (result === WalkResult.Ok) return undefined;
  if (result === WalkResult.CountMismatch) return new RecordsError('record_count_mismatch', `batch does not hold the ${view.count} records it declares`);
  return new RecordsError('bad_record', "a record's lengths are inconsistent");
}

/** Records handled between two yields to the event loop by forEachRecordAsync. */
const RECORDS_PER_SLICE = 4096;

/**
 * Calls `fn` for each record of an opened batch, one at a time (no array of all of them),
 * yielding to the event loop every few thousand records: a batch of millions of tiny records
 * must not hold the loop for seconds.
 */
export async function forEachRecordAsync(view: OpenedBatch, fn: (record: KafkaRecord) => void): Promise<void> {
  let n = 0;
  for (const r of batchRecords(view)) {
    fn(r);
    if (++n % RECORDS_PER_SLICE === 0) await new Promise<void>((resolve) => setImmediate(resolve));
  }
}

/** Sections up to this size are checked in one allocation-free walk (a few ms at most). */
const SYNC_CHECK_MAX_BYTES = 1 << 20;

/**
 * As checkBatchRecords, without holding the event loop on a large section: above 1 MiB the
 * records are read one at a time with a yield every few thousand.
 */
export async function checkBatchRecordsAsync(view: OpenedBatch): Promise<RecordsError | undefined> {
  if (view.section.length <= SYNC_CHECK_MAX_BYTES) return checkBatchRecords(view);
  try {
    await forEachRecordAsync(view, () => undefined);
    return undefined;
  } catch (err) {
    if (err instanceof RecordsError) return err;
    throw err;
  }
}

function withRecords(view: OpenedBatch): RecordBatch {
  const { count, section, ...header } = view;
  return { ...header, records: decodeRecordsSection(section, count) };
}

/**
 * Decodes the batch starting at `start`, records included. Throws RecordsError (with a reason
 * the broker can map to an error code) on any structural problem, and 'decompressed_too_large'
 * when the records inflate past `options.maxBytes`. Records alias `buf` (or the decompressed copy).
 */
export function decodeBatch(buf: Buffer, start: number, options: DecodeOptions): RecordBatch {
  return withRecords(openBatch(buf, start, options));
}

/** As decodeBatch, inflating off the event loop (see openBatchAsync). */
export async function decodeBatchAsync(buf: Buffer, start: number, options: DecodeOptions): Promise<RecordBatch> {
  return withRecords(await openBatchAsync(buf, start, options));
}

/** Absolute timestamp of a record, honouring LogAppendTime (where every record takes maxTimestamp). */
export function recordTimestamp(
  batch: Pick<RecordBatch, 'timestampType' | 'maxTimestamp' | 'baseTimestamp'>,
  record: Pick<KafkaRecord, 'timestampDelta'>,
): bigint {
  return batch.timestampType === TimestampType.LogAppendTime ? batch.maxTimestamp : batch.baseTimestamp + BigInt(record.timestampDelta);
}

export {
  validateBatchHeader,
  validateBatches,
  checkUncompressedRecords,
  checkCompressedRecords,
  type ValidateOptions,
  type RecordsCheckOptions,
  type RecordsVerdict,
} from './validate.js';
