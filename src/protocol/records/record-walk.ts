/**
 * Allocation-free structural walk over an uncompressed records section, used by produce-path
 * validation. It inlines varint decoding with plain local positions (no cursor objects, no
 * exceptions), which is several times faster than decoding records one by one.
 */

export enum WalkResult {
  Ok = 0,
  /** A record's lengths are inconsistent or run past the section. */
  BadRecord = 1,
  /** Fewer records than declared, or bytes left after the declared count. */
  CountMismatch = 2,
  /** Offset deltas are not 0..n-1 (only checked when asked). */
  OffsetMismatch = 3,
}

/** Position after the varint most recently read by `zigzagAt`/`skipVarintAt`; -1 on malformed input. */
let nextPos = 0;

function zigzagAt(buf: Buffer, pos: number, end: number): number {
  let raw = 0;
  for (let shift = 0; shift < 35; shift += 7) {
    if (pos >= end) break;
    const b = buf[pos++];
    raw |= (b & 0x7f) << shift;
    if (b < 0x80) {
      nextPos = pos;
      return (raw >>> 1) ^ -(raw & 1);
    }
  }
  nextPos = -1;
  return 0;
}

function skipVarintAt(buf: Buffer, pos: number, end: number): void {
  for (let i = 0; i < 10 && pos < end; i++) {
    if (buf[pos++] < 0x80) {
      nextPos = pos;
      return;
    }
  }
  nextPos = -1;
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
 * Walks `count` records in buf[from, end) checking every length, that each record ends exactly
 * where its length prefix says, and that the section holds exactly `count` records.
 */
export function walkRecordsSection(buf: Buffer, from: number, end: number, count: number, checkOffsets: boolean): WalkResult {
  let pos = from;
  for (let i = 0; i < count; i++) {
    if (pos >= end) return WalkResult.CountMismatch;
    const bodySize = zigzagAt(buf, pos, end);
    if (nextPos < 0 || bodySize < 1) return WalkResult.BadRecord;
    const recordEnd = nextPos + bodySize;
    if (recordEnd > end) return WalkResult.BadRecord;
    skipVarintAt(buf, nextPos + 1, recordEnd); // attributes byte, then timestampDelta
    if (nextPos < 0) return WalkResult.BadRecord;
    const offsetDelta = zigzagAt(buf, nextPos, recordEnd);
    if (nextPos < 0) return WalkResult.BadRecord;
    if (checkOffsets && offsetDelta !== i) return WalkResult.OffsetMismatch;
    if (!skipBytesAt(buf, nextPos, recordEnd) || !skipBytesAt(buf, nextPos, recordEnd)) return WalkResult.BadRecord;
    const headerCount = zigzagAt(buf, nextPos, recordEnd);
    if (nextPos < 0 || headerCount < 0) return WalkResult.BadRecord;
    for (let h = 0; h < headerCount; h++) {
      const keyLen = zigzagAt(buf, nextPos, recordEnd);
      if (nextPos < 0 || keyLen < 0) return WalkResult.BadRecord;
      nextPos += keyLen;
      if (nextPos > recordEnd || !skipBytesAt(buf, nextPos, recordEnd)) return WalkResult.BadRecord;
    }
    if (nextPos !== recordEnd) return WalkResult.BadRecord;
    pos = recordEnd;
  }
  return pos === end ? WalkResult.Ok : WalkResult.CountMismatch;
}
