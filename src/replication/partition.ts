/**
 * A partition this broker hosts (leader, or in cluster mode follower): its log, leader epoch,
 * high watermark and idempotent-producer state. Appends are serialised here (producer checks, log append and state update must be one
 * step); reads go straight to the log and never wait behind an append.
 *
 * Leader state as Kafka's Partition: the high watermark = the lowest log end offset in the ISR;
 * the ISR, replicas and each follower's fetch state, and the ISR's shrink/expand through an
 * injected IsrWriter live in isr/partition-isr.ts (PartitionIsr), which this class drives.
 * A partition whose ISR is only the leader (embedded mode always, ISR = [self]) takes the fast
 * path: the high watermark is the log end offset as soon as an append completes.
 */
import { ATTRIBUTES, ATTR_CONTROL, ATTR_DELETE_HORIZON, BATCH_LENGTH, LOG_OVERHEAD, MAGIC } from '../protocol/records/batch-header.js';
import { readAt, scanBatchHeaders } from '../storage/batch-scan.js';
import type { LogSegment } from '../storage/log-segment.js';
import type { AbortedTxn } from '../storage/transaction-index.js';
import { ErrorCode } from '../protocol/errors.js';
import type { AppendResult, Log, ReadResult } from '../storage/log.js';
import { existingOffsetRange } from '../storage/append-validation.js';
import { UnexpectedAppendOffsetError } from '../storage/errors.js';
import { Mutex } from '../storage/mutex.js';
import { lastSequenceOf, ProducerStateMap, type CompletedTxn } from './producer-state.js';
import { markerAt, recordProducerBatch, recordProducerBatches } from './producer-batches.js';
import { encodeControlBatch, ControlRecordType } from '../protocol/records/control.js';
import { isTransactional } from '../protocol/records/batch-header.js';
import { loadLatestSnapshot, writeSnapshot } from './producer-state-snapshot.js';
import { DelayedDeleteRecords, type DeleteRecordsResult } from './delayed-delete-records.js';
import { PartitionIsr, type FollowerState, type IsrWriter } from './isr/partition-isr.js';

export type { FollowerState, IsrChange, IsrWriter } from './isr/partition-isr.js';

export interface LeaderAppendResult {
  errorCode: number;
  errorMessage?: string;
  baseOffset: number;
  /** The last offset appended (of the original batch for a duplicate); -1 on failure. */
  lastOffset: number;
  logAppendTime: number;
  logStartOffset: number;
}

/** Something waiting for data on this partition (a long-polling fetch). */
export interface AppendWaiter {
  onAppend(partition: Partition, bytes: number, firstOffset: number): void;
}

/** Something waiting for the high watermark, the ISR or leadership to change (an acks=all produce). */
export interface StateWaiter {
  onStateChange(partition: Partition): void;
}

/** The answer to "has an acks=all append reached every in-sync replica?" (Kafka's checkEnoughReplicasReachOffset). */
export type ReplicationCheck = { done: false } | { done: true; errorCode: number };

const SCAN_CHUNK = 1 << 20;
/** Appends above the HW remembered one by one (for parked consumer fetches' byte counts). */
const MAX_UNREPLICATED_ENTRIES = 1024;

