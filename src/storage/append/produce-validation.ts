/**
 * What a produce payload must satisfy before it reaches a log, as Kafka's LogValidator checks
 * it: every batch at most max.message.bytes (checked before anything is inflated); legacy
 * message sets up-converted to one v2 batch under the same bounds; v2 batch headers validated in
 * place; the records INSIDE every batch walked, compressed ones after a capped inflation off the
 * event loop (count, offset deltas 0..n-1, lengths, header keys); keyless records refused on
 * compacted topics with per-record errors; LogAppendTime from clients refused; the header's max
 * timestamp set from the records. Produce v3+ carries exactly one batch per partition.
 *
 * Decompression cap (per batch, or per legacy set): max.message.bytes of the topic times
 * `message.max.decompression.ratio` (broker config, default 32). With the default 1 MiB
 * max.message.bytes a batch may inflate to 32 MiB: librdkafka batches (batch.size 1 MB of
 * uncompressed records), Java batches (batch.size counts compressed bytes) and kafkajs sends of
 * tens of thousands of messages fit; a bomb is cut off at the cap with MESSAGE_TOO_LARGE.
 */
import { ErrorCode } from '../../protocol/errors.js';
import {
  CompressionType,
  KAFKA_ERROR_CODE,
  LOG_OVERHEAD,
  RECORD_BATCH_OVERHEAD,
  RecordsError,
  baseTimestampAt,
  baseTimestampOf,
  batchSize,
  compressionOf,
  isLogAppendTime,
  magicOf,
  maxTimestampAt,
  maxTimestampOf,
  recordsCountOf,
  setMaxTimestamp,
  checkCompressedRecords,
  checkUncompressedRecords,
  convertProducedLegacySet,
  rewriteCrc,
  validateBatchHeader,
  type RecordsVerdict,
} from '../../protocol/records/index.js';

export interface RecordError {
  batchIndex: number;
  message: string;
}

export type PreparedRecords = { ok: true; batches: Buffer } | { ok: false; errorCode: number; message: string; recordErrors: RecordError[] };

export interface ProduceLimits {
  /** The topic's max.message.bytes. */
  maxMessageBytes: number;
  /** Cap on the bytes one batch (or one legacy set) may inflate to. */
  maxUncompressedBytes: number;
  /** cleanup.policy contains compact: records need keys. */
  compacted: boolean;
  /** "topic-partition", for Kafka's messages. */
  topicPartition: string;
  /**
   * message.timestamp.difference.max.ms of a CreateTime topic: records further than this from
   * the broker's clock are refused (INVALID_TIMESTAMP). Omitted (or Kafka's Long.MAX default):
   * unchecked.
   */
  timestampDifferenceMaxMs?: number;
}

function timestampRange(limits: ProduceLimits): { min: number; max: number } | undefined {
  const diff = limits.timestampDifferenceMaxMs;
  if (diff === undefined || !Number.isSafeInteger(diff)) return undefined;
  const now = Date.now();
  return { min: now - diff, max: now + diff };
}

/** Kafka's answer to records whose timestamps are out of range: INVALID_TIMESTAMP, one error per record. */
function refuseTimestamps(indexes: number[], timestamps: number[], range: { min: number; max: number }): PreparedRecords {
  return {
    ok: false,
    errorCode: ErrorCode.INVALID_TIMESTAMP,
    message: 'One or more records have been rejected due to invalid timestamp',
    recordErrors: indexes.map((batchIndex, i) => ({
      batchIndex,
      message: `Timestamp ${timestamps[i]} of message with offset ${batchIndex} is out of range. The timestamp should be within [${range.min}, ${range.max}]`,
    })),
  };
}

export const DEFAULT_DECOMPRESSION_RATIO = 32;

/**
 * Inflations of produced data in flight at once, broker-wide (one per libuv thread-pool
 * thread). Each may hold up to its cap (32 MiB by default) until its records are walked, so
 * one request carrying a bomb for each of 40 partitions costs 4 caps, not 40; the others wait
 * their turn in arrival order.
 */
export const MAX_CONCURRENT_INFLATIONS = 4;

class Gate {
  private active = 0;
  private readonly waiting: (() => void)[] = [];
  constructor(private readonly limit: number) {}

