/**
 * Turns the group coordinator's offset writes into offset history entries: for each operation
 * that writes OffsetCommit records (a commit, a reset, OffsetDelete, DeleteGroups, expiry, the
 * removal of deleted partitions' offsets) it compares each record with the committed offset it
 * replaces, and hands the changes to the sink once the `__consumer_offsets` write is durable (the
 * runtime calls onDurable in the order the operations ran, so a group's entries stay in order).
 * A commit that moves nothing is not repeated, but at most once per alive interval a group gets
 * an `alive` entry. A transactional commit is recorded when its COMMIT marker makes it visible.
 *
 * Nothing is read back from the history topic: the previous offset is the offset store's (loaded
 * from `__consumer_offsets` with the partition), so the first change after a load is compared
 * with what the group had committed.
 */
import type { HistoryCause, HistoryValue } from '../../../protocol/offset-history/history-record.js';
import type { OperationResult } from '../../runtime/types.js';
import type { GroupShardState } from '../group-shard-state.js';
import type { CoordinatorRecord } from '../records.js';

/** Who caused an operation's offset changes: a client's commit, an admin request, or the broker. */
export interface HistoryOrigin {
  /** What every entry of the operation says (an unmoved commit's says `alive`). */
  cause: Exclude<HistoryCause, 'alive'>;
  memberId: string;
  clientId: string;
  clientHost: string;
  generation: number;
}

/** What the sink did with the entries: plain numbers, updated without allocation (metrics, tests). */
export interface OffsetHistoryStats {
  recordsWritten: number;
  batchesWritten: number;
  /** Entries dropped: their batch could not be written in time, or the queue was full. */
  recordsDropped: number;
  /** Batches given up after their retries (their entries are in recordsDropped). */
  appendFailures: number;
  /** Entries waiting to be written (queued, lingering, or in the batch being written). */
  recordsQueued: number;
}

/** Where the entries go: the history writer (entries of one call: one batch). */
export interface HistorySink {
  readonly stats?: Readonly<OffsetHistoryStats>;
  submit(group: string, entries: HistoryValue[], timestamp: number): void;
  /** Resolves once everything submitted so far was written or dropped. */
  flush?(): Promise<void>;
  close?(): void;
}

/** Changes the broker makes: OffsetDelete and DeleteGroups (no member; the admin's request), expiry. */
export const BY_BROKER: Readonly<Record<'delete' | 'expire', HistoryOrigin>> = {
  delete: { cause: 'delete', memberId: '', clientId: '', clientHost: '', generation: -1 },
  expire: { cause: 'expire', memberId: '', clientId: '', clientHost: '', generation: -1 },
};

/** One committed offset as an operation leaves it, and what it was before. */
export interface OffsetMove {
  group: string;
  topic: string;
  partition: number;
  previousOffset: bigint;
  newOffset: bigint;
  leaderEpoch: number;
}

export class OffsetHistoryTracker {
  /** When each group last got an entry (any cause), for the alive interval. */
  private readonly lastEntryAt = new Map<string, number>();
  private readonly sink: HistorySink | undefined;
  private readonly aliveIntervalMs: number;

  /** Without options the history is off: every call passes its operation through unchanged. */
  constructor(opts?: { sink: HistorySink; aliveIntervalMs: number }) {
    this.sink = opts?.sink;
    this.aliveIntervalMs = opts?.aliveIntervalMs ?? 0;
  }

  get enabled(): boolean {
    return this.sink !== undefined;
  }

  /** The sink's counters; undefined while the history is off. */
  get stats(): Readonly<OffsetHistoryStats> | undefined {
    return this.sink?.stats;
  }

  /** Hooks the shard's expiry timer (its tombstones are changes too); returns the shard. */
  attach<S extends GroupShardState>(shard: S): S {
    if (this.sink) shard.expiryHistory = (r, now) => this.track(shard, r, BY_BROKER.expire, now);
    return shard;
  }