export class Partition {
  leaderEpoch: number;
  topicId: string;
  /**
   * Whether this broker leads the partition: the one check the produce and fetch paths make.
   * Always true in embedded mode; in cluster mode set by LeaderAndIsr (makeLeader/makeFollower).
   */
  isLeader = true;
  /** The leader as the controller last said (-1: none); this broker's id while isLeader. */
  leaderId = -1;
  /** The leader's log end offset when it took this epoch; a follower rejoins the ISR only past it. */
  leaderEpochStartOffset = -1;
  /** The ISR, replicas and followers' fetch state (leader side), and ISR changes. */
  private readonly isrState: PartitionIsr = new PartitionIsr(this, () => {
    this.maybeIncrementHighWatermark();
    this.notifyState();
  });
  /** Appends above the high watermark (end offset, bytes), to tell parked consumer fetches what became visible. */
  private unreplicated: { end: number; bytes: number }[] = [];
  /** Replica fetches parked for data: woken by every append (they read up to the log end). */
  readonly replicaWaiters = new Set<AppendWaiter>();
  /** acks=all produces waiting for the high watermark. */
  readonly stateWaiters = new Set<StateWaiter>();
  private hw: number;
  readonly producers: ProducerStateMap;
  private readonly appendLock = new Mutex();
  /** The last produce to take its turn (see takeArrivalTurn). */
  private arrivals: Promise<void> = Promise.resolve();
  readonly waiters = new Set<AppendWaiter>();
  private snapshotVersion = -1;
  /** Log end offset the last snapshot (written or loaded) describes; -1 when none. */
  private snapshotOffset = -1;

  private constructor(
    readonly log: Log,
    topicId: string,
    leaderEpoch: number,
    producers: ProducerStateMap,
    private readonly onHighWatermark: (p: Partition) => void,
    initialHighWatermark: number | undefined,
  ) {
    this.topicId = topicId;
    this.leaderEpoch = leaderEpoch;
    this.producers = producers;
    this.hw = initialHighWatermark === undefined ? log.logEndOffset : Math.max(0, Math.min(initialHighWatermark, log.logEndOffset));
  }

  /**
   * Wraps an opened log, rebuilding producer state from the latest snapshot plus the log after it.
   * The high watermark starts at the log end (a single broker's log is all committed) unless
   * `initialHighWatermark` (cluster mode: the checkpointed one) says less is known to be replicated.
   */
  static async open(
    log: Log,
    topicId: string,
    leaderEpoch: number,
    onHighWatermark: (p: Partition) => void,
    initialHighWatermark?: number,
  ): Promise<Partition> {
    const snap = await loadLatestSnapshot(log.dir, log.logEndOffset, (m) => log.logger.warn(m));
    const state = snap?.state ?? new ProducerStateMap();
    const from = Math.max(snap?.offset ?? 0, log.logStartOffset);
    const p = new Partition(log, topicId, leaderEpoch, state, onHighWatermark, initialHighWatermark);
    await rebuildLostTxnIndexes(log, from, state);
    await p.replayProducerState(from);
    log.producerView = {
      lastStableOffset: () => p.lastStableOffset,
      lastRecordsOfActiveProducers: () => p.producers.lastRecordsOfActiveProducers(),
    };
    // Markers the replay met below the high watermark are stable already.
    p.producers.onHighWatermark(p.hw);
    // Up to date when the snapshot reaches the log end, or the log is empty (nothing to replay).
    const upToDate = from === log.logEndOffset;
    p.snapshotVersion = upToDate ? state.version : -1;
    p.snapshotOffset = upToDate ? log.logEndOffset : -1;
    return p;
  }

  get topic(): string {
    return this.log.topic;
  }

  /** In-sync replicas as last committed (LeaderAndIsr, or this leader's own accepted change). */
  get isr(): readonly number[] {
    return this.isrState.isr;
  }
  /** The assigned replicas (LeaderAndIsr); [self] in embedded mode. */
  get replicas(): readonly number[] {
    return this.isrState.replicas;
  }
  /** zkVersion of the partition state znode this broker last knew (-1 in embedded mode). */
  get partitionEpoch(): number {
    return this.isrState.partitionEpoch;
  }
  /** The controller epoch of the last LeaderAndIsr; written back with ISR changes. */
  get controllerEpoch(): number {
    return this.isrState.controllerEpoch;
  }
  /** Where ISR changes are written; none in embedded mode (the ISR stays [self]). */
  get isrWriter(): IsrWriter | undefined {
    return this.isrState.writer;
  }
  set isrWriter(writer: IsrWriter | undefined) {
    this.isrState.writer = writer;
  }

