/**
 * One owner for a partition's log (Kafka's UnifiedLog): the local log's segments and leader
 * epochs (local-log.ts), the producer state with its snapshots and recovery, the transaction
 * index and last stable offset, and the high watermark the manager checkpoints. Everything
 * outside storage reaches a partition's log through this class.
 *
 * Appends, truncations and snapshots that change producer state are serialised by the caller
 * (the hosting partition's append lock: its producer checks and the append must be one step);
 * reads take no lock.
 */
import { encodeControlBatch, ControlRecordType } from '../../protocol/records/control.js';
import { abortEntry, recordProducerBatches } from './producer-state/batch-records.js';
import { collectAbortedTxns, recordAbortedTxn } from './aborted-txns.js';
import { recoverProducerState } from './producer-state/producer-state-recovery.js';
import type { CompletedTxn, ProducerStateMap } from './producer-state/producer-state.js';
import { writeSnapshot } from './producer-state/producer-state-snapshot.js';
import type { AppendOptions, AppendResult } from './append-types.js';
import type { LocalLog, ReadResult } from './local-log.js';
import type { LogConfig } from '../config.js';
import type { EpochEntry } from '../checkpoint/checkpoint-files.js';
import type { LeaderEpochCache } from './leader-epoch-cache.js';
import type { LogSegment } from '../segment/log-segment.js';
import type { StorageLogger } from '../logger.js';
import type { AbortedTxn } from '../segment/transaction-index.js';

export interface UnifiedLogOptions {
  /** The high watermark the replication-offset-checkpoint recorded for this log, if any. */
  checkpointedHighWatermark?: number;
  /**
   * The broker's logs: the high watermark is replication's to set (the hosting partition); until
   * it is, the log's high watermark and last stable offset stay at its log start, so the cleaner
   * leaves it alone (Kafka's UnifiedLog starts its high watermark at the log start likewise).
   * False (storage alone): every appended offset counts as committed.
   */
  highWatermarkSetByOwner?: boolean;
}

export class UnifiedLog {
  /** The high watermark as set by the owner or read from the checkpoint; undefined: not known. */
  private hw: number | undefined;
  private readonly highWatermarkSetByOwner: boolean;
  /** Producer state version and log end offset the last snapshot (written or loaded) describes; -1 when none. */
  private snapshotVersion = -1;
  private snapshotOffset = -1;

  private constructor(
    readonly local: LocalLog,
    readonly producers: ProducerStateMap,
    opts: UnifiedLogOptions,
  ) {
    this.hw = opts.checkpointedHighWatermark;
    this.highWatermarkSetByOwner = opts.highWatermarkSetByOwner ?? false;
  }

  /** Puts producer state over an opened local log: the latest snapshot plus the log after it replayed. */
  static async open(local: LocalLog, opts: UnifiedLogOptions = {}): Promise<UnifiedLog> {
    const { producers, replayedFrom } = await recoverProducerState(local);
    const log = new UnifiedLog(local, producers, opts);
    // Markers the replay met below the high watermark are stable already.
    producers.onHighWatermark(log.highWatermark);
    // Up to date when the snapshot reaches the log end, or the log is empty (nothing to replay).
    if (replayedFrom === local.logEndOffset) {
      log.snapshotVersion = producers.version;
      log.snapshotOffset = local.logEndOffset;
    }
    return log;
  }

  get topic(): string {
    return this.local.topic;
  }
  get partition(): number {
    return this.local.partition;
  }
  get name(): string {
    return this.local.name;
  }
  get dir(): string {
    return this.local.dir;
  }
  get logger(): StorageLogger {
    return this.local.logger;
  }
  get config(): LogConfig {
    return this.local.config;
  }
  updateConfig(cfg: Partial<LogConfig>): void {
    this.local.updateConfig(cfg);
  }
  get segments(): readonly LogSegment[] {
    return this.local.segments;
  }
  get activeSegment(): LogSegment {
    return this.local.activeSegment;
  }
  get size(): number {
    return this.local.size;
  }
  get offline(): boolean {
    return this.local.offline;
  }
  get logStartOffset(): number {
    return this.local.logStartOffset;
  }
  get logEndOffset(): number {
    return this.local.logEndOffset;
  }
  get recoveryPoint(): number {
    return this.local.recoveryPoint;
  }

  // ---- High watermark and last stable offset.

  /** The committed offset: as set by the owner (or checkpointed); before that, see highWatermarkSetByOwner. */
  get highWatermark(): number {
    if (this.hw !== undefined) return this.hw;
    return this.highWatermarkSetByOwner ? this.local.logStartOffset : this.local.logEndOffset;
  }

