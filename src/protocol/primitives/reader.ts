/**
 * Reads Kafka protocol primitives from a Buffer. Every read checks bounds and throws
 * `DecodeError`, so a malformed frame becomes one error (the connection is closed) instead of
 * garbage values or a huge allocation.
 */
import { uuidFromBytes } from './uuid.js';

export class DecodeError extends Error {
  override name = 'DecodeError';
}

export class Reader {
  offset: number;
  constructor(
    readonly buf: Buffer,
    offset = 0,
    readonly end = buf.length,
  ) {
    this.offset = offset;
  }

  get remaining(): number {
    return this.end - this.offset;
  }

  private need(n: number): number {
    const at = this.offset;
    if (n < 0 || at + n > this.end) {
      throw new DecodeError(`need ${n} bytes at offset ${at}, ${this.end - at} left`);
    }
    this.offset = at + n;
    return at;
  }

  int8(): number {
    return this.buf.readInt8(this.need(1));
  }
  int16(): number {
    return this.buf.readInt16BE(this.need(2));
  }
  int32(): number {
    return this.buf.readInt32BE(this.need(4));
  }
  int64(): bigint {
    return this.buf.readBigInt64BE(this.need(8));
  }
  uint16(): number {
    return this.buf.readUInt16BE(this.need(2));
  }
  uint32(): number {
    return this.buf.readUInt32BE(this.need(4));
  }
  float64(): number {
    return this.buf.readDoubleBE(this.need(8));
  }
  bool(): boolean {
    return this.buf[this.need(1)] !== 0;
  }
  uuid(): string {
    const at = this.need(16);
    return uuidFromBytes(this.buf.subarray(at, at + 16));
  }

  uvarint(): number {
    let result = 0;
    let shift = 0;
    for (let i = 0; i < 5; i++) {
      const b = this.buf[this.need(1)]!;
      result += (b & 0x7f) * 2 ** shift;
      if ((b & 0x80) === 0) return result;
      shift += 7;
    }
    throw new DecodeError('unsigned varint longer than 5 bytes');
  }
  varint(): number {
    const u = this.uvarint();
    // zigzag: 0,-1,1,-2 ... ; u may exceed 2^31 so avoid 32-bit ops on it
    return u % 2 === 0 ? u / 2 : -(u + 1) / 2;
  }
  uvarlong(): bigint {
    let result = 0n;
    let shift = 0n;
    for (let i = 0; i < 10; i++) {
      const b = this.buf[this.need(1)]!;
      result |= BigInt(b & 0x7f) << shift;
      if ((b & 0x80) === 0) return result;
      shift += 7n;
    }
    throw new DecodeError('unsigned varlong longer than 10 bytes');
  }
  varlong(): bigint {
    const u = this.uvarlong();
    return (u >> 1n) ^ -(u & 1n);
  }

  /** Length of a string/bytes/array: compact forms store length+1 as an unsigned varint, -1/0 meaning null. */
  private length(compact: boolean, width: 2 | 4): number {
    if (compact) return this.uvarint() - 1;
    return width === 2 ? this.int16() : this.int32();
  }

  string(compact: boolean): string {
    const s = this.nullableString(compact);
    if (s === null) throw new DecodeError('null where a string is required');
    return s;
  }
  nullableString(compact: boolean): string | null {
    const n = this.length(compact, 2);
    if (n < 0) return null;
    const at = this.need(n);
    return this.buf.toString('utf8', at, at + n);
  }
  bytes(compact: boolean): Buffer {
    const b = this.nullableBytes(compact);
    if (b === null) throw new DecodeError('null where bytes are required');
    return b;
  }
  nullableBytes(compact: boolean): Buffer | null {
    const n = this.length(compact, 4);
    if (n < 0) return null;
    const at = this.need(n);
    return this.buf.subarray(at, at + n);
  }
  /** Array length, checked against what is left so a corrupt length cannot allocate gigabytes. */
  arrayLength(compact: boolean): number {
    const n = this.length(compact, 4);
    if (n > this.remaining) throw new DecodeError(`array of ${n} elements with ${this.remaining} bytes left`);
    return n;
  }

  /** Skips a tagged-field section we do not know, returning nothing. */
  skip(n: number): void {
    this.need(n);
  }
}
