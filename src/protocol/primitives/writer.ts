/**
 * Writes Kafka protocol primitives into a growable Buffer. One Writer per response; the
 * backing store doubles as needed so encoding is a sequence of in-place writes.
 */
import { uuidToBytes } from './uuid.js';

export class Writer {
  buf: Buffer;
  offset = 0;
  constructor(initialSize = 256) {
    this.buf = Buffer.allocUnsafe(initialSize);
  }

  /** Reserves n bytes and returns where they start. Callers must read `this.buf` AFTER calling
   *  this, since it may replace the buffer. */
  private ensure(n: number): number {
    const at = this.offset;
    if (at + n > this.buf.length) {
      let size = this.buf.length * 2;
      while (size < at + n) size *= 2;
      const next = Buffer.allocUnsafe(size);
      this.buf.copy(next, 0, 0, at);
      this.buf = next;
    }
    this.offset = at + n;
    return at;
  }

  /** The bytes written so far (a view, not a copy). */
  result(): Buffer {
    return this.buf.subarray(0, this.offset);
  }

  int8(v: number): void {
    const at = this.ensure(1);
    this.buf.writeInt8(v, at);
  }
  int16(v: number): void {
    const at = this.ensure(2);
    this.buf.writeInt16BE(v, at);
  }
  int32(v: number): void {
    const at = this.ensure(4);
    this.buf.writeInt32BE(v, at);
  }
  int64(v: bigint): void {
    const at = this.ensure(8);
    this.buf.writeBigInt64BE(v, at);
  }
  uint16(v: number): void {
    const at = this.ensure(2);
    this.buf.writeUInt16BE(v, at);
  }
  uint32(v: number): void {
    const at = this.ensure(4);
    this.buf.writeUInt32BE(v, at);
  }
  float64(v: number): void {
    const at = this.ensure(8);
    this.buf.writeDoubleBE(v, at);
  }
  bool(v: boolean): void {
    {
      const at = this.ensure(1);
      this.buf[at] = v ? 1 : 0;
    }
  }
  uuid(v: string): void {
    const at = this.ensure(16);
    uuidToBytes(v).copy(this.buf, at);
  }

  uvarint(v: number): void {
    while (v >= 0x80) {
      {
      const at = this.ensure(1);
      this.buf[at] = (v & 0x7f) | 0x80;
    }
      v = Math.floor(v / 128);
    }
    {
      const at = this.ensure(1);
      this.buf[at] = v;
    }
  }
  varint(v: number): void {
    this.uvarint(v >= 0 ? v * 2 : -v * 2 - 1);
  }
  uvarlong(v: bigint): void {
    while (v >= 0x80n) {
      {
      const at = this.ensure(1);
      this.buf[at] = Number(v & 0x7fn) | 0x80;
    }
      v >>= 7n;
    }
    {
      const at = this.ensure(1);
      this.buf[at] = Number(v);
    }
  }
  varlong(v: bigint): void {
    this.uvarlong(BigInt.asUintN(64, (v << 1n) ^ (v >> 63n)));
  }

  private length(n: number, compact: boolean, width: 2 | 4): void {
    if (compact) this.uvarint(n + 1);
    else if (width === 2) this.int16(n);
    else this.int32(n);
  }
  string(v: string, compact: boolean): void {
    const n = Buffer.byteLength(v, 'utf8');
    this.length(n, compact, 2);
    const at = this.ensure(n);
    this.buf.write(v, at, n, 'utf8');
  }
  nullableString(v: string | null, compact: boolean): void {
    if (v === null) this.length(-1, compact, 2);
    else this.string(v, compact);
  }
  bytes(v: Uint8Array, compact: boolean): void {
    this.length(v.length, compact, 4);
    this.raw(v);
  }
  nullableBytes(v: Uint8Array | null, compact: boolean): void {
    if (v === null) this.length(-1, compact, 4);
    else this.bytes(v, compact);
  }
  arrayLength(n: number, compact: boolean): void {
    this.length(n, compact, 4);
  }
  nullArray(compact: boolean): void {
    this.length(-1, compact, 4);
  }
  raw(v: Uint8Array): void {
    const at = this.ensure(v.length);
    this.buf.set(v, at);
  }
}