  /** The high watermark to checkpoint: undefined while none was set or checkpointed. */
  get checkpointedHighWatermark(): number | undefined {
    return this.hw;
  }

  /** Sets the high watermark (a follower's may go back); producer state learns which markers are stable. */
  updateHighWatermark(hw: number): void {
    this.hw = hw;
    this.producers.onHighWatermark(hw);
  }

  /** read_committed bound: the high watermark, or the first offset of the earliest transaction not yet stable. */
  get lastStableOffset(): number {
    const unstable = this.producers.firstUnstableOffset();
    const hw = this.highWatermark;
    return unstable === undefined ? hw : Math.min(unstable, hw);
  }

  /** Per active producer, the last offset of its last data batch and its epoch (what the cleaner keeps). */
  lastRecordsOfActiveProducers(): ReadonlyMap<bigint, { lastDataOffset: number; epoch: number }> {
    return this.producers.lastRecordsOfActiveProducers();
  }

  // ---- Appends and truncation: the local log, then producer state and the transaction index.

  /**
   * Appends batches (offsets assigned unless `assignOffsets` is false) and records what they mean
   * for producer state; an abort marker's transaction goes into the .txnindex.
   */
  async append(batches: Buffer, opts: AppendOptions): Promise<AppendResult> {
    const res = await this.local.append(batches, opts);
    if (res.refused) return res;
    // Offsets are now stamped in the buffer: record each idempotent batch's range.
    const indexing = this.recordProducers(batches);
    if (indexing) await indexing;
    return res;
  }

  /**
   * Leader append of validated batches (CRCs checked by the produce path, or a coordinator's own
   * batch): the append step checks each idempotent batch against this log's producer state in its
   * one pass; a refused batch or a retry comes back in `refused`, nothing written. `fromClient`
   * false: a coordinator's batches, epochs checked but not sequences.
   */
  appendAsLeader(batches: Buffer, leaderEpoch: number, fromClient: boolean): Promise<AppendResult> {
    return this.append(batches, { leaderEpoch, validated: true, producers: this.producers, fromClient });
  }

  /**
   * The transaction coordinator's commit or abort marker for `producerId`, fenced by producer and
   * coordinator epoch, appended as a control batch at `leaderEpoch`; its transaction closes (an
   * abort goes into the .txnindex). Fenced: the error, nothing appended.
   */
  async appendTxnMarker(
    m: { producerId: bigint; producerEpoch: number; coordinatorEpoch: number; commit: boolean; timestamp: number },
    leaderEpoch: number,
  ): Promise<{ errorCode: number; message: string } | { appended: AppendResult; bytes: number }> {
    const fenced = this.producers.checkMarker(m.producerId, m.producerEpoch, m.coordinatorEpoch);
    if (fenced) return fenced;
    const batch = encodeControlBatch({
      type: m.commit ? ControlRecordType.Commit : ControlRecordType.Abort,
      producerId: m.producerId,
      producerEpoch: m.producerEpoch,
      coordinatorEpoch: m.coordinatorEpoch,
      timestamp: BigInt(m.timestamp),
    });
    return { appended: await this.append(batch, { leaderEpoch, validated: true }), bytes: batch.length };
  }

  /**
   * Follower append (Kafka's UnifiedLog.appendAsFollower): the batches are stored as the leader
   * wrote them (base offsets, partition leader epochs, timestamps untouched). Every batch's CRC is
   * checked; the first must start at or after the log end offset and each batch after the
   * previous one (a compacted leader leaves gaps, as in Kafka, so offsets need not be dense);
   * otherwise UnexpectedAppendOffsetError and nothing is written. The leader epoch cache learns
   * each batch's epoch at its base offset; producer state follows.
   */
  async appendAsFollower(batches: Buffer): Promise<AppendResult> {
    const res = await this.local.appendAsFollower(batches);
    const indexing = this.recordProducers(batches);
    if (indexing) await indexing;
    return res;
  }

  /**
   * Producer state after an append. A promise only when an aborted transaction goes into the
   * .txnindex: every other append (the produce hot path) is done without one.
   */
  private recordProducers(batches: Buffer): Promise<void> | undefined {
    const closed = recordProducerBatches(this.producers, batches);
    if (closed.some((t) => t.aborted)) return this.indexAbortedThenSettle(closed);
    this.settleIfStorageAlone();
    return undefined;
  }

  private async indexAbortedThenSettle(closed: readonly CompletedTxn[]): Promise<void> {
    for (const t of closed) if (t.aborted) await recordAbortedTxn(this.local.segments, abortEntry(t), false);
    this.settleIfStorageAlone();
  }

