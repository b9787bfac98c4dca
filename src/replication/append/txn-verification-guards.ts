/**
 * KIP-890 part 1, the partition's side (Kafka's VerificationGuard and VerificationStateEntry):
 * once the transaction coordinator has confirmed that a producer's ongoing transaction holds a
 * partition, the leader keeps a guard for that producer and epoch at its current leader epoch,
 * and a transactional batch admitted by that verification is appended only if the guard still
 * holds when the batch's arrival turn comes. A commit or abort marker for the producer clears
 * the guard when the marker's own turn comes, so a late batch verified before the transaction
 * ended but queued behind its marker is refused (INVALID_TXN_STATE) instead of opening a
 * transaction nobody will end (a hanging transaction: the last stable offset stuck). Guards live
 * beside the Partition object (a WeakMap): a partition dropped or re-created starts with none, and
 * a guard from an older leader epoch does not hold. Nothing here runs for non-transactional
 * batches.
 */
import type { Partition } from '../partition/partition.js';

/** The producer a verified transactional batch comes from. */
export interface VerifiedTxnProducer {
  producerId: bigint;
  producerEpoch: number;
}

interface Guard {
  producerEpoch: number;
  leaderEpoch: number;
}

export class TxnVerificationGuards {
  private readonly byPartition = new WeakMap<Partition, Map<bigint, Guard>>();

  /** Whether a verification (or the log's open transaction) still vouches for this producer here. */
  holds(p: Partition, producer: VerifiedTxnProducer): boolean {
    const g = this.byPartition.get(p)?.get(producer.producerId);
    return g !== undefined && g.producerEpoch === producer.producerEpoch && g.leaderEpoch === p.leaderEpoch;
  }

  /** The coordinator confirmed the transaction holds this partition (as of `leaderEpoch`). */
  grant(p: Partition, producer: VerifiedTxnProducer, leaderEpoch: number): void {
    let guards = this.byPartition.get(p);
    if (!guards) this.byPartition.set(p, (guards = new Map()));
    guards.set(producer.producerId, { producerEpoch: producer.producerEpoch, leaderEpoch });
  }

  /** A marker for the producer has its turn here: its transaction is over, a later batch needs verifying again. */
  endTransaction(p: Partition, producerId: bigint): void {
    const guards = this.byPartition.get(p);
    if (!guards) return;
    guards.delete(producerId);
    if (guards.size === 0) this.byPartition.delete(p);
  }

  /**
   * Whether the log already has a transaction of this producer and epoch open (its first
   * transactional batch appended): Kafka does not ask the coordinator again then.
   */
  openInLog(p: Partition, producer: VerifiedTxnProducer): boolean {
    const entry = p.log.producers.producers.get(producer.producerId);
    return entry !== undefined && entry.epoch === producer.producerEpoch && entry.currentTxnFirstOffset >= 0;
  }
}