  /**
   * LeaderAndIsr made this broker the leader at `leaderEpoch` (Kafka's Partition.makeLeader):
   * the ISR and replicas as the controller wrote them; followers in the ISR count as caught up
   * now, the others as never; a broker that was not leading forgets the followers' log end
   * offsets, which it learns again from their next fetch. Embedded mode: isr = replicas = [self].
   * A new epoch starts at the log end and goes into the leader-epoch cache at once (Kafka's
   * maybeAssignEpochStartOffset), so OffsetForLeaderEpoch knows it before any append; the
   * returned promise settles once the checkpoint has it.
   */
  makeLeader(selfId: number, leaderEpoch: number, isr: readonly number[] = [selfId], replicas: readonly number[] = [selfId], partitionEpoch = -1, controllerEpoch = -1): Promise<void> {
    const now = Date.now();
    const newLeader = !this.isLeader;
    const newEpoch = newLeader || leaderEpoch !== this.leaderEpoch || this.leaderEpochStartOffset < 0;
    this.takeRole(true, selfId, leaderEpoch, isr, replicas, partitionEpoch, controllerEpoch);
    const leo = this.log.logEndOffset;
    if (newEpoch) this.leaderEpochStartOffset = leo;
    const checkpointed = newEpoch ? this.log.assignEpochStartOffset(leaderEpoch, leo) : Promise.resolve();
    this.isrState.resetFollowers(selfId, newLeader, now);
    this.maybeIncrementHighWatermark();
    this.notifyState();
    return checkpointed;
  }

  /**
   * LeaderAndIsr made `leaderId` the leader. The follower side (fetcher, truncation) hangs off
   * ReplicaManager; here the leader state is dropped and waiting acks=all produces are answered.
   */
  makeFollower(leaderId: number, leaderEpoch: number, isr: readonly number[] = this.isr, replicas: readonly number[] = this.replicas, partitionEpoch = this.partitionEpoch, controllerEpoch = this.controllerEpoch): void {
    this.takeRole(false, leaderId, leaderEpoch, isr, replicas, partitionEpoch, controllerEpoch);
    this.leaderEpochStartOffset = -1;
    this.isrState.clearFollowers();
    this.unreplicated = [];
    this.notifyState();
  }

  /** What LeaderAndIsr says of the partition, as both roles record it; an ISR write in flight is moot. */
  private takeRole(leader: boolean, leaderId: number, leaderEpoch: number, isr: readonly number[], replicas: readonly number[], partitionEpoch: number, controllerEpoch: number): void {
    this.isLeader = leader;
    this.leaderId = leaderId;
    this.leaderEpoch = leaderEpoch;
    this.isrState.take(isr, replicas, partitionEpoch, controllerEpoch);
  }

  /** A follower's fetch state as the leader last recorded it (tests, DescribeLogDirs-style views). */
  followerState(replicaId: number): Readonly<FollowerState> | undefined {
    return this.isrState.followerState(replicaId);
  }

  /**
   * A replica fetch from `replicaId` at `fetchOffset` (Kafka's Replica.updateFetchState, then
   * maybeExpandIsr and maybeIncrementLeaderHW). Returns false when `replicaId` is not one of
   * this partition's replicas (the caller answers an error, nothing recorded). `logStartOffset`
   * is the follower's own (Fetch v5+; -1 unknown): a move wakes waiting DeleteRecords.
   */
  updateFollowerFetchState(replicaId: number, fetchOffset: number, nowMs: number, logStartOffset = -1): boolean {
    const recorded = this.isrState.updateFollowerFetchState(replicaId, fetchOffset, nowMs, logStartOffset);
    if (!recorded) return false;
    this.maybeIncrementHighWatermark();
    if (recorded.logStartMoved) this.notifyState();
    return true;
  }

  /**
   * Kafka's lowWatermarkIfLeader: the lowest log start offset among this leader and its
   * followers on live brokers (-1 while a live follower has not reported one).
   */
  lowWatermark(isAlive: (brokerId: number) => boolean = () => true): number {
    return this.isrState.lowWatermark(isAlive);
  }

