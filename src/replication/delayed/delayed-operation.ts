/**
 * What every delayed partition operation (Kafka's DelayedOperation: acks=all produce, DeleteRecords
 * waiting for followers) shares: it is registered as a waiter on the partition's state changes,
 * re-checks itself on each, and is answered exactly once, by its check, its timeout, or a caller
 * (the broker stopping). Subclasses say what "done" means and what the answer is.
 */
import { ErrorCode } from '../../protocol/errors.js';
import type { Partition, StateWaiter } from '../partition/partition.js';

export abstract class DelayedPartitionOperation<R> implements StateWaiter {
  private timer: NodeJS.Timeout | undefined;
  private done = false;
  private resolveWait!: (r: R) => void;
  /** Resolves with the answer, once. */
  readonly completed: Promise<R>;

  protected constructor(
    protected readonly partition: Partition,
    timeoutMs: number,
    /** Where the broker finds operations still waiting (to answer them when it stops). */
    private readonly registry?: Set<DelayedPartitionOperation<R>>,
  ) {
    this.completed = new Promise<R>((resolve) => (this.resolveWait = resolve));
    partition.stateWaiters.add(this);
    registry?.add(this);
    this.timer = setTimeout(() => this.complete(ErrorCode.REQUEST_TIMED_OUT), Math.max(0, timeoutMs));
  }

  /** The partition changed: complete when the operation's condition holds. */
  abstract onStateChange(partition: Partition): void;

  /** The answer for `errorCode` (computed when completing). */
  protected abstract answer(errorCode: number): R;

  /** Answers now with `errorCode` (condition met, failed, timed out, or the broker is stopping). */
  complete(errorCode: number): void {
    if (this.done) return;
    this.done = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    this.partition.stateWaiters.delete(this);
    this.registry?.delete(this);
    this.resolveWait(this.answer(errorCode));
  }
}
