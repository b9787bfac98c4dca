// Produce frames in shared memory (num.io.threads > 1, docs/threads.md "A Produce with partitions
// on three shards"): the shard workers append a request's batches straight from the frame, so
// nothing is copied on the way to them. Each frame is a SharedArrayBuffer of its own, reused once
// everyone who reads it is done: the network layer (the frame's reference, released when the
// request is answered) and each shard that got a window of it (WorkerShards retains it per
// message and releases it when that shard answers or ends). A frame whose holders never release
// it (a request that failed before its answer) is simply not reused: nothing here keeps it
// alive, so the garbage collector takes it; reuse is an optimisation, never a requirement.
/** Capacities below this are powers of two (small produce requests); from it, multiples of it. */
const STEP_BYTES = 64 << 10;
const MIN_CAPACITY = 1 << 10;
/** Frames above this are rare: their memory is not kept for reuse. */
const MAX_POOLED_BYTES = 8 << 20;

function capacityOf(n: number): number {
  if (n >= STEP_BYTES) return Math.ceil(n / STEP_BYTES) * STEP_BYTES;
  let c = MIN_CAPACITY;
  while (c < n) c <<= 1;
  return c;
}

export class SharedFrameBuffers {
  /** Idle memory by capacity. */
  private readonly idle = new Map<number, SharedArrayBuffer[]>();
  private idleBytes = 0;
  /** Holders of each frame this pool gave out; weak, so a frame never released is collected. */
  private readonly holders = new WeakMap<SharedArrayBuffer, number>();

  /** `maxIdleBytes`: the most memory kept for reuse while no request uses it. */
  constructor(private readonly maxIdleBytes: number) {}

  /** A buffer of exactly n bytes in shared memory (contents undefined), held once (by the caller). */
  acquire(n: number): Buffer {
    const sab = this.reuse(n) ?? new SharedArrayBuffer(capacityOf(n));
    this.holders.set(sab, 1);
    return Buffer.from(sab, 0, n);
  }

  /**
   * Idle memory for n bytes: its own capacity, or (64 KiB steps) one at most a quarter larger, so
   * a producer's frames of varying sizes share memory (a fresh SharedArrayBuffer is zeroed page
   * by page as it is first written: that costs more than the copy into it).
   */
  private reuse(n: number): SharedArrayBuffer | undefined {
    const capacity = capacityOf(n);
    const largest = capacity < STEP_BYTES ? capacity : capacity + (n >> 2);
    for (let c = capacity; c <= largest; c += STEP_BYTES) {
      const sab = this.idle.get(c)?.pop();
      if (sab) {
        this.idleBytes -= c;
        return sab;
      }
    }
    return undefined;
  }

  /** One more holder of a frame from this pool (a shard reading a window of it); other memory: nothing. */
  retain(sab: SharedArrayBuffer): void {
    const n = this.holders.get(sab);
    if (n !== undefined) this.holders.set(sab, n + 1);
  }

  /** A holder is done with the frame; the last one gives its memory back for reuse. */
  release(sab: SharedArrayBuffer): void {
    const n = this.holders.get(sab);
    if (n === undefined) return;
    if (n > 1) {
      this.holders.set(sab, n - 1);
      return;
    }
    this.holders.delete(sab);
    const capacity = sab.byteLength;
    if (capacity > MAX_POOLED_BYTES || this.idleBytes + capacity > this.maxIdleBytes) return;
    let list = this.idle.get(capacity);
    if (!list) this.idle.set(capacity, (list = []));
    list.push(sab);
    this.idleBytes += capacity;
  }

  /** Holders of a frame (0: idle or not from this pool; for tests). */
  holdersOf(sab: SharedArrayBuffer): number {
    return this.holders.get(sab) ?? 0;
  }

  /** Bytes kept for reuse (for tests). */
  get idleSize(): number {
    return this.idleBytes;
  }
}

/** The broker's shared frames (a few frames' worth idle), shared by every connection. */
export const sharedFrameBuffers = new SharedFrameBuffers(16 << 20);

/**
 * Staging for copies into shared memory: V8 copies into a SharedArrayBuffer with relaxed atomic
 * words only where source and target are equally aligned (mod 8); otherwise byte by byte, ~8x
 * slower (1 MiB: ~390 µs against ~50, measured here). A socket chunk's bytes rarely line up with
 * their place in the frame, so those go through ordinary memory aligned like the target.
 */
const STAGING_BYTES = 64 << 10;
let staging: Buffer | undefined;

/** Copies source into target at targetStart (target in shared memory), at memcpy speed whatever the alignment. */
export function copyIntoShared(source: Buffer, target: Buffer, targetStart: number): void {
  const shift = (target.byteOffset + targetStart) & 7;
  if ((source.byteOffset & 7) === shift || source.length < 64) {
    source.copy(target, targetStart);
    return;
  }
  staging ??= Buffer.allocUnsafeSlow(STAGING_BYTES + 8);
  for (let done = 0; done < source.length; ) {
    const n = Math.min(source.length - done, STAGING_BYTES);
    source.copy(staging, shift, done, done + n); // ordinary memory: fast at any alignment
    staging.copy(target, targetStart + done, shift, shift + n); // now equally aligned
    done += n;
  }
}