  /**
   * DeleteRecords moved this leader's log start to (at least) `requiredOffset`: resolves once the
   * low watermark has followed (every live replica moved its log start), REQUEST_TIMED_OUT after
   * `timeoutMs`, NOT_LEADER_OR_FOLLOWER if leadership goes meanwhile (Kafka's DelayedDeleteRecords).
   */
  awaitLowWatermark(requiredOffset: number, timeoutMs: number, isAlive: (brokerId: number) => boolean): Promise<DeleteRecordsResult> {
    return new DelayedDeleteRecords(this, requiredOffset, timeoutMs, isAlive).completed;
  }

  /** HW = the lowest log end offset in the (maximal) ISR; it only moves forward. */
  private maybeIncrementHighWatermark(): void {
    if (!this.isLeader) return;
    const hw = this.isrState.replicatedOffset();
    if (hw <= this.hw) return;
    let bytes = 0;
    let i = 0;
    while (i < this.unreplicated.length && this.unreplicated[i]!.end <= hw) bytes += this.unreplicated[i++]!.bytes;
    this.unreplicated.splice(0, i);
    this.advanceHighWatermark(hw, Math.max(bytes, 1), this.hw);
  }

  /**
   * Kafka's maybeShrinkIsr: followers in the ISR that have not been caught up for more than
   * `maxLagMs` (and are not at the log end) leave it. Returns the replicas dropped.
   */
  maybeShrinkIsr(nowMs: number, maxLagMs: number): number[] {
    return this.isrState.maybeShrink(nowMs, maxLagMs);
  }

  /** Whether an ISR change is being written. */
  get isrUpdateInFlight(): boolean {
    return this.isrState.updateInFlight;
  }

  /**
   * Kafka's checkEnoughReplicasReachOffset: has the high watermark passed `requiredOffset` (the
   * append's last offset + 1)? Then the append is done, NOT_ENOUGH_REPLICAS_AFTER_APPEND when
   * the ISR meanwhile shrank below `minIsr`. Not the leader any more: NOT_LEADER_OR_FOLLOWER.
   */
  checkEnoughReplicasReachOffset(requiredOffset: number, minIsr: number): ReplicationCheck {
    if (!this.isLeader) return { done: true, errorCode: ErrorCode.NOT_LEADER_OR_FOLLOWER };
    if (this.hw < requiredOffset) return { done: false };
    return { done: true, errorCode: this.isr.length >= minIsr ? ErrorCode.NONE : ErrorCode.NOT_ENOUGH_REPLICAS_AFTER_APPEND };
  }

  private notifyState(): void {
    if (this.stateWaiters.size === 0) return;
    for (const w of [...this.stateWaiters]) w.onStateChange(this);
  }
  get partition(): number {
    return this.log.partition;
  }
  get highWatermark(): number {
    return this.hw;
  }
  /** read_committed bound: the high watermark, or the first offset of the earliest transaction not yet stable. */
  get lastStableOffset(): number {
    const unstable = this.producers.firstUnstableOffset();
    return unstable === undefined ? this.hw : Math.min(unstable, this.hw);
  }

