/**
 * The append step of a log (Kafka's LogValidator and the offset half of UnifiedLog.append): ONE
 * walk over an append's batches, under the log's lock, that
 * - checks each batch's framing, size (max.message.bytes), magic, counts and CRC, unless the
 *   batches come validated: a produce's records are checked off the lock by produce-validation.ts
 *   (records inside compressed batches included), a coordinator's own batches are trusted;
 * - asks the producer state (an interface: the log's owner lends it) whether each idempotent or
 *   transactional batch is in sequence, before anything is written;
 * - leader: assigns offsets from the log end and stamps the leader epoch and, on LogAppendTime
 *   topics, the append time; follower: checks the leader's offsets increase past the log end;
 * - gathers what the roll decision, the flush count and the indexes need.
 * Works on the request buffer in place, reading headers through batch-header.ts.
 */
import {
  LAST_OFFSET_DELTA,
  LOG_OVERHEAD,
  baseOffsetAt,
  baseSequenceOf,
  batchSize,
  hasProducerId,
  isCrcValid,
  isTransactional,
  lastOffsetDeltaOf,
  magicOf,
  maxTimestampAt,
  producerEpochOf,
  producerIdOf,
  recordsCountOf,
  setBaseOffsetAt,
  setLogAppendTime,
  setPartitionLeaderEpoch,
} from '../../protocol/records/batch-header.js';
import { MIN_BATCH_LENGTH } from '../segment/batch-scan.js';
import { CorruptRecordError, RecordTooLargeError, UnexpectedAppendOffsetError } from '../errors.js';

/** The producer state's answer for one batch (Kafka's ProducerStateManager checks). */
export type ProducerVerdict =
  | { kind: 'append' }
  | { kind: 'duplicate'; firstOffset: number; lastOffset: number }
  | { kind: 'error'; errorCode: number; message: string };

/** What the step asks of producer state; `fromClient` false (a coordinator's batch): epochs only. */
export interface ProducerSequenceCheck {
  check(producerId: bigint, epoch: number, firstSeq: number, lastSeq: number, transactional: boolean, fromClient: boolean): ProducerVerdict;
}

const INT32_MAX = 0x7fffffff;

/** The last sequence of a batch: sequences wrap from Int32.MAX to 0, as Kafka's do. */
export function lastSequenceOf(firstSeq: number, lastOffsetDelta: number): number {
  return firstSeq > INT32_MAX - lastOffsetDelta ? lastOffsetDelta - (INT32_MAX - firstSeq) - 1 : firstSeq + lastOffsetDelta;
}

export interface AppendStepOptions {
  /** Leader: assign offsets from `logEndOffset`. Follower: keep the leader's. */
  assignOffsets: boolean;
  logEndOffset: number;
  leaderEpoch: number;
  /** LogAppendTime topics, leader: the time to stamp. */
  logAppendTime: number | undefined;
  /** Framing, sizes and CRCs already checked (produce validation, or a coordinator's own batch). */
  validated: boolean;
  /** Framing and sizes are checked but not the CRC (the caller verified it). */
  crcVerified: boolean;
  maxMessageBytes: number;
  /** For UnexpectedAppendOffsetError's message. */
  logName: string;
  /** Leader appends: the sequence check; absent, producers are not checked. */
  producers?: ProducerSequenceCheck;
  fromClient?: boolean;
}

export interface AppendPlan {
  firstOffset: number;
  lastOffset: number;
  recordCount: number;
  /** Max timestamp of the batches as stored (after LogAppendTime stamping). */
  maxTimestamp: number;
  /** The first batch's max timestamp (segment.ms counts from it). */
  firstBatchMaxTimestamp: number;
  /** Set when the producer state refused a batch, or found it a retry: nothing is to be written. */
  refused?: Exclude<ProducerVerdict, { kind: 'append' }>;
}

/**
 * Framing, size, magic, counts and (checkCrc) CRC of the batch at `pos`; returns its size or
 * throws CorruptRecordError / RecordTooLargeError. `strictCounts`: a producer's batch holds as
 * many records as offsets (a compacted replica's need not).
 */
export function checkBatchFraming(buf: Buffer, pos: number, maxMessageBytes: number, strictCounts: boolean, checkCrc: boolean): number {
  if (buf.length - pos < LOG_OVERHEAD) throw new CorruptRecordError(`truncated batch header at byte ${pos}`);
  const size = batchSize(buf, pos);
  const length = size - LOG_OVERHEAD;
  if (length < MIN_BATCH_LENGTH) throw new CorruptRecordError(`batch at byte ${pos} has invalid length ${length}`);
  if (pos + size > buf.length) throw new CorruptRecordError(`batch at byte ${pos} is truncated (${size} > ${buf.length - pos})`);
  if (size > maxMessageBytes) throw new RecordTooLargeError(`batch of ${size} bytes exceeds max.message.bytes ${maxMessageBytes}`);
  const magic = magicOf(buf, pos);
  if (magic !== 2) throw new CorruptRecordError(`batch at byte ${pos} has unsupported magic ${magic}`);
  if (checkCrc && !isCrcValid(buf, pos)) throw new CorruptRecordError(`batch at byte ${pos} fails its CRC check`);
  const lastOffsetDelta = lastOffsetDeltaOf(buf, pos);
  const count = recordsCountOf(buf, pos);
  if (lastOffsetDelta < 0 || count < 0) throw new CorruptRecordError(`batch at byte ${pos} has negative counts`);
  if (strictCounts && count !== lastOffsetDelta + 1)
    throw new CorruptRecordError(`batch at byte ${pos} holds ${count} records but spans ${lastOffsetDelta + 1} offsets`);
  return size;
}