  /** Storage alone: whatever is appended is committed, so closed transactions are stable at once. */
  private settleIfStorageAlone(): void {
    if (this.hw === undefined && !this.highWatermarkSetByOwner) this.producers.onHighWatermark(this.local.logEndOffset);
  }

  /** Removes everything at and after `offset` (a follower's truncation); producer state and the high watermark follow. */
  async truncateTo(offset: number): Promise<void> {
    await this.local.truncateTo(offset);
    this.producers.truncateFrom(this.local.logEndOffset);
    if (this.hw !== undefined && this.hw > this.local.logEndOffset) this.updateHighWatermark(this.local.logEndOffset);
  }

  /** Empties the log and restarts it at `offset`; producer state is cleared and the high watermark is `offset`. */
  async truncateFullyAndStartAt(offset: number): Promise<void> {
    await this.local.truncateFullyAndStartAt(offset);
    this.producers.clear();
    this.updateHighWatermark(offset);
  }

  deleteRecordsBefore(offset: number): Promise<number> {
    return this.local.deleteRecordsBefore(offset);
  }

  /** Whether snapshotProducerState(force) would write: the state changed, or (forced) the log end moved since. */
  producerStateChangedSinceSnapshot(force = false): boolean {
    if (this.producers.version !== this.snapshotVersion) return true;
    // Forced (shutdown): still nothing to write when the last snapshot already covers the log end
    // unchanged, as Kafka skips it; 20,000 idle partitions must not cost 40,000 fsyncs on SIGTERM.
    return force && this.snapshotOffset !== this.local.logEndOffset;
  }

  /** Writes a producer state snapshot at the log end when the state changed since the last one. */
  async snapshotProducerState(force = false): Promise<void> {
    if (!this.producerStateChangedSinceSnapshot(force)) return;
    const version = this.producers.version;
    const offset = this.local.logEndOffset;
    await writeSnapshot(this.local.dir, offset, this.producers);
    this.snapshotVersion = version;
    this.snapshotOffset = offset;
  }

  // ---- Reads, offsets by timestamp, leader epochs, aborted transactions.

  read(fetchOffset: number, maxBytes: number, opts: { maxOffset?: number; minOneBatch?: boolean } = {}): Promise<ReadResult> {
    return this.local.read(fetchOffset, maxBytes, opts);
  }

  offsetForTimestamp(ts: number): Promise<{ offset: number; timestamp: number } | null> {
    return this.local.offsetForTimestamp(ts);
  }

  maxTimestampOffset(): Promise<{ offset: number; timestamp: number } | null> {
    return this.local.maxTimestampOffset();
  }

  /** The leader epoch cache of the log (the local log keeps it in step with its segments). */
  get epochs(): LeaderEpochCache {
    return this.local.epochs;
  }

  /** The epochs and their start offsets, oldest first. */
  epochEntries(): readonly EpochEntry[] {
    return this.local.epochs.all();
  }

  /** Kafka's endOffsetForEpoch: the largest epoch <= `epoch` and where it ended here (OffsetForLeaderEpoch). */
  endOffsetForEpoch(epoch: number): { epoch: number; endOffset: number } {
    return this.local.epochs.endOffsetFor(epoch, this.local.logEndOffset);
  }

  /** The leader epoch in force at `offset` (-1 if unknown). */
  epochAt(offset: number): number {
    return this.local.epochs.epochAt(offset);
  }

  /**
   * A leader took `epoch` at `startOffset` (its log end): the epoch is in the history at once,
   * before any append in it (Kafka's maybeAssignEpochStartOffset), and the checkpoint follows.
   */
  assignEpochStartOffset(epoch: number, startOffset: number): Promise<void> {
    const local = this.local;
    if (!local.epochs.assign(epoch, startOffset)) return Promise.resolve();
    return local.lock.run(async () => {
      if (local.isClosed) return;
      await local.epochs.persist().catch((e) => local.logger.warn(`cannot persist leader epochs of ${local.name}: ${String(e)}`));
    });
  }

  /** Aborted transactions a read_committed fetch of [fetchOffset, upperBound) reports. */
  collectAbortedTxns(fetchOffset: number, upperBound: number): AbortedTxn[] {
    return collectAbortedTxns(this.local.segments, fetchOffset, upperBound);
  }

  forceRoll(): Promise<void> {
    return this.local.forceRoll();
  }

  flush(): Promise<void> {
    return this.local.flush();
  }

  close(): Promise<boolean> {
    return this.local.close();
  }
}
