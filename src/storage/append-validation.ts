/**
 * Validation and offset assignment of producer (or replica) batches before they touch the disk.
 * Works on the request buffer in place: no per-record objects, one pass over batch headers.
 */
import {
  BATCH_LENGTH,
  LOG_OVERHEAD,
  MAGIC,
  MAX_TIMESTAMP,
  RECORDS_COUNT,
  isCrcValid,
  setLogAppendTime,
  setPartitionLeaderEpoch,
} from '../protocol/records/batch-header.js';
import { MIN_BATCH_LENGTH, readInt64, writeInt64 } from './batch-scan.js';
import { CorruptRecordError, RecordTooLargeError, UnexpectedAppendOffsetError } from './errors.js';

export interface AppendSummary {
  batchCount: number;
  recordCount: number;
  /** Sum of (lastOffsetDelta + 1): how many offsets the append consumes when assigning. */
  offsetCount: number;
  maxTimestamp: number;
}

/** Checks framing, magic, size limit and CRC of every batch. Throws typed errors. */
export function validateBatches(buf: Buffer, maxMessageBytes: number, strictCounts: boolean, checkCrc = true): AppendSummary {
  let pos = 0;
  const summary: AppendSummary = { batchCount: 0, recordCount: 0, offsetCount: 0, maxTimestamp: -1 };
  if (buf.length === 0) throw new CorruptRecordError('empty record set');
  while (pos < buf.length) {
    if (buf.length - pos < LOG_OVERHEAD) throw new CorruptRecordError(`truncated batch header at byte ${pos}`);
    const length = buf.readInt32BE(pos + BATCH_LENGTH);
    const size = length + LOG_OVERHEAD;
    if (length < MIN_BATCH_LENGTH) throw new CorruptRecordError(`batch at byte ${pos} has invalid length ${length}`);
    if (pos + size > buf.length) throw new CorruptRecordError(`batch at byte ${pos} is truncated (${size} > ${buf.length - pos})`);
    if (size > maxMessageBytes)
      throw new RecordTooLargeError(`batch of ${size} bytes exceeds max.message.bytes ${maxMessageBytes}`);
    const magic = buf.readInt8(pos + MAGIC);
    if (magic !== 2) throw new CorruptRecordError(`batch at byte ${pos} has unsupported magic ${magic}`);
    if (checkCrc && !isCrcValid(buf, pos)) throw new CorruptRecordError(`batch at byte ${pos} fails its CRC check`);
    const lastOffsetDelta = buf.readInt32BE(pos + 23);
    const count = buf.readInt32BE(pos + RECORDS_COUNT);
    if (lastOffsetDelta < 0 || count < 0) throw new CorruptRecordError(`batch at byte ${pos} has negative counts`);
    if (strictCounts && count !== lastOffsetDelta + 1)
      throw new CorruptRecordError(`batch at byte ${pos} holds ${count} records but spans ${lastOffsetDelta + 1} offsets`);
    const maxTs = readInt64(buf, pos + MAX_TIMESTAMP);
    if (maxTs > summary.maxTimestamp) summary.maxTimestamp = maxTs;
    summary.batchCount++;
    summary.recordCount += count;
    summary.offsetCount += lastOffsetDelta + 1;
    pos += size;
  }
  return summary;
}

/**
 * Leader path: rewrites base offsets from `firstOffset`, stamps the partition leader epoch and,
 * for LogAppendTime topics, the append time (which re-computes the CRC). Returns the last offset.
 */
export function assignOffsets(
  buf: Buffer,
  firstOffset: number,
  leaderEpoch: number,
  logAppendTime: number | undefined,
): number {
  let pos = 0;
  let next = firstOffset;
  while (pos < buf.length) {
    const size = buf.readInt32BE(pos + BATCH_LENGTH) + LOG_OVERHEAD;
    writeInt64(buf, next, pos); // the base offset; the CRC does not cover it
    setPartitionLeaderEpoch(buf, pos, leaderEpoch);
    if (logAppendTime !== undefined) setLogAppendTime(buf, pos, BigInt(logAppendTime));
    next += buf.readInt32BE(pos + 23) + 1;
    pos += size;
  }
  return next - 1;
}

/** Replica path: offsets come with the batches; they must increase. Returns [first, last]. */
export function existingOffsetRange(buf: Buffer): { first: number; last: number; monotonic: boolean } {
  let pos = 0;
  let first = -1;
  let last = -1;
  let monotonic = true;
  while (pos < buf.length) {
    const base = readInt64(buf, pos);
    if (first < 0) first = base;
    if (base <= last) monotonic = false;
    last = base + buf.readInt32BE(pos + 23);
    pos += buf.readInt32BE(pos + BATCH_LENGTH) + LOG_OVERHEAD;
  }
  return { first, last, monotonic };
}

/**
 * The offsets an append takes. Leader (`assign`): from the log end offset on, written into the
 * batches with the leader epoch and the append time (assignOffsets). Follower: the leader's own,
 * which must increase and start at or after the log end offset (a compacted leader leaves gaps,
 * so they need not be dense); otherwise UnexpectedAppendOffsetError, before anything is written.
 */
export function appendOffsetRange(
  buf: Buffer,
  logEndOffset: number,
  assign: boolean,
  leaderEpoch: number,
  logAppendTime: number | undefined,
  logName: string,
): { firstOffset: number; lastOffset: number } {
  if (assign) return { firstOffset: logEndOffset, lastOffset: assignOffsets(buf, logEndOffset, leaderEpoch, logAppendTime) };
  const range = existingOffsetRange(buf);
  if (!range.monotonic || range.first < logEndOffset)
    throw new UnexpectedAppendOffsetError(`replica append starting at ${range.first} is not beyond log end offset ${logEndOffset} of ${logName}`);
  return { firstOffset: range.first, lastOffset: range.last };
}

/** Max timestamp of the batches as stored (after LogAppendTime stamping). */
export function maxTimestampOfBatches(buf: Buffer): { maxTimestamp: number; firstBatchMaxTimestamp: number } {
  let pos = 0;
  let max = -1;
  let first = -1;
  while (pos < buf.length) {
    const ts = readInt64(buf, pos + MAX_TIMESTAMP);
    if (pos === 0) first = ts;
    if (ts > max) max = ts;
    pos += buf.readInt32BE(pos + BATCH_LENGTH) + LOG_OVERHEAD;
  }
  return { maxTimestamp: max, firstBatchMaxTimestamp: first };
}