  async run<T>(work: () => Promise<T>): Promise<T> {
    if (this.active >= this.limit) await new Promise<void>((resolve) => this.waiting.push(resolve));
    else this.active++;
    try {
      return await work();
    } finally {
      const next = this.waiting.shift();
      if (next) next();
      else this.active--;
    }
  }
}

const inflationGate = new Gate(MAX_CONCURRENT_INFLATIONS);

/** A legacy message's attributes byte: after offset, size, CRC and magic. */
const LEGACY_ATTRIBUTES = 17;

/** Whether a legacy set holds a compressed wrapper at top level (only then is it inflated). */
function hasLegacyWrapper(records: Buffer): boolean {
  let pos = 0;
  while (pos + LOG_OVERHEAD + 6 <= records.length) {
    if ((records[pos + LEGACY_ATTRIBUTES]! & 0x07) !== 0) return true;
    const size = batchSize(records, pos);
    if (size < LOG_OVERHEAD) return false;
    pos += size;
  }
  return false;
}
const DEFAULT_LIMITS: ProduceLimits = {
  maxMessageBytes: 1048588,
  maxUncompressedBytes: 1048588 * DEFAULT_DECOMPRESSION_RATIO,
  compacted: false,
  topicPartition: 'unknown-0',
};

function refuse(errorCode: number, message: string): PreparedRecords {
  return { ok: false, errorCode, message, recordErrors: errorCode === ErrorCode.INVALID_RECORD ? [{ batchIndex: 0, message }] : [] };
}

function refuseError(err: unknown): PreparedRecords {
  if (err instanceof RecordsError) return refuse(KAFKA_ERROR_CODE[err.kafkaError], err.message);
  return refuse(ErrorCode.CORRUPT_MESSAGE, (err as Error).message);
}

/** Kafka's answer to keyless records on a compacted topic: INVALID_RECORD and one error per record. */
function refuseKeyless(total: number, indexes: number[], topicPartition: string): PreparedRecords {
  const message = `Compacted topic cannot accept message without key in topic partition ${topicPartition}`;
  const recordErrors = indexes.map((batchIndex) => ({ batchIndex, message }));
  const shown = recordErrors.slice(0, 3).map((e) => `RecordError(batchIndex=${e.batchIndex}, message='${e.message}')`);
  return {
    ok: false,
    errorCode: ErrorCode.INVALID_RECORD,
    message: `One or more records have been rejected due to ${total} record errors in total, and only showing the first three errors at most: [${shown.join(', ')}]`,
    recordErrors,
  };
}

function tooLarge(size: number, limits: ProduceLimits): PreparedRecords {
  return refuse(
    ErrorCode.MESSAGE_TOO_LARGE,
    `The record batch size in the append to ${limits.topicPartition} is ${size} bytes which exceeds the maximum configured value of ${limits.maxMessageBytes}.`,
  );
}

/** Sets the header's max timestamp from the records (CreateTime), as Kafka does; re-CRCs only on change. */
function fixMaxTimestamp(buf: Buffer, start: number, maxTimestampDelta: number): void {
  if (!Number.isSafeInteger(maxTimestampDelta)) return;
  // In numbers when exact (every real millisecond timestamp): a batch whose header is already
  // right, the usual case, then costs no BigInt.
  const baseMs = baseTimestampAt(buf, start);
  if (Number.isSafeInteger(baseMs) && Number.isSafeInteger(baseMs + maxTimestampDelta)) {
    const maxMs = Math.max(baseMs + maxTimestampDelta, -1);
    if (maxTimestampAt(buf, start) === maxMs) return;
    setMaxTimestamp(buf, start, BigInt(maxMs));
    rewriteCrc(buf, start);
    return;
  }
  const base = baseTimestampOf(buf, start);
  let max = base + BigInt(maxTimestampDelta);
  if (max < -1n) max = -1n;
  if (maxTimestampOf(buf, start) === max) return;
  setMaxTimestamp(buf, start, max);
  rewriteCrc(buf, start);
}

