/**
 * Allocation-free structural walk over an uncompressed (or already inflated) records section,
 * used by produce-path validation. It inlines varint decoding with plain local positions (no
 * cursor objects, no exceptions, no per-record objects), which is several times faster than
 * decoding records one by one. A walk can be resumed, so a large inflated section is checked in
 * slices with the event loop free in between.
 */

export enum WalkResult {
  Ok = 0,
  /** A record's lengths are inconsistent or run past the section (or a header key is null). */
  BadRecord = 1,
  /** Fewer records than declared, or bytes left after the declared count. */
  CountMismatch = 2,
  /** Offset deltas are not 0..n-1 (only checked when asked). */
  OffsetMismatch = 3,
  /** The walk stopped at its slice boundary; call `step` again. */
  InProgress = 4,
}

/** At most this many keyless record indexes are kept for the Produce response's record errors. */
export const MAX_REPORTED_RECORD_ERRORS = 1000;

/** Position after the varint most recently read by `zigzagAt`/`skipVarintAt`; -1 on malformed input. */
let nextPos = 0;

function zigzagAt(buf: Buffer, pos: number, end: number): number {
  let raw = 0;
  for (let shift = 0; shift < 35; shift += 7) {
    if (pos >= end) break;
    const b = buf[pos++];
    if (b === undefined) break; // an `end` past the buffer is malformed input too
    raw |= (b & 0x7f) << shift;
    if (b < 0x80) {
      nextPos = pos;
      return (raw >>> 1) ^ -(raw & 1);
    }
  }
  nextPos = -1;
  return 0;
}

/** A zigzag varlong as a number (exact up to 2^53; a timestamp delta beyond that is nonsense anyway). */
function zigzagLongAt(buf: Buffer, pos: number, end: number): number {
  const first = (pos < end ? buf[pos] : undefined) ?? 0x80;
  if (first < 0x80) {
    nextPos = pos + 1;
    return (first >>> 1) ^ -(first & 1);
  }
  let raw = 0;
  let mult = 1;
  for (let i = 0; i < 10; i++) {
    if (pos >= end) break;
    const b = buf[pos++];
    if (b === undefined) break;
    raw += (b & 0x7f) * mult;
    if (b < 0x80) {
      nextPos = pos;
      return raw % 2 === 0 ? raw / 2 : -(raw + 1) / 2;
    }
    mult *= 128;
  }
  nextPos = -1;
  return 0;
}

/** Skips a varint-length-prefixed byte string (length -1 = null); returns false when malformed. */
function skipBytesAt(buf: Buffer, pos: number, end: number): boolean {
  const len = zigzagAt(buf, pos, end);
  if (nextPos < 0 || len < -1) return false;
  if (len > 0) {
    nextPos += len;
    if (nextPos > end) return false;
  }
  return true;
}

/**
 * One walk over one section: a single object per batch, nothing per record. `keyless` counts
 * records without a key (when `trackKeys`), the first MAX_REPORTED_RECORD_ERRORS indexes kept.
 */
export class RecordWalk {
  pos: number;
  index = 0;
  /** Largest timestamp delta seen (-Infinity before the first record). */
  maxTimestampDelta = -Infinity;
  keyless = 0;
  readonly keylessIndexes: number[] = [];
  /**
   * Record timestamps (base + delta) outside [minTimestamp, maxTimestamp] are counted, the first
   * MAX_REPORTED_RECORD_ERRORS kept as index/timestamp pairs; NO_TIMESTAMP (-1) is exempt, as in
   * Kafka. Unchecked unless `checkTimestamps` sets the range.
   */
  private checkTs = false;
  private baseTimestamp = 0;
  private minTimestamp = 0;
  private maxTimestamp = 0;
  badTimestamps = 0;
  readonly badTimestampIndexes: number[] = [];
  readonly badTimestampValues: number[] = [];

  constructor(
    readonly buf: Buffer,
    from: number,
    readonly end: number,
    readonly count: number,
    readonly checkOffsets: boolean,
    readonly trackKeys: boolean,
  ) {
    this.pos = from;
  }

