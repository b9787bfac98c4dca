/**
 * Variable-length integers as used inside v2 records (protobuf-style base-128, little-endian groups).
 *
 * Records use *signed* zigzag varints (int32) and varlongs (int64); compact arrays and tagged
 * fields elsewhere in the protocol use *unsigned* varints. Readers take a `Cursor` they advance
 * in place, so decoding allocates nothing per call. Writers take an offset and return the offset
 * just past what they wrote.
 *
 * Two varlong flavours exist: `readVarLong` (exact, bigint) and `readVarLongNumber` (fast, number,
 * throws RangeError outside ±2^52). Record timestamp deltas use the number flavour: a delta beyond
 * 2^52 ms (~140,000 years) is not a real timestamp, and bigint arithmetic per record is slow.
 */

/** A read position inside a buffer; readers advance `pos`. */
export interface Cursor {
  pos: number;
}

export class VarintError extends RangeError {
  override name = 'VarintError';
}

const MAX_VARINT_BYTES = 5;
const MAX_VARLONG_BYTES = 10;
const TWO_POW_32 = 0x1_0000_0000;

/** Reads an unsigned varint (up to 32 bits) and returns it as a non-negative number. */
export function readUnsignedVarInt(buf: Buffer, cur: Cursor): number {
  let pos = cur.pos;
  let result = 0;
  let shift = 0;
  for (let i = 0; i < MAX_VARINT_BYTES; i++) {
    const b = buf[pos++];
    if (b === undefined) throw new VarintError('varint runs past the end of the buffer');
    result |= (b & 0x7f) << shift;
    if ((b & 0x80) === 0) {
      cur.pos = pos;
      return result >>> 0;
    }
    shift += 7;
  }
  throw new VarintError('varint is longer than 5 bytes');
}

/** Reads a signed zigzag varint (int32). */
export function readVarInt(buf: Buffer, cur: Cursor): number {
  const raw = readUnsignedVarInt(buf, cur);
  return (raw >>> 1) ^ -(raw & 1);
}

/** Reads a signed zigzag varlong as a number; throws VarintError if it is outside ±2^52. */
export function readVarLongNumber(buf: Buffer, cur: Cursor): number {
  let pos = cur.pos;
  // Low 28 bits are accumulated with bit ops (exact and fast); the rest by multiplication.
  let low = 0;
  let high = 0;
  let multiplier = 1;
  for (let i = 0; i < MAX_VARLONG_BYTES; i++) {
    const b = buf[pos++];
    if (b === undefined) throw new VarintError('varlong runs past the end of the buffer');
    if (i < 4) {
      low |= (b & 0x7f) << (7 * i);
    } else {
      high += (b & 0x7f) * multiplier;
      multiplier *= 128;
    }
    if ((b & 0x80) === 0) {
      cur.pos = pos;
      const raw = high * 0x1000_0000 + low;
      if (raw > Number.MAX_SAFE_INTEGER) throw new VarintError('varlong does not fit a safe integer');
      // zigzag decode: even -> raw/2, odd -> -(raw+1)/2
      return raw % 2 === 0 ? raw / 2 : -(raw + 1) / 2;
    }
  }
  throw new VarintError('varlong is longer than 10 bytes');
}

/** Reads a signed zigzag varlong exactly, as a bigint. */
export function readVarLong(buf: Buffer, cur: Cursor): bigint {
  let pos = cur.pos;
  let raw = 0n;
  let shift = 0n;
  for (let i = 0; i < MAX_VARLONG_BYTES; i++) {
    const b = buf[pos++];
    if (b === undefined) throw new VarintError('varlong runs past the end of the buffer');
    raw |= BigInt(b & 0x7f) << shift;
    if ((b & 0x80) === 0) {
      cur.pos = pos;
      raw = BigInt.asUintN(64, raw);
      return (raw >> 1n) ^ -(raw & 1n);
    }
    shift += 7n;
  }
  throw new VarintError('varlong is longer than 10 bytes');
}

/** Advances past one varint/varlong without decoding it. */
export function skipVarint(buf: Buffer, cur: Cursor): void {
  let pos = cur.pos;
  for (let i = 0; i < MAX_VARLONG_BYTES; i++) {
    const b = buf[pos++];
    if (b === undefined) throw new VarintError('varint runs past the end of the buffer');
    if ((b & 0x80) === 0) {
      cur.pos = pos;
      return;
    }
  }
  throw new VarintError('varlong is longer than 10 bytes');
}

/** Encoded size of an unsigned 32-bit varint. */
export function sizeOfUnsignedVarInt(value: number): number {
  let v = value >>> 0;
  let size = 1;
  while (v >= 0x80) {
    v >>>= 7;
    size++;
  }
  return size;
}

/** Encoded size of a signed zigzag varint (int32). */
export function sizeOfVarInt(value: number): number {
  return sizeOfUnsignedVarInt((value << 1) ^ (value >> 31));
}

function zigzagNumber(value: number): number {
  return value >= 0 ? value * 2 : -value * 2 - 1;
}

/** Encoded size of a signed zigzag varlong given as a safe-integer number. */
export function sizeOfVarLongNumber(value: number): number {
  let raw = zigzagNumber(value);
  let size = 1;
  while (raw >= 0x80) {
    raw = Math.floor(raw / 128);
    size++;
  }
  return size;
}

/** Encoded size of a signed zigzag varlong given as a bigint. */
export function sizeOfVarLong(value: bigint): number {
  let raw = BigInt.asUintN(64, (value << 1n) ^ (value >> 63n));
  let size = 1;
  while (raw >= 0x80n) {
    raw >>= 7n;
    size++;
  }
  return size;
}

/** Writes an unsigned 32-bit varint; returns the offset after it. */
export function writeUnsignedVarInt(buf: Buffer, offset: number, value: number): number {
  let v = value >>> 0;
  while (v >= 0x80) {
    buf[offset++] = (v & 0x7f) | 0x80;
    v >>>= 7;
  }
  buf[offset++] = v;
  return offset;
}

/** Writes a signed zigzag varint (int32); returns the offset after it. */
export function writeVarInt(buf: Buffer, offset: number, value: number): number {
  return writeUnsignedVarInt(buf, offset, (value << 1) ^ (value >> 31));
}

/** Writes a signed zigzag varlong from a safe-integer number; returns the offset after it. */
export function writeVarLongNumber(buf: Buffer, offset: number, value: number): number {
  // Only what readVarLongNumber can give back: the zigzag form must stay a safe integer.
  if (!Number.isSafeInteger(value) || value >= 2 ** 52 || value < -(2 ** 52)) {
    throw new VarintError(`varlong value ${value} is outside [-2^52, 2^52)`);
  }
  let raw = zigzagNumber(value);
  // Above 32 bits bit ops would truncate, so peel off groups arithmetically first.
  while (raw >= TWO_POW_32) {
    buf[offset++] = (raw % 128) | 0x80;
    raw = Math.floor(raw / 128);
  }
  return writeUnsignedVarInt(buf, offset, raw);
}

/** Writes a signed zigzag varlong from a bigint; returns the offset after it. */
export function writeVarLong(buf: Buffer, offset: number, value: bigint): number {
  let raw = BigInt.asUintN(64, (value << 1n) ^ (value >> 63n));
  while (raw >= 0x80n) {
    buf[offset++] = Number(raw & 0x7fn) | 0x80;
    raw >>= 7n;
  }
  buf[offset++] = Number(raw);
  return offset;
}
