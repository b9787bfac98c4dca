// Splits a TCP byte stream into Kafka request frames (4-byte big-endian size, then the payload).
// Chunks are kept in a list and each frame is copied at most once; a frame lying entirely inside one
// chunk is returned as a zero-copy subarray of it. Memory follows the bytes that arrived: nothing
// is allocated from a declared size, so a prefix claiming 100 MB followed by 10 bytes holds 10 bytes.

import { copyIntoShared } from './shared-frame-buffers.js';

/** Thrown for a size prefix that must close the connection. */
export class FrameSizeError extends Error {
  override readonly name = 'FrameSizeError';
  constructor(
    message: string,
    readonly size: number,
  ) {
    super(message);
  }
}

/** apiKey (2) + apiVersion (2) + correlationId (4): anything smaller cannot be a request. */
export const MIN_REQUEST_FRAME_BYTES = 8;

export class FrameReader {
  private readonly chunks: Buffer[] = [];
  private buffered = 0;
  /** Payload size of the frame being assembled, once its prefix has been read; -1 before. */
  private expected = -1;

  /**
   * `limits`, when given and returning a value, replaces maxFrameBytes and the header minimum (SASL
   * before authentication). `allocate` gives the buffer a frame spread over several chunks is
   * copied into (told the frame's api key). `ownMemory`, when given and true for a frame's api
   * key, has that frame copied into `allocate`'s memory even when it lies inside one chunk (a
   * Produce frame whose records shard workers read from shared memory).
   */
  constructor(
    private readonly maxFrameBytes: number,
    private readonly limits?: () => { maxBytes: number; minBytes: number; maxName: string } | undefined,
    private readonly allocate: (n: number, apiKey: number) => Buffer = Buffer.allocUnsafe,
    private readonly ownMemory?: (apiKey: number) => boolean,
  ) {}

  /** Bytes received but not yet returned as frames (including a partial size prefix). */
  get bufferedBytes(): number {
    return this.buffered;
  }

  /** Whether the bytes here may complete a frame (request metrics read the clock only then, not per chunk). */
  get mayHaveFrame(): boolean {
    return this.expected < 0 ? this.buffered >= 4 : this.buffered >= this.expected;
  }

  push(chunk: Buffer): void {
    if (chunk.length === 0) return;
    this.chunks.push(chunk);
    this.buffered += chunk.length;
  }

  /**
   * The next complete frame (without its size prefix), or null when more bytes are needed.
   * Throws FrameSizeError as soon as a bad size prefix is seen, before the payload is buffered.
   */
  next(): Buffer | null {
    return this.frameSize() < 0 ? null : this.takeFrame();
  }

  /**
   * The payload size of the frame being read, parsing its prefix once 4 bytes are here; -1 while
   * the prefix is incomplete. Throws FrameSizeError for a size that must close the connection.
   */
  frameSize(): number {
    if (this.expected < 0) {
      if (this.buffered < 4) return -1;
      const size = this.readSizePrefix();
      if (size < 0) throw new FrameSizeError(`negative frame size ${size}`, size);
      const special = this.limits?.();
      const max = special?.maxBytes ?? this.maxFrameBytes;
      if (size > max) {
        throw new FrameSizeError(`frame size ${size} is larger than ${special?.maxName ?? 'socket.request.max.bytes'} ${max}`, size);
      }
      if (size < (special?.minBytes ?? MIN_REQUEST_FRAME_BYTES)) throw new FrameSizeError(`frame size ${size} is too small for a request header`, size);
      this.expected = size;
    }
    return this.expected;
  }

  /** The frame whose size `frameSize` returned, once all of it is here; null before. */
  takeFrame(): Buffer | null {
    if (this.expected < 0 || this.buffered < this.expected) return null;
    const frame = this.takePayload(this.expected);
    this.expected = -1;
    return frame;
  }

  /** Drops everything buffered (the connection is gone, or its input ended mid-frame). */
  clear(): void {
    this.chunks.length = 0;
    this.buffered = 0;
    this.expected = -1;
  }

  private readSizePrefix(): number {
    const head = this.chunks[0]!;
    if (head.length >= 4) {
      const size = head.readInt32BE(0);
      this.consumeHead(4);
      return size;
    }
    return this.take(4).readInt32BE(0);
  }

  /** Removes and returns a frame's n bytes (n <= buffered). */
  private takePayload(n: number): Buffer {
    // Below two bytes there is no api key (a SASL token's frame can be that small).
    if (n < 2) return this.take(n);
    const head = this.chunks[0]!;
    // A chunk already in shared memory (posted by a network thread) is memory of its own: no copy.
    if (head.length >= n && (head.buffer instanceof SharedArrayBuffer || !this.ownMemory?.(head.readInt16BE(0)))) {
      const frame = head.subarray(0, n);
      this.consumeHead(n);
      return frame;
    }
    return this.copyOut(n, this.allocate(n, this.peekApiKey()));
  }

  /** The first two buffered bytes as a request's api key (at least two are here). */
  private peekApiKey(): number {
    const head = this.chunks[0]!;
    if (head.length >= 2) return head.readInt16BE(0);
    return (((head[0]! << 8) | this.chunks[1]![0]!) << 16) >> 16;
  }

  /** Removes and returns the first n buffered bytes (n <= buffered). */
  private take(n: number): Buffer {
    const head = this.chunks[0]!;
    if (head.length >= n) {
      const frame = head.subarray(0, n);
      this.consumeHead(n);
      return frame;
    }
    return this.copyOut(n, Buffer.allocUnsafe(n));
  }

  /** Moves the first n buffered bytes into `out` (n bytes long). */
  private copyOut(n: number, out: Buffer): Buffer {
    let filled = 0;
    while (filled < n) {
      const chunk = this.chunks[0]!;
      const wanted = Math.min(chunk.length, n - filled);
      if (out.buffer instanceof SharedArrayBuffer) copyIntoShared(wanted === chunk.length ? chunk : chunk.subarray(0, wanted), out, filled);
      else chunk.copy(out, filled, 0, wanted);
      filled += wanted;
      this.consumeHead(wanted);
    }
    return out;
  }

  private consumeHead(n: number): void {
    const head = this.chunks[0]!;
    this.buffered -= n;
    if (n === head.length) this.chunks.shift();
    else this.chunks[0] = head.subarray(n);
  }
}