  /**
   * The transaction coordinator's commit or abort marker for `producerId` (WriteTxnMarkers), as
   * the leader: fenced by producer and coordinator epoch, appended as a control batch, the
   * producer's transaction closed (an abort goes into the segment's .txnindex). Answered once
   * appended; the caller waits for the ISR as for an acks=all produce.
   */
  appendTxnMarker(m: { producerId: bigint; producerEpoch: number; coordinatorEpoch: number; commit: boolean; timestamp: number }): Promise<LeaderAppendResult> {
    return this.appendLock.run(async () => {
      const fenced = this.producers.checkMarker(m.producerId, m.producerEpoch, m.coordinatorEpoch);
      if (fenced) return this.failure(fenced.errorCode, fenced.message);
      const batch = encodeControlBatch({
        type: m.commit ? ControlRecordType.Commit : ControlRecordType.Abort,
        producerId: m.producerId,
        producerEpoch: m.producerEpoch,
        coordinatorEpoch: m.coordinatorEpoch,
        timestamp: BigInt(m.timestamp),
      });
      const res = await this.log.append(batch, { leaderEpoch: this.leaderEpoch });
      await this.indexAborts(recordProducerBatches(this.producers, batch));
      this.onLeaderAppend(batch.length, res.firstOffset, res.lastOffset);
      return { errorCode: ErrorCode.NONE, baseOffset: res.firstOffset, lastOffset: res.lastOffset, logAppendTime: res.logAppendTime, logStartOffset: res.logStartOffset };
    });
  }

  private async indexAborts(closed: readonly CompletedTxn[]): Promise<void> {
    for (const t of closed) if (t.aborted) await this.log.recordAbortedTxn(abortEntry(t));
  }
  get logStartOffset(): number {
    return this.log.logStartOffset;
  }
  get logEndOffset(): number {
    return this.log.logEndOffset;
  }

  /** Rebuilds producer state by scanning batch headers in [from, logEnd). */
  private async replayProducerState(from: number): Promise<void> {
    await replayBatches(this.log, this.producers, from, this.log.logEndOffset, async (closed) => {
      // An abort whose index entry a crash lost (the marker was in the log, the entry not yet on disk).
      if (closed.aborted) await this.log.recordAbortedTxn(abortEntry(closed), true);
    });
  }


  /**
   * Leader append of validated v2 batches: idempotence checks, log append, producer state,
   * high watermark. A duplicate of one of a producer's last five batches is answered with its
   * original base offset and no error, as Kafka does. The batches' CRCs must have been checked
   * already (prepareProducedRecords does), so the log skips its own CRC pass.
   */
  /**
   * Produce requests to one partition are validated concurrently (inflating compressed batches
   * runs off the event loop and takes as long as it takes) but must reach the log in the order
   * they arrived, as a client's pipelined requests are ordered. A request takes its turn on
   * arrival, waits for `ready` before it calls appendAsLeader (which queues in call order), and
   * calls `done` once it has called it or given up; `done` never lets a later request overtake
   * an earlier one still validating.
   */
  takeArrivalTurn(): { ready: Promise<void>; done: () => void } {
    const previous = this.arrivals;
    let pass!: () => void;
    this.arrivals = new Promise<void>((resolve) => (pass = resolve));
    let passed = false;
    return {
      ready: previous,
      done: () => {
        if (passed) return;
        passed = true;
        void previous.then(pass);
      },
    };
  }

  /** `fromClient` false (a coordinator's own batches): producer sequences are not checked, only epochs. */
  appendAsLeader(batches: Buffer, fromClient = true): Promise<LeaderAppendResult> {
    return this.appendLock.run(async () => {
      let pos = 0;
      while (pos < batches.length) {
        const pid = batches.readBigInt64BE(pos + 43);
        if (pid >= 0n) {
          const firstSeq = batches.readInt32BE(pos + 53);
          const check = this.producers.check(
            pid,
            batches.readInt16BE(pos + 51),
            firstSeq,
            lastSequenceOf(firstSeq, batches.readInt32BE(pos + 23)),
            isTransactional(batches, pos),
            fromClient,
          );
          if (check.kind === 'error') return this.failure(check.errorCode, check.message);
          if (check.kind === 'duplicate') {
            return { errorCode: ErrorCode.NONE, baseOffset: check.firstOffset, lastOffset: check.lastOffset, logAppendTime: -1, logStartOffset: this.log.logStartOffset };
          }
        }
        pos += batches.readInt32BE(pos + BATCH_LENGTH) + LOG_OVERHEAD;
      }
      const res = await this.log.append(batches, { leaderEpoch: this.leaderEpoch, crcVerified: true });
      // Offsets are now stamped in the buffer: record each idempotent batch's range.
      await this.indexAborts(recordProducerBatches(this.producers, batches));
      this.onLeaderAppend(batches.length, res.firstOffset, res.lastOffset);
      return { errorCode: ErrorCode.NONE, baseOffset: res.firstOffset, lastOffset: res.lastOffset, logAppendTime: res.logAppendTime, logStartOffset: res.logStartOffset };
    });
  }

