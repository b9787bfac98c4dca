/**
 * What the cleaner tracks of transactions while it walks a log in offset order, as Kafka's
 * CleanedTransactionMetadata does:
 *
 * - a data batch of an aborted transaction (its producer has an aborted transaction whose first
 *   offset the walk has reached, per the .txnindex entries) may be discarded, and is noted as seen;
 * - an ABORT marker stays, and its .txnindex entry with it, while the walk saw data of its
 *   transaction this round; after that it may be discarded (after the delete horizon);
 * - a COMMIT marker may be discarded once the walk saw no data of its transaction before it;
 * - an empty control batch may be discarded; other control records stay.
 *
 * Every round walks from the log start, so "seen this round" means "still in the log below it".
 */
import type { AbortedTxn } from '../segment/transaction-index.js';

/** 'unreadable': a control batch that cannot be decoded (kept as is; its kind is inferred). */
export type ControlKind = 'commit' | 'abort' | 'other' | 'empty' | 'unreadable';

export class CleanedTransactions {
  private readonly queue: AbortedTxn[];
  private next = 0;
  private readonly ongoingCommitted = new Set<bigint>();
  private readonly ongoingAborted = new Map<bigint, { txn: AbortedTxn; seenData: boolean }>();

  /** `aborted`: the .txnindex entries that may overlap the offsets the walk covers. */
  constructor(aborted: readonly AbortedTxn[]) {
    this.queue = [...aborted].sort((a, b) => a.firstOffset - b.firstOffset);
  }

  private consumeUpTo(offset: number): void {
    while (this.next < this.queue.length && this.queue[this.next]!.firstOffset <= offset) {
      const t = this.queue[this.next++]!;
      if (!this.ongoingAborted.has(t.producerId)) this.ongoingAborted.set(t.producerId, { txn: t, seenData: false });
    }
  }

  /** A data batch ending at `lastOffset`: true when it belongs to an aborted transaction (discard it). */
  onDataBatch(producerId: bigint, lastOffset: number, transactional: boolean): boolean {
    this.consumeUpTo(lastOffset);
    if (!transactional) return false;
    const aborted = this.ongoingAborted.get(producerId);
    if (aborted) {
      aborted.seenData = true;
      return true;
    }
    this.ongoingCommitted.add(producerId);
    return false;
  }

  /**
   * A control batch at `lastOffset`: whether it may be discarded, and the .txnindex entry to keep
   * for it (an ABORT marker whose transaction still had data this round).
   */
  onControlBatch(producerId: bigint, lastOffset: number, kind: ControlKind): { discardable: boolean; keepEntry?: AbortedTxn } {
    this.consumeUpTo(lastOffset);
    if (kind === 'unreadable') {
      // It ends its producer's transaction all the same: the ABORT marker the index names, or a
      // COMMIT. Never discardable (the cleaner keeps what it cannot read).
      const inferred = this.ongoingAborted.get(producerId)?.txn.lastOffset === lastOffset ? 'abort' : 'commit';
      return { ...this.onControlBatch(producerId, lastOffset, inferred), discardable: false };
    }
    switch (kind) {
      case 'abort': {
        const aborted = this.ongoingAborted.get(producerId);
        this.ongoingAborted.delete(producerId);
        if (aborted?.seenData) return { discardable: false, keepEntry: aborted.txn };
        return { discardable: true };
      }
      case 'commit':
        return { discardable: !this.ongoingCommitted.delete(producerId) };
      case 'empty':
        return { discardable: true };
      case 'other':
        return { discardable: false };
    }
  }
}
