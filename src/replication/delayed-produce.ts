/**
 * acks=all produces (Kafka's DelayedProduce): an append is answered once the high watermark has
 * passed its last offset, i.e. every in-sync replica holds it. The wait is woken by the
 * partition's state changes (HW advance, ISR change, leadership lost), never by polling; the only
 * timer is the request's timeout, after which the partition is answered REQUEST_TIMED_OUT.
 */
import { ErrorCode } from '../protocol/errors.js';
import type { Partition, StateWaiter } from './partition.js';

export class DelayedProduce implements StateWaiter {
  private timer: NodeJS.Timeout | undefined;
  private done = false;
  private resolveWait!: (errorCode: number) => void;
  /** Resolves with the partition's error code (NONE once replicated). */
  readonly completed: Promise<number>;

  /**
   * @param requiredOffset the append's last offset + 1
   * @param minIsr the topic's min.insync.replicas, checked again once the HW is reached
   */
  constructor(
    private readonly partition: Partition,
    private readonly requiredOffset: number,
    private readonly minIsr: number,
    timeoutMs: number,
    private readonly registry: Set<DelayedProduce>,
  ) {
    this.completed = new Promise<number>((resolve) => (this.resolveWait = resolve));
    partition.stateWaiters.add(this);
    registry.add(this);
    this.timer = setTimeout(() => this.complete(ErrorCode.REQUEST_TIMED_OUT), Math.max(0, timeoutMs));
    this.onStateChange(partition);
  }

  onStateChange(partition: Partition): void {
    const check = partition.checkEnoughReplicasReachOffset(this.requiredOffset, this.minIsr);
    if (check.done) this.complete(check.errorCode);
  }

  /** Answers now with `errorCode` (replicated, failed, timed out, or the broker is stopping). */
  complete(errorCode: number): void {
    if (this.done) return;
    this.done = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    this.partition.stateWaiters.delete(this);
    this.registry.delete(this);
    this.resolveWait(errorCode);
  }
}
