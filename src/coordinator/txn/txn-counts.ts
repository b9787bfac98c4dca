/**
 * What the transaction coordinator's metrics read at scrape time: the transactional ids this
 * broker coordinates, by state (Kafka's names), and the `__transaction_state` partitions loading.
 */
import { txnStateName } from './txn-state.js';
import type { TxnShard } from './txn-shard.js';

export interface TxnCounts {
  /** State name (Empty, Ongoing, PrepareCommit...) -> transactional ids in it; every state present. */
  readonly byState: Map<string, number>;
  loadingPartitions: number;
}

const STATE_NAMES = ['Empty', 'Ongoing', 'PrepareCommit', 'PrepareAbort', 'CompleteCommit', 'CompleteAbort', 'Dead', 'PrepareEpochFence'];

export function emptyTxnCounts(): TxnCounts {
  return { byState: new Map(STATE_NAMES.map((s) => [s, 0])), loadingPartitions: 0 };
}

export function countTxns(shards: Iterable<TxnShard>, out: TxnCounts): TxnCounts {
  for (const name of STATE_NAMES) out.byState.set(name, 0);
  for (const shard of shards)
    for (const m of shard.txns.values()) {
      const name = txnStateName(m.state);
      out.byState.set(name, (out.byState.get(name) ?? 0) + 1);
    }
  return out;
}