  private failure(errorCode: number, errorMessage: string): LeaderAppendResult {
    return { errorCode, errorMessage, baseOffset: -1, lastOffset: -1, logAppendTime: -1, logStartOffset: this.log.logStartOffset };
  }

  /**
   * After a leader append: replica fetches parked for data wake; with the leader alone in the
   * ISR (embedded mode) the HW is the new log end at once, else it waits for the followers.
   */
  private onLeaderAppend(bytes: number, firstOffset: number, lastOffset: number): void {
    if (this.replicaWaiters.size > 0) for (const w of [...this.replicaWaiters]) w.onAppend(this, bytes, firstOffset);
    if (this.isrState.leaderAlone) {
      this.advanceHighWatermark(this.log.logEndOffset, bytes, firstOffset);
      return;
    }
    // Bounded while followers lag (or ISR writes fail): beyond that, appends merge into the last entry.
    const last = this.unreplicated.length >= MAX_UNREPLICATED_ENTRIES ? this.unreplicated[this.unreplicated.length - 1] : undefined;
    if (last) {
      last.end = lastOffset + 1;
      last.bytes += bytes;
    } else {
      this.unreplicated.push({ end: lastOffset + 1, bytes });
    }
    this.maybeIncrementHighWatermark();
  }

  private advanceHighWatermark(hw: number, bytes: number, firstOffset: number): void {
    if (hw <= this.hw) return;
    this.hw = hw;
    this.producers.onHighWatermark(hw);
    this.onHighWatermark(this);
    for (const w of [...this.waiters]) w.onAppend(this, bytes, firstOffset);
    this.notifyState();
  }

  /** Reads for a consumer: never beyond the high watermark (or LSO for read_committed). */
  read(fetchOffset: number, maxBytes: number, minOneBatch: boolean, upTo: number = this.hw): Promise<ReadResult> {
    return this.log.read(fetchOffset, maxBytes, { maxOffset: upTo, minOneBatch });
  }

  /** The log was cut (DeleteRecords moves the start, truncation moves the end): resync HW and producers. */
  onLogTruncated(): void {
    if (this.hw > this.log.logEndOffset) this.hw = this.log.logEndOffset;
    this.unreplicated = this.unreplicated.filter((u) => u.end <= this.log.logEndOffset);
    this.producers.truncateFrom(this.log.logEndOffset);
  }

  /** Writes a producer state snapshot at the log end when the state changed since the last one. */
  async snapshotProducerState(force = false): Promise<void> {
    if (!force && this.producers.version === this.snapshotVersion) return;
    // Forced (shutdown): still nothing to write when the last snapshot already covers the log end
    // unchanged, as Kafka skips it; 20,000 idle partitions must not cost 40,000 fsyncs on SIGTERM.
    if (this.producers.version === this.snapshotVersion && this.snapshotOffset === this.log.logEndOffset) return;
    await this.appendLock.run(async () => {
      const version = this.producers.version;
      const offset = this.log.logEndOffset;
      await writeSnapshot(this.log.dir, offset, this.producers);
      this.snapshotVersion = version;
      this.snapshotOffset = offset;
    });
  }

  // ---- Follower side (issue 12): the replica fetcher's operations on a partition led elsewhere.

