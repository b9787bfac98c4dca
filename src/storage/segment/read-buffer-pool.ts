/**
 * Reusable buffers for fetch reads. A consumer fetch reads megabytes per request; allocating a
 * fresh Buffer each time counts as V8 external memory and drove a full mark-compact GC every
 * few fetches (half the broker's time when consuming from page cache). Buffers lent here come
 * back through release() once the socket has taken the bytes; anything never released is simply
 * garbage-collected, so a reader that keeps its buffer (the coordinator, the cleaner) is safe.
 *
 * release() must be called at most once per lent buffer, and only when no one reads it anymore.
 */
export class ReadBufferPool {
  /** Free ArrayBuffers by size class (sizeClassOf). */
  private readonly free = new Map<number, ArrayBuffer[]>();
  private readonly lent = new WeakSet<ArrayBuffer>();
  private pooledBytes = 0;

  constructor(
    /** Smaller reads are plain allocations (Node's own slab serves the small ones). */
    readonly minBytes = 64 * 1024,
    /** Free memory kept at most; releases beyond it are left to the GC. */
    readonly maxPooledBytes = 64 * 1024 * 1024,
  ) {}

  acquire(length: number): Buffer {
    if (length < this.minBytes) return Buffer.allocUnsafe(length);
    const size = sizeClassOf(length);
    let ab = this.free.get(size)?.pop();
    if (ab) this.pooledBytes -= size;
    // Not `new ArrayBuffer(size)`: that zero-fills megabytes the read overwrites at once (about
    // 0.1-0.35 ms per MB here; readAt trims a short read, so no unread byte is ever sent).
    else ab = Buffer.allocUnsafeSlow(size).buffer as ArrayBuffer;
    this.lent.add(ab);
    return Buffer.from(ab, 0, length);
  }

  /** Takes back the buffer behind `buf` if it was lent here (any view of it will do). */
  release(buf: Uint8Array): void {
    const ab = buf.buffer;
    if (!(ab instanceof ArrayBuffer) || !this.lent.has(ab)) return;
    this.lent.delete(ab);
    if (this.pooledBytes + ab.byteLength > this.maxPooledBytes) return;
    let list = this.free.get(ab.byteLength);
    if (!list) this.free.set(ab.byteLength, (list = []));
    list.push(ab);
    this.pooledBytes += ab.byteLength;
  }

  releaseAll(bufs: readonly Uint8Array[]): void {
    for (const b of bufs) this.release(b);
  }

  get freeBytes(): number {
    return this.pooledBytes;
  }
}

/**
 * The smallest of 1, 1.25, 1.5, 1.75 and 2 times a power of two that holds `length`. Powers of
 * two alone wasted up to half of each buffer: a 10 MiB partition read (the bench harness's
 * max.partition.fetch.bytes) took a 16 MiB one, so a Fetch of five such partitions lent 80 MiB,
 * more than the pool keeps, and every such Fetch allocated again (external memory, then a full
 * GC); in these classes it takes 10 MiB and the same Fetch, 50 MiB, is served from the pool.
 */
export function sizeClassOf(length: number): number {
  const power = 2 ** Math.floor(Math.log2(length));
  const step = power / 4;
  return Math.ceil(length / step) * step;
}

/** The pool segment reads for Fetch draw from; the network layer releases after writing. */
export const fetchReadBuffers = new ReadBufferPool();
