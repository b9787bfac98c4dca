/**
 * The groups and offsets of one `__consumer_offsets` partition, and `replay`: how each record
 * changes them. Offset records go through replay on the live path too (so a failed append is
 * undone record by record); classic group membership changes are made by the operations
 * themselves, as in Kafka, and GroupMetadata records rebuild a group only while loading.
 * The operations (join-sync, rebalance, offsets, expiry...) work on this state; GroupShard
 * (group-shard.ts) adds what happens when the partition is loaded and unloaded.
 */
import type { OperationResult, ShardContext, Undo } from '../runtime/types.js';
import { ClassicGroup } from './classic-group.js';
import type { GroupCoordinatorConfig } from './config.js';
import { OffsetStore } from './offset-store.js';
import type { CoordinatorRecord } from './records.js';
import type { ConsumerGroup } from './consumer/consumer-group.js';
import { replayConsumerGroupRecord } from './consumer/consumer-replay.js';
import { type ConsumerGroupEnv, DEFAULT_CONSUMER_ENV } from './consumer/settings.js';

export type GroupContext = ShardContext<CoordinatorRecord>;

/** What the group state machine logs through (a pino logger fits). */
export interface GroupLogger {
  info(obj: object, msg: string): void;
}

const SILENT: GroupLogger = { info: () => undefined };

export class GroupShardState {
  readonly groups = new Map<string, ClassicGroup>();
  /** Consumer groups (KIP-848, consumer/): their records are replayed live and on load alike. */
  readonly consumerGroups = new Map<string, ConsumerGroup>();
  readonly offsets = new OffsetStore();
  /** Transactional offset commits waiting for their transaction's marker, per producer id. */
  readonly pendingTxnOffsets = new Map<bigint, OffsetStore>();
  /** Set when the offset history is on: records what the expiry timer's tombstones remove (history/). */
  expiryHistory: ((result: OperationResult<void, CoordinatorRecord>, now: number) => OperationResult<void, CoordinatorRecord>) | undefined;

  constructor(
    readonly ctx: GroupContext,
    readonly config: GroupCoordinatorConfig,
    readonly logger: GroupLogger = SILENT,
    readonly consumerEnv: ConsumerGroupEnv = DEFAULT_CONSUMER_ENV,
  ) {}

  replay(r: CoordinatorRecord, loading: boolean): Undo | undefined {
    if (r.type === 'offset') return this.replayOffset(r, loading);
    if (r.type !== 'group') return replayConsumerGroupRecord(this.consumerGroups, r);
    if (r.value === null) {
      const before = this.groups.get(r.group);
      this.groups.delete(r.group);
      return before ? () => void this.groups.set(r.group, before) : undefined;
    }
    if (loading) this.groups.set(r.group, ClassicGroup.fromRecordValue(r.group, r.value, this.ctx.now()));
    return undefined;
  }

  private replayOffset(r: Extract<CoordinatorRecord, { type: 'offset' }>, loading: boolean): Undo {
    const createdGroup = r.value !== null && !this.groups.has(r.group) && !this.consumerGroups.has(r.group);
    // A group with only committed offsets (a standalone consumer) is an Empty classic group.
    if (createdGroup) this.groups.set(r.group, new ClassicGroup(r.group, loading ? Number(r.value!.commitTimestamp) : this.ctx.now()));
    const value =
      r.value === null
        ? undefined
        : {
            offset: r.value.offset,
            leaderEpoch: r.value.leaderEpoch,
            metadata: r.value.metadata,
            commitTimestamp: Number(r.value.commitTimestamp),
            expireTimestamp: Number(r.value.expireTimestamp),
          };
    let store = this.offsets;
    let createdPending = false;
    if (r.producerId !== undefined) {
      const pending = this.pendingTxnOffsets.get(r.producerId);
      createdPending = pending === undefined;
      store = pending ?? new OffsetStore();
      if (createdPending) this.pendingTxnOffsets.set(r.producerId, store);
    }
    const before = store.set(r.group, r.topic, r.partition, value);
    return () => {
      store.set(r.group, r.topic, r.partition, before);
      if (createdPending) this.pendingTxnOffsets.delete(r.producerId!);
      if (createdGroup) this.groups.delete(r.group);
    };
  }

  /**
   * The transaction of `producerId` ended: its pending offsets become the committed ones
   * (commit) or are dropped (abort), as Kafka's GroupMetadata.completePendingTxnOffsetCommit.
   */
  replayEndTransaction(producerId: bigint, commit: boolean, _loading: boolean): Undo | undefined {
    const pending = this.pendingTxnOffsets.get(producerId);
    if (!pending) return undefined;
    this.pendingTxnOffsets.delete(producerId);
    const undone: { group: string; topic: string; partition: number; before: ReturnType<OffsetStore['get']> }[] = [];
    if (commit) {
      for (const group of [...pending.groupIds()]) {
        for (const { topic, partition, value } of pending.list(group)) {
          undone.push({ group, topic, partition, before: this.offsets.set(group, topic, partition, value) });
        }
      }
    }
    return () => {
      for (let i = undone.length - 1; i >= 0; i--) {
        const u = undone[i]!;
        this.offsets.set(u.group, u.topic, u.partition, u.before);
      }
      this.pendingTxnOffsets.set(producerId, pending);
    };
  }

  /** Whether any transactional commit of the group is pending. */
  hasPendingTxnOffsets(group: string): boolean {
    for (const s of this.pendingTxnOffsets.values()) if (s.hasOffsets(group)) return true;
    return false;
  }

  /** Whether a transactional commit of the group's partition is pending (OffsetFetch require_stable). */
  hasPendingTxnOffset(group: string, topic: string, partition: number): boolean {
    for (const s of this.pendingTxnOffsets.values()) if (s.get(group, topic, partition)) return true;
    return false;
  }

  groupRecord(g: ClassicGroup): CoordinatorRecord {
    return { type: 'group', group: g.groupId, value: g.toRecordValue() };
  }
}