  checkTimestamps(baseTimestamp: number, min: number, max: number): this {
    this.checkTs = true;
    this.baseTimestamp = baseTimestamp;
    this.minTimestamp = min;
    this.maxTimestamp = max;
    return this;
  }

  /** Walks records until done or until the position passes `stopAt`. */
  step(stopAt = Number.MAX_SAFE_INTEGER): WalkResult {
    const { buf, end, count, checkOffsets, trackKeys } = this;
    let pos = this.pos;
    let i = this.index;
    let maxTs = this.maxTimestampDelta;
    let result = WalkResult.InProgress;
    for (; i < count; i++) {
      if (pos >= stopAt) break;
      if (pos >= end) {
        result = WalkResult.CountMismatch;
        break;
      }
      const bodySize = zigzagAt(buf, pos, end);
      if (nextPos < 0 || bodySize < 1) {
        result = WalkResult.BadRecord;
        break;
      }
      const recordEnd = nextPos + bodySize;
      if (recordEnd > end) {
        result = WalkResult.BadRecord;
        break;
      }
      const tsDelta = zigzagLongAt(buf, nextPos + 1, recordEnd); // after the attributes byte
      if (nextPos < 0) {
        result = WalkResult.BadRecord;
        break;
      }
      if (tsDelta > maxTs) maxTs = tsDelta;
      if (this.checkTs) {
        const ts = this.baseTimestamp + tsDelta;
        if (ts !== -1 && (ts < this.minTimestamp || ts > this.maxTimestamp) && this.badTimestamps++ < MAX_REPORTED_RECORD_ERRORS) {
          this.badTimestampIndexes.push(i);
          this.badTimestampValues.push(ts);
        }
      }
      const offsetDelta = zigzagAt(buf, nextPos, recordEnd);
      if (nextPos < 0) {
        result = WalkResult.BadRecord;
        break;
      }
      if (checkOffsets && offsetDelta !== i) {
        result = WalkResult.OffsetMismatch;
        break;
      }
      const keyLen = zigzagAt(buf, nextPos, recordEnd);
      if (nextPos < 0 || keyLen < -1) {
        result = WalkResult.BadRecord;
        break;
      }
      if (keyLen > 0) nextPos += keyLen;
      else if (keyLen < 0 && trackKeys) {
        if (this.keyless++ < MAX_REPORTED_RECORD_ERRORS) this.keylessIndexes.push(i);
      }
      if (nextPos > recordEnd || !skipBytesAt(buf, nextPos, recordEnd)) {
        result = WalkResult.BadRecord;
        break;
      }
      const headerCount = zigzagAt(buf, nextPos, recordEnd);
      if (nextPos < 0 || headerCount < 0) {
        result = WalkResult.BadRecord;
        break;
      }
      let h = 0;
      for (; h < headerCount; h++) {
        // Kafka refuses a null header key ("Invalid negative header key size").
        const hKeyLen = zigzagAt(buf, nextPos, recordEnd);
        if (nextPos < 0 || hKeyLen < 0) break;
        nextPos += hKeyLen;
        if (nextPos > recordEnd || !skipBytesAt(buf, nextPos, recordEnd)) break;
      }
      if (h < headerCount || nextPos !== recordEnd) {
        result = WalkResult.BadRecord;
        break;
      }
      pos = recordEnd;
    }
    if (result === WalkResult.InProgress && i === count) result = pos === end ? WalkResult.Ok : WalkResult.CountMismatch;
    this.pos = pos;
    this.index = i;
    this.maxTimestampDelta = maxTs;
    return result;
  }
}

/**
 * Walks `count` records in buf[from, end) checking every length, that each record ends exactly
 * where its length prefix says, and that the section holds exactly `count` records.
 */
export function walkRecordsSection(buf: Buffer, from: number, end: number, count: number, checkOffsets: boolean): WalkResult {
  return new RecordWalk(buf, from, end, count, checkOffsets, false).step();
}