/**
 * The append step: one walk over `buf` (see the file's header). Throws the framing errors and,
 * on a follower, UnexpectedAppendOffsetError, before anything is written.
 */
export function planAppend(buf: Buffer, o: AppendStepOptions): AppendPlan {
  if (!o.validated && buf.length === 0) throw new CorruptRecordError('empty record set');
  let pos = 0;
  let next = o.logEndOffset;
  let first = -1;
  let last = -1;
  let monotonic = true;
  let recordCount = 0;
  let maxTimestamp = -1;
  let firstBatchMaxTimestamp = -1;
  while (pos < buf.length) {
    const size = o.validated ? batchSize(buf, pos) : checkBatchFraming(buf, pos, o.maxMessageBytes, o.assignOffsets, !o.crcVerified);
    const lastOffsetDelta = buf.readInt32BE(pos + LAST_OFFSET_DELTA);
    if (o.producers && hasProducerId(buf, pos)) {
      const firstSeq = baseSequenceOf(buf, pos);
      const lastSeq = lastSequenceOf(firstSeq, lastOffsetDelta);
      const verdict = o.producers.check(producerIdOf(buf, pos), producerEpochOf(buf, pos), firstSeq, lastSeq, isTransactional(buf, pos), o.fromClient ?? true);
      if (verdict.kind !== 'append') return { firstOffset: -1, lastOffset: -1, recordCount: 0, maxTimestamp: -1, firstBatchMaxTimestamp: -1, refused: verdict };
    }
    if (o.assignOffsets) {
      setBaseOffsetAt(buf, pos, next); // the CRC does not cover the base offset nor the leader epoch
      setPartitionLeaderEpoch(buf, pos, o.leaderEpoch);
      if (o.logAppendTime !== undefined) setLogAppendTime(buf, pos, BigInt(o.logAppendTime));
      next += lastOffsetDelta + 1;
    } else {
      const base = baseOffsetAt(buf, pos);
      if (first < 0) first = base;
      if (base <= last) monotonic = false;
      last = base + lastOffsetDelta;
    }
    const ts = maxTimestampAt(buf, pos);
    if (pos === 0) firstBatchMaxTimestamp = ts;
    if (ts > maxTimestamp) maxTimestamp = ts;
    recordCount += recordsCountOf(buf, pos);
    pos += size;
  }
  if (o.assignOffsets) return { firstOffset: o.logEndOffset, lastOffset: next - 1, recordCount, maxTimestamp, firstBatchMaxTimestamp };
  if (!monotonic || first < o.logEndOffset)
    throw new UnexpectedAppendOffsetError(`replica append starting at ${first} is not beyond log end offset ${o.logEndOffset} of ${o.logName}`);
  return { firstOffset: first, lastOffset: last, recordCount, maxTimestamp, firstBatchMaxTimestamp };
}

export interface AppendSummary {
  batchCount: number;
  recordCount: number;
  /** Sum of (lastOffsetDelta + 1): how many offsets the append consumes when assigning. */
  offsetCount: number;
  maxTimestamp: number;
}

/** Checks framing, magic, size limit and CRC of every batch, without assigning. Throws typed errors. */
export function validateBatches(buf: Buffer, maxMessageBytes: number, strictCounts: boolean, checkCrc = true): AppendSummary {
  const summary: AppendSummary = { batchCount: 0, recordCount: 0, offsetCount: 0, maxTimestamp: -1 };
  if (buf.length === 0) throw new CorruptRecordError('empty record set');
  for (let pos = 0; pos < buf.length; ) {
    const size = checkBatchFraming(buf, pos, maxMessageBytes, strictCounts, checkCrc);
    const maxTs = maxTimestampAt(buf, pos);
    if (maxTs > summary.maxTimestamp) summary.maxTimestamp = maxTs;
    summary.batchCount++;
    summary.recordCount += recordsCountOf(buf, pos);
    summary.offsetCount += lastOffsetDeltaOf(buf, pos) + 1;
    pos += size;
  }
  return summary;
}

/** Leader offsets alone (planAppend's assigning half): from `firstOffset`; returns the last offset. */
export function assignOffsets(buf: Buffer, firstOffset: number, leaderEpoch: number, logAppendTime: number | undefined): number {
  const plan = planAppend(buf, {
    assignOffsets: true,
    logEndOffset: firstOffset,
    leaderEpoch,
    logAppendTime,
    validated: true,
    crcVerified: true,
    maxMessageBytes: Number.MAX_SAFE_INTEGER,
    logName: '',
  });
  return plan.lastOffset;
}

/** Replica path: offsets come with the batches; they must increase. Returns [first, last]. */
export function existingOffsetRange(buf: Buffer): { first: number; last: number; monotonic: boolean } {
  let first = -1;
  let last = -1;
  let monotonic = true;
  for (let pos = 0; pos < buf.length; pos += batchSize(buf, pos)) {
    const base = baseOffsetAt(buf, pos);
    if (first < 0) first = base;
    if (base <= last) monotonic = false;
    last = base + lastOffsetDeltaOf(buf, pos);
  }
  return { first, last, monotonic };
}