  /**
   * Appends batches fetched from the leader, as the leader wrote them (Kafka's
   * Partition.appendRecordsToFollowerOrFutureReplica): the log checks CRCs and offsets and learns
   * the batches' leader epochs; idempotent producers' state follows, so a promotion to leader
   * keeps sequence checks. Serialised with every other append and truncation of the partition.
   * One special case as Kafka: an empty log whose start offset falls inside the leader's first
   * batch (DeleteRecords cut a batch) restarts at that batch's base offset.
   */
  appendAsFollower(batches: Buffer): Promise<AppendResult> {
    return this.appendLock.run(async () => {
      let res: AppendResult;
      try {
        res = await this.log.appendAsFollower(batches);
      } catch (err) {
        const range = err instanceof UnexpectedAppendOffsetError && batches.length > 0 ? existingOffsetRange(batches) : undefined;
        const end = this.log.logEndOffset;
        if (!range || end !== this.log.logStartOffset || range.first >= end || range.last < end) throw err;
        this.log.logger.info(`${this.log.name}: the leader's first batch starts at ${range.first}, before the empty log's start ${end}; restarting the log there`);
        await this.log.truncateFullyAndStartAt(range.first);
        this.producers.clear();
        this.setHw(range.first);
        res = await this.log.appendAsFollower(batches);
      }
      await this.indexAborts(recordProducerBatches(this.producers, batches));
      return res;
    });
  }

  /** Removes the log at and after `offset` (a follower's truncation); HW and producer state follow. */
  truncateTo(offset: number): Promise<void> {
    return this.appendLock.run(async () => {
      await this.log.truncateTo(offset);
      this.producers.truncateFrom(this.log.logEndOffset);
      if (this.hw > this.log.logEndOffset) this.setHw(this.log.logEndOffset);
    });
  }

  /** Empties the log and restarts it at `offset` (the leader's log start is beyond ours). */
  truncateFullyAndStartAt(offset: number): Promise<void> {
    return this.appendLock.run(async () => {
      await this.log.truncateFullyAndStartAt(offset);
      this.producers.clear();
      this.setHw(offset);
    });
  }

  /**
   * A follower's high watermark: the leader's, bounded by what this replica holds (Kafka's
   * UnifiedLog.maybeUpdateHighWatermark: within [log start, log end], and it may go back).
   * Checkpointed as the leader's is. Returns the high watermark now.
   */
  setFollowerHighWatermark(leaderHw: number): number {
    const hw = Math.max(this.log.logStartOffset, Math.min(leaderHw, this.log.logEndOffset));
    if (hw !== this.hw) this.setHw(hw);
    return this.hw;
  }

  /** The leader's log start moved (retention, DeleteRecords): follow it up to our high watermark. */
  async followLeaderLogStartOffset(leaderLogStartOffset: number): Promise<void> {
    if (leaderLogStartOffset <= this.log.logStartOffset || leaderLogStartOffset > this.hw) return;
    await this.log.deleteRecordsBefore(leaderLogStartOffset);
  }

  /** Resolves once every append and truncation queued so far is done (a leader's last produce before following). */
  appendsDone(): Promise<void> {
    return this.appendLock.run(async () => undefined);
  }

  private setHw(hw: number): void {
    this.hw = hw;
    this.producers.onHighWatermark(hw);
    this.onHighWatermark(this);
  }
}

/** Feeds the batches of [from, to) to `producers`; `onClosed` gets each transaction a marker closed. */
async function replayBatches(log: Log, producers: ProducerStateMap, from: number, to: number, onClosed: (t: CompletedTxn) => Promise<void>): Promise<void> {
  let offset = from;
  while (offset < to) {
    const { records } = await log.read(offset, SCAN_CHUNK, { minOneBatch: true });
    if (records.length === 0) break;
    let pos = 0;
    while (pos + LOG_OVERHEAD <= records.length) {
      const size = records.readInt32BE(pos + BATCH_LENGTH) + LOG_OVERHEAD;
      if (pos + size > records.length) break;
      const base = Number(records.readBigInt64BE(pos));
      const last = base + records.readInt32BE(pos + 23);
      if (base >= to) return;
      const closed = recordProducerBatch(producers, records, pos, base, last);
      if (closed) await onClosed(closed);
      offset = last + 1;
      pos += size;
    }
    if (pos === 0) break;
  }
}

