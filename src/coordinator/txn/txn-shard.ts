/**
 * The transactional ids of one `__transaction_state` partition, and `replay`: how each record
 * changes them (live writes and loading alike; a failed append is undone record by record).
 */
import type { CoordinatorShard, ShardContext, Undo } from '../runtime/types.js';
import type { TxnCoordinatorConfig } from './config.js';
import type { TxnRecord } from './records.js';
import { TxnState, type TxnMetadata } from './txn-state.js';

export interface TxnShardHooks {
  /**
   * A transaction's PrepareCommit/PrepareAbort is durable (or was found so while loading): its
   * markers must be written, then its Complete state.
   */
  onPrepared(shard: TxnShard, m: TxnMetadata): void;
  /** The partition finished loading: start its periodic work. */
  onLoaded(shard: TxnShard): void;
}

export type TxnContext = ShardContext<TxnRecord>;

export class TxnShard implements CoordinatorShard<TxnRecord> {
  readonly txns = new Map<string, TxnMetadata>();
  /** Set once the partition is unloaded: marker work for it stops (the next coordinator resumes it). */
  unloaded = false;

  constructor(
    readonly ctx: TxnContext,
    readonly config: TxnCoordinatorConfig,
    private readonly hooks: TxnShardHooks,
    /** The coordinator epoch markers carry: the partition's leader epoch when it was loaded. */
    readonly coordinatorEpoch: number,
  ) {}

  replay(r: TxnRecord, _loading: boolean): Undo {
    const before = this.txns.get(r.transactionalId);
    if (r.metadata === null) this.txns.delete(r.transactionalId);
    else this.txns.set(r.transactionalId, r.metadata);
    return () => {
      if (before === undefined) this.txns.delete(r.transactionalId);
      else this.txns.set(r.transactionalId, before);
    };
  }

  onLoaded(): void {
    this.hooks.onLoaded(this);
    // Transactions caught between prepare and complete: their markers are (re)sent, as Kafka does.
    for (const m of this.txns.values()) {
      if (m.state === TxnState.PrepareCommit || m.state === TxnState.PrepareAbort) this.hooks.onPrepared(this, m);
    }
  }

  onUnloaded(): void {
    this.unloaded = true;
  }

  prepared(m: TxnMetadata): void {
    this.hooks.onPrepared(this, m);
  }
}
