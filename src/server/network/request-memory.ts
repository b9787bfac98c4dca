// The broker-wide budget for request bytes (queued.max.request.bytes): bytes of frames being read
// and of frames handed to the dispatcher and not answered yet, summed over every connection.
//
// A connection reserves a frame's declared size once its 4-byte prefix has been read, before it
// reads the payload; when the reservation does not fit, the connection stops reading (its socket
// is paused, so the bytes wait in the kernel, not here) and queues until enough is released.
// Reserving the declared size (as Kafka's MemoryPool does) means a frame that has started being
// read can always be finished, so connections can never all stall on partial frames. Reserving is
// only bookkeeping: the memory itself is taken as bytes arrive, so a frame that claims 100 MB and
// sends 10 bytes costs 10 bytes (and is closed by socket.request.receive.timeout.ms).
//
// Two rules keep it from deadlocking or starving:
// - when nothing at all is reserved, any frame is admitted, so a frame larger than the cap (only
//   possible when socket.request.max.bytes was set above it programmatically) still gets through alone;
// - the last eighth of the budget is kept for small frames (at most that eighth): a few huge partial
//   frames cannot take every byte, so ordinary requests on other connections keep being read.
// Waiting frames are granted in arrival order within their class (small or big), so a waiting
// big frame is not overtaken by later big ones, and granting costs nothing per waiter left waiting.

/** A connection waiting for room; `grant` runs once its reservation has been taken. */
export interface MemoryWaiter {
  readonly size: number;
  grant(): void;
}

export class RequestMemoryPool {
  private reservedBytes = 0;
  private peak = 0;
  /** Waiters in arrival order, one queue per class; a Set so a closing connection leaves in O(1). */
  private readonly bigWaiters = new Set<MemoryWaiter>();
  private readonly smallWaiters = new Set<MemoryWaiter>();
  /** Frames up to this size may use the whole budget; bigger ones stop `smallReserve` short of it. */
  readonly smallReserve: number;

  /** `capacity` <= 0 means unbounded (Kafka's -1). */
  constructor(readonly capacity: number) {
    this.smallReserve = capacity > 0 ? Math.floor(capacity / 8) : 0;
  }

  get reserved(): number {
    return this.reservedBytes;
  }

  /** Highest `reserved` seen (for tests and stats). */
  get peakReserved(): number {
    return this.peak;
  }

  get waiting(): number {
    return this.bigWaiters.size + this.smallWaiters.size;
  }

  /** Reserves `size` bytes if the rules allow it now; false means: call `wait`. */
  tryReserve(size: number): boolean {
    const small = this.isSmall(size);
    // Nobody overtakes a waiter of its own class.
    if ((small ? this.smallWaiters : this.bigWaiters).size > 0 || !this.fits(size)) return false;
    this.take(size);
    return true;
  }

  /** Queues a waiter; its `grant` is called (after the bytes were reserved) once they fit. */
  wait(waiter: MemoryWaiter): void {
    this.queueOf(waiter.size).add(waiter);
  }

  /** Forgets a waiter that no longer wants its bytes (its connection closed). */
  cancel(waiter: MemoryWaiter): void {
    if (this.queueOf(waiter.size).delete(waiter)) this.grantWaiters();
  }

  release(size: number): void {
    if (size <= 0) return;
    this.reservedBytes -= size;
    if (this.reservedBytes < 0) this.reservedBytes = 0; // never expected; keeps a bug from unbounding the pool
    if (this.bigWaiters.size > 0 || this.smallWaiters.size > 0) this.grantWaiters();
  }

  private queueOf(size: number): Set<MemoryWaiter> {
    return this.isSmall(size) ? this.smallWaiters : this.bigWaiters;
  }

  private take(size: number): void {
    this.reservedBytes += size;
    if (this.reservedBytes > this.peak) this.peak = this.reservedBytes;
  }

  private isSmall(size: number): boolean {
    return size <= this.smallReserve;
  }

  private fits(size: number): boolean {
    if (this.capacity <= 0 || this.reservedBytes === 0) return true;
    const limit = this.isSmall(size) ? this.capacity : this.capacity - this.smallReserve;
    return this.reservedBytes + size <= limit;
  }

  /** Grants the heads of both queues while they fit: O(granted), whatever the number waiting. */
  private grantWaiters(): void {
    for (const queue of [this.bigWaiters, this.smallWaiters]) {
      for (const w of queue) {
        if (!this.fits(w.size)) break;
        queue.delete(w);
        this.take(w.size);
        w.grant();
      }
    }
  }
}

/**
 * One connection's share of the pool for the frame it is reading: the frame's reservation, or
 * its place in the queue for one. A dispatched frame takes the reservation with it (take()).
 */
export class FrameAdmission {
  /** Pool bytes reserved for the frame being read (its declared size); 0 = not admitted yet. */
  private admittedBytes = 0;
  private waiter: MemoryWaiter | null = null;

  /** `onGranted` runs once a queued reservation is granted (from inside another connection's release). */
  constructor(
    private readonly pool: RequestMemoryPool,
    private readonly onGranted: () => void,
  ) {}

  get reservedBytes(): number {
    return this.admittedBytes;
  }

  /** Queued for room in the pool: reading waits. */
  get waiting(): boolean {
    return this.waiter !== null;
  }

  /** Reserves the frame's declared size, or queues for it (false: read no further until granted). */
  admit(size: number): boolean {
    if (this.admittedBytes > 0) return true;
    if (this.pool.tryReserve(size)) {
      this.admittedBytes = size;
      return true;
    }
    const waiter: MemoryWaiter = {
      size,
      grant: () => {
        if (this.waiter !== waiter) {
          this.pool.release(size);
          return;
        }
        this.waiter = null;
        this.admittedBytes = size;
        this.onGranted();
      },
    };
    this.waiter = waiter;
    this.pool.wait(waiter);
    return false;
  }

  /** The frame was read whole: its reservation goes with it to the dispatcher. */
  take(): number {
    const held = this.admittedBytes;
    this.admittedBytes = 0;
    return held;
  }

  /** The frame is gone: leaves the queue and gives its reservation back. */
  drop(): void {
    if (this.waiter !== null) {
      this.pool.cancel(this.waiter);
      this.waiter = null;
    }
    if (this.admittedBytes > 0) {
      const bytes = this.admittedBytes;
      this.admittedBytes = 0;
      this.pool.release(bytes);
    }
  }
}