export async function prepareProducedRecords(
  records: Buffer | null,
  opts: { fromClient: boolean; produceVersion?: number; limits?: ProduceLimits },
): Promise<PreparedRecords> {
  const limits = opts.limits ?? DEFAULT_LIMITS;
  if (records === null || records.length < LOG_OVERHEAD + 5) return refuse(ErrorCode.CORRUPT_MESSAGE, 'empty or truncated record set');
  if (magicOf(records, 0) < 2) {
    if (opts.produceVersion !== undefined && opts.produceVersion >= 3)
      return refuse(ErrorCode.INVALID_RECORD, 'Produce v3+ must carry record batches of magic 2');
    try {
      const range = timestampRange(limits);
      const convert = (): ReturnType<typeof convertProducedLegacySet> => convertProducedLegacySet(records, { ...limits, timestampRange: range });
      const converted = hasLegacyWrapper(records) ? await inflationGate.run(convert) : await convert();
      if (converted.kind === 'empty') return refuse(ErrorCode.CORRUPT_MESSAGE, 'message set holds no complete message');
      if (converted.kind === 'keyless') return refuseKeyless(converted.total, converted.indexes, limits.topicPartition);
      if (converted.kind === 'bad_timestamps' && range) return refuseTimestamps(converted.indexes, converted.timestamps, range);
      if (converted.kind !== 'ok') return refuse(ErrorCode.INVALID_TIMESTAMP, 'One or more records have been rejected due to invalid timestamp');
      return { ok: true, batches: converted.batch };
    } catch (err) {
      return refuseError(err);
    }
  }
  if (opts.fromClient && opts.produceVersion !== undefined && opts.produceVersion >= 3 && records.length >= LOG_OVERHEAD) {
    // Checked first, so a request cannot make us inflate batches we would refuse anyway.
    if (batchSize(records, 0) < records.length) return refuse(ErrorCode.INVALID_RECORD, 'Produce v3+ must carry exactly one record batch per partition');
  }
  const range = timestampRange(limits);
  let start = 0;
  while (start < records.length) {
    const header = checkBatchHeader(records, start, opts.fromClient, limits);
    if (header.refused) return header.refused;
    const verdict: RecordsVerdict =
      compressionOf(records, start) === CompressionType.None
        ? checkUncompressedRecords(records, start, { compacted: limits.compacted, timestampRange: range })
        : await inflationGate.run(() =>
            checkCompressedRecords(records, start, {
              compacted: limits.compacted,
              maxUncompressedBytes: limits.maxUncompressedBytes,
              timestampRange: range,
            }),
          );
    const refused = applyVerdict(records, start, verdict, header.logAppendTime, limits, range);
    if (refused) return refused;
    start += batchSize(records, start);
  }
  return onePerRequest(records, opts) ?? { ok: true, batches: records };
}

/**
 * prepareProducedRecords without a promise for what needs none: v2 batches, none compressed
 * (the produce hot path: its result, then one await fewer per partition). Undefined when the
 * payload needs the asynchronous path (a legacy set, a compressed batch, anything malformed
 * enough to stop the scan): call prepareProducedRecords then, which answers the same.
 */
export function prepareUncompressedRecords(
  records: Buffer | null,
  opts: { fromClient: boolean; produceVersion?: number; limits?: ProduceLimits },
): PreparedRecords | undefined {
  if (records === null || records.length < RECORD_BATCH_OVERHEAD || !allUncompressedV2(records)) return undefined;
  const limits = opts.limits ?? DEFAULT_LIMITS;
  const range = timestampRange(limits);
  if (opts.fromClient && opts.produceVersion !== undefined && opts.produceVersion >= 3) {
    if (batchSize(records, 0) < records.length) return refuse(ErrorCode.INVALID_RECORD, 'Produce v3+ must carry exactly one record batch per partition');
  }
  for (let start = 0; start < records.length; start += batchSize(records, start)) {
    const header = checkBatchHeader(records, start, opts.fromClient, limits);
    if (header.refused) return header.refused;
    const verdict = checkUncompressedRecords(records, start, { compacted: limits.compacted, timestampRange: range });
    const refused = applyVerdict(records, start, verdict, header.logAppendTime, limits, range);
    if (refused) return refused;
  }
  return onePerRequest(records, opts) ?? { ok: true, batches: records };
}

