// Reusable memory for request frames that arrive in several socket chunks (the frame reader copies
// them into one buffer). A producer sends a stream of ~batch.size frames; allocating a fresh
// buffer for each one churns V8's external memory, which forces scavenges and mark-compacts
// ("external memory pressure") that cost more CPU than the copy itself. The request router gives
// a Produce frame back once it is handled and its answer encoded, when nothing refers to it any
// more: the handler appends the batches (a write copies them into the page cache) and keeps
// numbers and strings only. Other frames are never given back (their decoded byte fields may be
// kept, e.g. a group member's metadata, a SASL token), so the garbage collector takes them as before.
import { sharedFrameBuffers } from './shared-frame-buffers.js';

/** Frames below this come from Node's own small-buffer pool; above the maximum, they are rare. */
const MIN_POOLED_BYTES = 64 << 10;
const MAX_POOLED_BYTES = 8 << 20;
/** Capacities are multiples of this, so a producer's frames of slightly varying sizes share buffers. */
const CAPACITY_STEP = 64 << 10;

export class FrameBufferPool {
  private readonly idle: Buffer[] = [];
  private idleBytes = 0;
  /** Backing stores this pool made: only those are ever taken back. */
  private readonly own = new WeakSet<ArrayBufferLike>();

  /** `maxIdleBytes`: the most memory kept for reuse while no request uses it. */
  constructor(private readonly maxIdleBytes: number) {}

  /** A buffer of exactly n bytes (contents undefined). */
  acquire(n: number): Buffer {
    if (n < MIN_POOLED_BYTES || n > MAX_POOLED_BYTES) return Buffer.allocUnsafe(n);
    // A buffer at most a quarter larger than needed: a small frame does not pin a big buffer.
    for (let i = this.idle.length - 1; i >= 0; i--) {
      const b = this.idle[i]!;
      if (b.length >= n && b.length - n <= n >> 2) {
        this.idle[i] = this.idle[this.idle.length - 1]!;
        this.idle.pop();
        this.idleBytes -= b.length;
        return b.subarray(0, n);
      }
    }
    const fresh = Buffer.allocUnsafeSlow(Math.ceil(n / CAPACITY_STEP) * CAPACITY_STEP);
    this.own.add(fresh.buffer);
    return fresh.subarray(0, n);
  }

  /**
   * Takes back a frame nothing refers to any more, when this pool made it (else does nothing: a
   * frame lying inside one socket chunk shares that chunk's memory with the next frames).
   */
  recycle(frame: Buffer): void {
    if (!this.own.has(frame.buffer)) return;
    const whole = Buffer.from(frame.buffer);
    if (this.idleBytes + whole.length > this.maxIdleBytes) return; // the garbage collector takes it
    for (const b of this.idle) if (b.buffer === whole.buffer) return; // never twice in the list
    this.idle.push(whole);
    this.idleBytes += whole.length;
  }

  /** Bytes kept for reuse (for tests). */
  get idleSize(): number {
    return this.idleBytes;
  }
}

/** The broker's pool: a few frames' worth, shared by every connection. */
export const requestFrameBuffers = new FrameBufferPool(16 << 20);

/** Produce's api key: the one request whose frame is reused once answered, and read into shared memory when shard workers read it. */
export const PRODUCE_API_KEY = 0;

/**
 * The network layer is done with a Produce frame (answered): ordinary memory goes back to this
 * pool; a shared-memory frame loses the network layer's hold, and goes back to its pool once the
 * shards reading it have answered too (shared-frame-buffers.ts).
 */
export function giveBackProduceFrame(frame: Buffer): void {
  const memory = frame.buffer;
  if (memory instanceof SharedArrayBuffer) sharedFrameBuffers.release(memory);
  else requestFrameBuffers.recycle(frame);
}