/**
 * The .txnindex of a segment before `from` (where the replay starts) that a crash lost, or that
 * was dropped as corrupt, is rebuilt: segments without one are searched for ABORT markers (the
 * headers, then the few control batches), and if one holds a marker the cleaner has not already
 * emptied (no delete horizon), producer state is replayed from the log start through that
 * segment, as Kafka's recoverSegment rebuilds producer state before recovering a segment. Each
 * entry so gets its transaction's real first offset (it may begin segments earlier) and last
 * stable offset. Only partitions that saw transactions are searched (a .txnindex on disk, or a
 * producer that wrote or got a marker), so plain partitions read nothing at start.
 */
async function rebuildLostTxnIndexes(log: Log, from: number, state: ProducerStateMap): Promise<void> {
  const segments = log.segments;
  const candidates = segments.filter((s) => s.baseOffset < from && !s.txnIndex.fileExists);
  if (candidates.length === 0) return;
  const sawTransactions =
    segments.some((s) => s.txnIndex.fileExists) || [...state.producers.values()].some((e) => e.coordinatorEpoch >= 0 || e.currentTxnFirstOffset >= 0);
  if (!sawTransactions) return;
  const lost = new Set<LogSegment>();
  for (const seg of candidates) if (await holdsLiveAbortMarker(seg)) lost.add(seg);
  if (lost.size === 0) return;
  const last = [...lost].at(-1)!;
  const next = segments[segments.indexOf(last) + 1];
  const entries = new Map<LogSegment, AbortedTxn[]>();
  const scratch = new ProducerStateMap();
  await replayBatches(log, scratch, log.logStartOffset, next ? next.baseOffset : log.logEndOffset, async (closed) => {
    // As Kafka's recovery: a marker with no open transaction before it gets [marker, marker].
    if (!closed.aborted) return;
    const seg = segmentHolding(segments, closed.lastOffset);
    if (seg && lost.has(seg)) entries.set(seg, [...(entries.get(seg) ?? []), abortEntry(closed)]);
  });
  for (const seg of lost) {
    const found = entries.get(seg) ?? [];
    if (found.length === 0) continue;
    await seg.txnIndex.replaceAll(found);
    log.logger.warn(`rebuilt the lost transaction index of ${log.name} segment ${seg.baseOffset}: ${found.length} aborted transaction(s)`);
  }
}

function segmentHolding(segments: readonly LogSegment[], offset: number): LogSegment | undefined {
  let found: LogSegment | undefined;
  for (const s of segments) {
    if (s.baseOffset > offset) break;
    found = s;
  }
  return found;
}

/** Whether the segment holds an ABORT marker without a delete horizon (one whose records may remain). */
async function holdsLiveAbortMarker(seg: LogSegment): Promise<boolean> {
  const controls: { position: number; size: number }[] = [];
  await scanBatchHeaders(seg.file, 0, seg.size, (buf, start, position, size) => {
    if (buf.readInt8(start + MAGIC) === 2) {
      const attributes = buf.readInt16BE(start + ATTRIBUTES);
      if ((attributes & ATTR_CONTROL) !== 0 && (attributes & ATTR_DELETE_HORIZON) === 0) controls.push({ position, size });
    }
    return true;
  });
  for (const c of controls) {
    const buf = await readAt(seg.file, c.position, c.size);
    try {
      if (markerAt(buf, 0)?.aborted) return true;
    } catch {
      // Not a readable marker: nothing to index.
    }
  }
  return false;
}

/** The .txnindex entry of an aborted transaction. */
function abortEntry(t: CompletedTxn): AbortedTxn {
  return { producerId: t.producerId, firstOffset: t.firstOffset, lastOffset: t.lastOffset, lastStableOffset: t.lastStableOffset };
}
