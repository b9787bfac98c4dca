/**
 * DeleteRecords on a leader with followers (Kafka's DelayedDeleteRecords): the leader has moved
 * its log start; the request is answered once the partition's low watermark (the lowest log
 * start offset among the leader and its live followers, which report theirs in every fetch) has
 * reached the requested offset. Woken by the partition's state changes (a follower's log start
 * moving, leadership lost), never by polling; after the request's timeout the partition is
 * answered REQUEST_TIMED_OUT.
 */
import { ErrorCode } from '../../protocol/errors.js';
import type { Partition } from '../partition/partition.js';
import { DelayedPartitionOperation } from './delayed-operation.js';

export interface DeleteRecordsResult {
  errorCode: number;
  /** The low watermark when answered. */
  lowWatermark: number;
}

export class DelayedDeleteRecords extends DelayedPartitionOperation<DeleteRecordsResult> {
  constructor(
    partition: Partition,
    private readonly requiredOffset: number,
    timeoutMs: number,
    private readonly isAlive: (brokerId: number) => boolean,
  ) {
    super(partition, timeoutMs);
    this.onStateChange(partition);
  }

  onStateChange(partition: Partition): void {
    if (!partition.isLeader) this.complete(ErrorCode.NOT_LEADER_OR_FOLLOWER);
    else if (partition.lowWatermark(this.isAlive) >= this.requiredOffset) this.complete(ErrorCode.NONE);
  }

  protected answer(errorCode: number): DeleteRecordsResult {
    if (errorCode === ErrorCode.NOT_LEADER_OR_FOLLOWER || !this.partition.isLeader) return { errorCode, lowWatermark: -1 };
    return { errorCode, lowWatermark: this.partition.lowWatermark(this.isAlive) };
  }
}
