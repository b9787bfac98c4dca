/**
 * DeleteRecords on a leader with followers (Kafka's DelayedDeleteRecords): the leader has moved
 * its log start; the request is answered once the partition's low watermark (the lowest log
 * start offset among the leader and its live followers, which report theirs in every fetch) has
 * reached the requested offset. Woken by the partition's state changes (a follower's log start
 * moving, leadership lost), never by polling; after the request's timeout the partition is
 * answered REQUEST_TIMED_OUT.
 */
import { ErrorCode } from '../protocol/errors.js';
import type { Partition, StateWaiter } from './partition.js';

export interface DeleteRecordsResult {
  errorCode: number;
  /** The low watermark when answered. */
  lowWatermark: number;
}

export class DelayedDeleteRecords implements StateWaiter {
  private timer: NodeJS.Timeout | undefined;
  private done = false;
  private resolveWait!: (r: DeleteRecordsResult) => void;
  readonly completed: Promise<DeleteRecordsResult>;

  constructor(
    private readonly partition: Partition,
    private readonly requiredOffset: number,
    timeoutMs: number,
    private readonly isAlive: (brokerId: number) => boolean,
  ) {
    this.completed = new Promise<DeleteRecordsResult>((resolve) => (this.resolveWait = resolve));
    partition.stateWaiters.add(this);
    this.timer = setTimeout(() => this.complete(ErrorCode.REQUEST_TIMED_OUT), Math.max(0, timeoutMs));
    this.onStateChange(partition);
  }

  onStateChange(partition: Partition): void {
    if (!partition.isLeader) this.complete(ErrorCode.NOT_LEADER_OR_FOLLOWER);
    else if (partition.lowWatermark(this.isAlive) >= this.requiredOffset) this.complete(ErrorCode.NONE);
  }

  /** Answers now with `errorCode` (followed, leadership lost, timed out, or the broker is stopping). */
  complete(errorCode: number): void {
    if (this.done) return;
    this.done = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    this.partition.stateWaiters.delete(this);
    const lowWatermark = this.partition.isLeader ? this.partition.lowWatermark(this.isAlive) : -1;
    this.resolveWait({ errorCode, lowWatermark: errorCode === ErrorCode.NOT_LEADER_OR_FOLLOWER ? -1 : lowWatermark });
  }
}