  /**
   * `result` with an onDurable that submits the offset changes its records make. Call it before
   * the runtime replays the records (inside the operation), so the store still holds the offsets
   * they replace.
   */
  track<T>(shard: GroupShardState, result: OperationResult<T, CoordinatorRecord>, origin: HistoryOrigin, now: number): OperationResult<T, CoordinatorRecord> {
    const sink = this.sink;
    if (!sink) return result;
    const moves: OffsetMove[] = [];
    /** Offsets as this operation leaves them (a partition named twice compares with the first). */
    const within = new Map<string, bigint>();
    for (const r of result.records) {
      if (r.type === 'group' && r.value === null) this.lastEntryAt.delete(r.group);
      if (r.type !== 'offset' || r.producerId !== undefined) continue;
      const id = `${r.group}\u0000${r.topic}\u0000${r.partition}`;
      const previousOffset = within.get(id) ?? shard.offsets.get(r.group, r.topic, r.partition)?.offset ?? -1n;
      const newOffset = r.value === null ? -1n : r.value.offset;
      within.set(id, newOffset);
      moves.push({ group: r.group, topic: r.topic, partition: r.partition, previousOffset, newOffset, leaderEpoch: r.value?.leaderEpoch ?? -1 });
    }
    const byGroup = this.entries(moves, origin, now);
    if (byGroup.size === 0) return result;
    const onDurable = result.onDurable;
    return {
      ...result,
      onDurable: () => {
        onDurable?.();
        for (const [group, entries] of byGroup) sink.submit(group, entries, now);
      },
    };
  }

  /**
   * Offsets committed outside `__consumer_offsets` (OffsetCommit v0 into ZooKeeper, cluster
   * mode), once written: recorded at once, with the same rules.
   */
  recordCommitted(moves: OffsetMove[], origin: HistoryOrigin, now: number): void {
    if (!this.sink) return;
    for (const [group, entries] of this.entries(moves, origin, now)) this.sink.submit(group, entries, now);
  }

  /**
   * The transaction of `producerId` ended with its marker durable on the partition: `end` applies
   * it (replayEndTransaction); on a commit, the pending offsets it makes visible are recorded.
   */
  endTransaction(shard: GroupShardState, producerId: bigint, commit: boolean, now: number, end: () => void): void {
    const pending = shard.pendingTxnOffsets.get(producerId);
    const moves: OffsetMove[] = [];
    if (this.sink && commit && pending) {
      for (const group of pending.groupIds()) {
        for (const { topic, partition, value } of pending.list(group)) {
          const previousOffset = shard.offsets.get(group, topic, partition)?.offset ?? -1n;
          moves.push({ group, topic, partition, previousOffset, newOffset: value.offset, leaderEpoch: value.leaderEpoch });
        }
      }
    }
    end();
    this.recordCommitted(moves, TXN_ORIGIN, now);
  }

  /** Waits until what was submitted is written (tests, benches). */
  flush(): Promise<void> {
    return this.sink?.flush?.() ?? Promise.resolve();
  }

  close(): void {
    this.sink?.close?.();
  }

  /**
   * The entries per group: one per offset that moved; a group whose commit moved nothing gets
   * one `alive` entry when it had none for the alive interval.
   */
  private entries(moves: readonly OffsetMove[], origin: HistoryOrigin, now: number): Map<string, HistoryValue[]> {
    const byGroup = new Map<string, HistoryValue[]>();
    let unmoved: Map<string, HistoryValue> | undefined;
    for (const m of moves) {
      const entry: HistoryValue = {
        topic: m.topic,
        partition: m.partition,
        previousOffset: m.previousOffset,
        newOffset: m.newOffset,
        leaderEpoch: m.leaderEpoch,
        cause: origin.cause,
        memberId: origin.memberId,
        clientId: origin.clientId,
        clientHost: origin.clientHost,
        generation: origin.generation,
      };
      if (m.previousOffset === m.newOffset) {
        if (m.newOffset >= 0n && !(unmoved ??= new Map()).has(m.group)) unmoved.set(m.group, { ...entry, cause: 'alive' });
        continue;
      }
      const list = byGroup.get(m.group);
      if (list) list.push(entry);
      else byGroup.set(m.group, [entry]);
    }
    if (unmoved) {
      for (const [group, alive] of unmoved) {
        const last = this.lastEntryAt.get(group);
        if (!byGroup.has(group) && (last === undefined || now - last >= this.aliveIntervalMs)) byGroup.set(group, [alive]);
      }
    }
    for (const group of byGroup.keys()) this.lastEntryAt.set(group, now);
    return byGroup;
  }
}

/** The marker's completion names no member: the transactional commit's member is not kept with it. */
const TXN_ORIGIN: HistoryOrigin = { cause: 'txn-commit', memberId: '', clientId: '', clientHost: '', generation: -1 };

/**
 * The cause of an OffsetCommit (v1+) to `__consumer_offsets`: reset when made as Kafka's reset
 * tool (Admin.alterConsumerGroupOffsets) makes it, with no member and generation -1. A standalone
 * consumer (assign(), no group membership) commits the same way, and is recorded as a reset too.
 */
export function commitCause(memberId: string, generation: number): 'commit' | 'reset' {
  return memberId === '' && generation < 0 ? 'reset' : 'commit';
}
