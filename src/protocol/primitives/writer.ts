/**
 * Writes Kafka protocol primitives into a growable Buffer. One Writer per response; the
 * backing store doubles as needed so encoding is a sequence of in-place writes.
 *
 * With `referenceThreshold`, raw byte runs at least that long (fetched record sets) are kept by
 * reference instead of copied: `parts()` then returns the encoded message as a list of buffers
 * for a vectored socket write. Such buffers must not change until the parts are written.
 */
import { uuidToBytes } from './uuid.js';

export interface WriterOptions {
  /** raw() of at least this many bytes keeps the caller's bytes by reference (see parts()). */
  referenceThreshold?: number;
}

export class Writer {
  buf: Buffer;
  offset = 0;
  private readonly referenceThreshold: number;
  /** Finished pieces before `pieceStart`: slices of our buffers and referenced caller buffers. */
  private pieces: Buffer[] | null = null;
  private pieceStart = 0;

  constructor(initialSize = 256, options: WriterOptions = {}) {
    this.buf = Buffer.allocUnsafe(initialSize);
    this.referenceThreshold = options.referenceThreshold ?? Number.POSITIVE_INFINITY;
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

  /** The bytes written so far (a view, not a copy, unless runs were kept by reference). */
  result(): Buffer {
    if (this.pieces === null) return this.buf.subarray(0, this.offset);
    return Buffer.concat(this.parts());
  }

  /** The bytes written so far as a list of buffers, in order (one buffer when nothing was referenced). */
  parts(): Buffer[] {
    if (this.pieces === null) return [this.buf.subarray(0, this.offset)];
    const tail = this.buf.subarray(this.pieceStart, this.offset);
    return tail.length > 0 ? [...this.pieces, tail] : [...this.pieces];
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
    if (v.length >= this.referenceThreshold) {
      this.reference(v);
      return;
    }
    const at = this.ensure(v.length);
    this.buf.set(v, at);
  }

  /** Closes the current piece of our buffer and appends v itself (positions in buf stay valid). */
  private reference(v: Uint8Array): void {
    const pieces = (this.pieces ??= []);
    if (this.offset > this.pieceStart) pieces.push(this.buf.subarray(this.pieceStart, this.offset));
    pieces.push(Buffer.isBuffer(v) ? v : Buffer.from(v.buffer, v.byteOffset, v.length));
    this.pieceStart = this.offset;
  }
}
