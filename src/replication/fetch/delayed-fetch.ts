/**
 * Long-polling fetches: a fetch that found fewer than min.bytes waits until appends to its
 * partitions bring enough new bytes, or until max.wait.ms passes. Appends wake it through the
 * partitions' waiter sets (no polling); the only timer is the deadline.
 */
import type { AppendWaiter, Partition } from '../partition/partition.js';

export class DelayedFetch implements AppendWaiter {
  private remaining: number;
  private readonly replica: boolean;
  private timer: NodeJS.Timeout | undefined;
  private done = false;
  private resolveWait!: () => void;
  readonly completed: Promise<void>;

  /**
   * @param fetchOffsets partition → the offset this fetch reads from and the high watermark (log
   *   end for a replica fetch) its last read saw; appends before the fetch offset do not count.
   */
  constructor(
    private readonly fetchOffsets: Map<Partition, { fetchOffset: number; seenHighWatermark: number }>,
    minBytesStillNeeded: number,
    maxWaitMs: number,
    private readonly registry: Set<DelayedFetch>,
    /** A follower's fetch (its broker id; -1 for a consumer): it reads up to the log end, so appends wake it, not the high watermark. */
    readonly replicaId = -1,
    /** Hears each append's bytes that count, before the wait checks them (a fetch over several shards sums every shard's). */
    private readonly counted?: (bytes: number) => void,
  ) {
    this.replica = replicaId >= 0;
    this.remaining = minBytesStillNeeded;
    this.completed = new Promise<void>((resolve) => (this.resolveWait = resolve));
    for (const p of fetchOffsets.keys()) (this.replica ? p.replicaWaiters : p.waiters).add(this);
    registry.add(this);
    this.timer = setTimeout(() => this.complete(), maxWaitMs);
    // An append may have landed between the read and this registration: do not sleep through it.
    for (const [p, seen] of fetchOffsets) if (this.visibleEnd(p) > seen.seenHighWatermark) this.complete();
  }

  private visibleEnd(p: Partition): number {
    return this.replica ? p.logEndOffset : p.highWatermark;
  }

  onAppend(partition: Partition, bytes: number, firstOffset: number): void {
    const from = this.fetchOffsets.get(partition)?.fetchOffset;
    // Only data at or beyond where this fetch reads counts towards min.bytes.
    if (from === undefined || this.visibleEnd(partition) <= from || firstOffset < 0 || this.done) return;
    this.counted?.(bytes);
    this.remaining -= bytes;
    if (this.remaining <= 0) this.complete();
  }

  /** Ends the wait now (enough data, deadline, or broker shutdown). */
  complete(): void {
    if (this.done) return;
    this.done = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    for (const p of this.fetchOffsets.keys()) (this.replica ? p.replicaWaiters : p.waiters).delete(this);
    this.registry.delete(this);
    this.resolveWait();
  }
}