/** Whether `records` is whole v2 batches, none compressed (a cheap walk of the headers). */
function allUncompressedV2(records: Buffer): boolean {
  for (let start = 0; start < records.length; ) {
    if (records.length - start < RECORD_BATCH_OVERHEAD || magicOf(records, start) !== 2) return false;
    const size = batchSize(records, start);
    if (size < RECORD_BATCH_OVERHEAD || size > records.length - start || compressionOf(records, start) !== CompressionType.None) return false;
    start += size;
  }
  return true;
}

/** One batch's header: its size against max.message.bytes, the header's fields, no LogAppendTime from clients. */
function checkBatchHeader(records: Buffer, start: number, fromClient: boolean, limits: ProduceLimits): { refused?: PreparedRecords; logAppendTime: boolean } {
  if (records.length - start >= LOG_OVERHEAD) {
    const size = batchSize(records, start);
    if (size > limits.maxMessageBytes) return { refused: tooLarge(size, limits), logAppendTime: false };
  }
  const invalid = validateBatchHeader(records, start, { fromClient, walkRecords: false });
  if (invalid) return { refused: refuse(KAFKA_ERROR_CODE[invalid.kafkaError], invalid.message), logAppendTime: false };
  const logAppendTime = isLogAppendTime(records, start);
  if (fromClient && logAppendTime) {
    const count = Math.min(recordsCountOf(records, start), 1000);
    const message = 'Invalid timestamp type in message. Producer should not set timestamp type to LogAppendTime.';
    return {
      refused: {
        ok: false,
        errorCode: ErrorCode.INVALID_TIMESTAMP,
        message: 'One or more records have been rejected due to invalid timestamp',
        recordErrors: Array.from({ length: count }, (_, batchIndex) => ({ batchIndex, message })),
      },
      logAppendTime,
    };
  }
  return logAppendTime ? LOG_APPEND_TIME : CREATE_TIME;
}
const LOG_APPEND_TIME = { logAppendTime: true } as const;
const CREATE_TIME = { logAppendTime: false } as const;

/** The records' verdict as the answer (undefined: accepted); an accepted CreateTime batch gets its max timestamp. */
function applyVerdict(
  records: Buffer,
  start: number,
  verdict: RecordsVerdict,
  logAppendTime: boolean,
  limits: ProduceLimits,
  range: ReturnType<typeof timestampRange>,
): PreparedRecords | undefined {
  if (verdict.kind === 'invalid') return refuse(KAFKA_ERROR_CODE[verdict.error.kafkaError], verdict.error.message);
  if (verdict.kind === 'keyless') return refuseKeyless(verdict.total, verdict.indexes, limits.topicPartition);
  if (verdict.kind === 'bad_timestamps') return refuseTimestamps(verdict.indexes, verdict.timestamps, range ?? { min: 0, max: 0 });
  if (!logAppendTime) fixMaxTimestamp(records, start, verdict.maxTimestampDelta);
  return undefined;
}

/** Produce v3+: exactly one batch per partition (checked again once the batches are walked). */
function onePerRequest(records: Buffer, opts: { fromClient: boolean; produceVersion?: number }): PreparedRecords | undefined {
  if (opts.fromClient && opts.produceVersion !== undefined && opts.produceVersion >= 3 && batchSize(records, 0) !== records.length) {
    return refuse(ErrorCode.INVALID_RECORD, 'Produce v3+ must carry exactly one record batch per partition');
  }
  return undefined;
}

/**
 * A coordinator's own batches (the group and transaction coordinators write through the broker):
 * this broker built them, so they are neither walked again nor re-CRCed as a client's would be;
 * only max.message.bytes applies, as Kafka's LogValidator applies it to every origin. Anything
 * that does not look like v2 batches of this broker's making takes the full path above.
 */
export async function prepareTrustedRecords(records: Buffer | null, limits: ProduceLimits): Promise<PreparedRecords> {
  if (records === null || records.length < RECORD_BATCH_OVERHEAD) return prepareProducedRecords(records, { fromClient: false, limits });
  for (let start = 0; start < records.length; ) {
    const size = records.length - start < RECORD_BATCH_OVERHEAD ? 0 : batchSize(records, start);
    if (size < RECORD_BATCH_OVERHEAD || size > records.length - start || magicOf(records, start) !== 2)
      return prepareProducedRecords(records, { fromClient: false, limits });
    if (size > limits.maxMessageBytes) return tooLarge(size, limits);
    start += size;
  }
  return { ok: true, batches: records };
}
