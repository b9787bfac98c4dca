/**
 * acks=all produces (Kafka's DelayedProduce): an append is answered once the high watermark has
 * passed its last offset, i.e. every in-sync replica holds it. The wait is woken by the
 * partition's state changes (HW advance, ISR change, leadership lost), never by polling; the only
 * timer is the request's timeout, after which the partition is answered REQUEST_TIMED_OUT.
 */
import type { Partition } from '../partition/partition.js';
import { DelayedPartitionOperation } from './delayed-operation.js';

/** Resolves with the partition's error code (NONE once replicated). */
export class DelayedProduce extends DelayedPartitionOperation<number> {
  /**
   * @param requiredOffset the append's last offset + 1
   * @param minIsr the topic's min.insync.replicas, checked again once the HW is reached
   */
  constructor(
    partition: Partition,
    private readonly requiredOffset: number,
    private readonly minIsr: number,
    timeoutMs: number,
    registry: Set<DelayedProduce>,
  ) {
    super(partition, timeoutMs, registry as Set<DelayedPartitionOperation<number>>);
    this.onStateChange(partition);
  }

  onStateChange(partition: Partition): void {
    const check = partition.checkEnoughReplicasReachOffset(this.requiredOffset, this.minIsr);
    if (check.done) this.complete(check.errorCode);
  }

  protected answer(errorCode: number): number {
    return errorCode;
  }
}
