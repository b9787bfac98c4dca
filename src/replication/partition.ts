/**
 * A partition this broker hosts (leader, or in cluster mode follower): its log, leader epoch,
 * high watermark and idempotent-producer state. Appends are serialised here (producer checks, log append and state update must be one
 * step); reads go straight to the log and never wait behind an append.
 *
 * Single broker: the ISR is just the leader, so the high watermark is the log end offset as
 * soon as an append completes. The concept is kept (reads stop at the HW, it is checkpointed)
 * so follower replication can slot in later.
 */
import { BATCH_LENGTH, LOG_OVERHEAD } from '../protocol/records/batch-header.js';
import { ErrorCode } from '../protocol/errors.js';
import type { AppendResult, Log, ReadResult } from '../storage/log.js';
import { existingOffsetRange } from '../storage/append-validation.js';
import { UnexpectedAppendOffsetError } from '../storage/errors.js';
import { Mutex } from '../storage/mutex.js';
import { lastSequenceOf, ProducerStateMap } from './producer-state.js';
import { loadLatestSnapshot, writeSnapshot } from './producer-state-snapshot.js';

export interface LeaderAppendResult {
  errorCode: number;
  errorMessage?: string;
  baseOffset: number;
  logAppendTime: number;
  logStartOffset: number;
}

/** Something waiting for data on this partition (a long-polling fetch). */
export interface AppendWaiter {
  onAppend(partition: Partition, bytes: number, firstOffset: number): void;
}

const SCAN_CHUNK = 1 << 20;

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
  ) {
    this.topicId = topicId;
    this.leaderEpoch = leaderEpoch;
    this.producers = producers;
    this.hw = log.logEndOffset;
  }

  /** Wraps an opened log, rebuilding producer state from the latest snapshot plus the log after it. */
  static async open(
    log: Log,
    topicId: string,
    leaderEpoch: number,
    onHighWatermark: (p: Partition) => void,
  ): Promise<Partition> {
    const snap = await loadLatestSnapshot(log.dir, log.logEndOffset, (m) => log.logger.warn(m));
    const state = snap?.state ?? new ProducerStateMap();
    const from = Math.max(snap?.offset ?? 0, log.logStartOffset);
    const p = new Partition(log, topicId, leaderEpoch, state, onHighWatermark);
    await p.replayProducerState(from);
    // Up to date when the snapshot reaches the log end, or the log is empty (nothing to replay).
    const upToDate = from === log.logEndOffset;
    p.snapshotVersion = upToDate ? state.version : -1;
    p.snapshotOffset = upToDate ? log.logEndOffset : -1;
    return p;
  }

  get topic(): string {
    return this.log.topic;
  }

  /** LeaderAndIsr made this broker the leader at `leaderEpoch`. */
  makeLeader(selfId: number, leaderEpoch: number): void {
    this.isLeader = true;
    this.leaderId = selfId;
    this.leaderEpoch = leaderEpoch;
  }

  /**
   * LeaderAndIsr made `leaderId` the leader. Issue 12 adds the fetcher here (truncate by leader
   * epoch, then fetch from the leader); until then the follower's log stays as it is.
   */
  makeFollower(leaderId: number, leaderEpoch: number): void {
    this.isLeader = false;
    this.leaderId = leaderId;
    this.leaderEpoch = leaderEpoch;
  }
  get partition(): number {
    return this.log.partition;
  }
  get highWatermark(): number {
    return this.hw;
  }
  /** read_committed bound; no transactions yet, so it is the high watermark. */
  get lastStableOffset(): number {
    return this.hw;
  }
  get logStartOffset(): number {
    return this.log.logStartOffset;
  }
  get logEndOffset(): number {
    return this.log.logEndOffset;
  }

  /** Rebuilds producer state by scanning batch headers in [from, logEnd). */
  private async replayProducerState(from: number): Promise<void> {
    let offset = from;
    while (offset < this.log.logEndOffset) {
      const { records } = await this.log.read(offset, SCAN_CHUNK, { minOneBatch: true });
      if (records.length === 0) break;
      let pos = 0;
      while (pos + LOG_OVERHEAD <= records.length) {
        const size = records.readInt32BE(pos + BATCH_LENGTH) + LOG_OVERHEAD;
        if (pos + size > records.length) break;
        const base = Number(records.readBigInt64BE(pos));
        const last = base + records.readInt32BE(pos + 23);
        this.recordProducerBatch(records, pos, base, last);
        offset = last + 1;
        pos += size;
      }
      if (pos === 0) break;
    }
  }

  private recordProducerBatch(buf: Buffer, pos: number, firstOffset: number, lastOffset: number): void {
    if (buf.readInt8(pos + 16) !== 2) return;
    const pid = buf.readBigInt64BE(pos + 43);
    if (pid < 0n) return;
    const firstSeq = buf.readInt32BE(pos + 53);
    this.producers.update(pid, buf.readInt16BE(pos + 51), {
      firstSeq,
      lastSeq: lastSequenceOf(firstSeq, buf.readInt32BE(pos + 23)),
      firstOffset,
      lastOffset,
      timestamp: Number(buf.readBigInt64BE(pos + 35)),
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

  appendAsLeader(batches: Buffer): Promise<LeaderAppendResult> {
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
          );
          if (check.kind === 'error') return this.failure(check.errorCode, check.message);
          if (check.kind === 'duplicate') {
            return { errorCode: ErrorCode.NONE, baseOffset: check.firstOffset, logAppendTime: -1, logStartOffset: this.log.logStartOffset };
          }
        }
        pos += batches.readInt32BE(pos + BATCH_LENGTH) + LOG_OVERHEAD;
      }
      const res = await this.log.append(batches, { leaderEpoch: this.leaderEpoch, crcVerified: true });
      // Offsets are now stamped in the buffer: record each idempotent batch's range.
      pos = 0;
      while (pos < batches.length) {
        const size = batches.readInt32BE(pos + BATCH_LENGTH) + LOG_OVERHEAD;
        if (batches.readBigInt64BE(pos + 43) >= 0n) {
          const base = Number(batches.readBigInt64BE(pos));
          this.recordProducerBatch(batches, pos, base, base + batches.readInt32BE(pos + 23));
        }
        pos += size;
      }
      this.advanceHighWatermark(this.log.logEndOffset, batches.length, res.firstOffset);
      return { errorCode: ErrorCode.NONE, baseOffset: res.firstOffset, logAppendTime: res.logAppendTime, logStartOffset: res.logStartOffset };
    });
  }

  private failure(errorCode: number, errorMessage: string): LeaderAppendResult {
    return { errorCode, errorMessage, baseOffset: -1, logAppendTime: -1, logStartOffset: this.log.logStartOffset };
  }

  private advanceHighWatermark(hw: number, bytes: number, firstOffset: number): void {
    if (hw <= this.hw) return;
    this.hw = hw;
    this.onHighWatermark(this);
    for (const w of [...this.waiters]) w.onAppend(this, bytes, firstOffset);
  }

  /** Reads for a consumer: never beyond the high watermark (or LSO for read_committed). */
  read(fetchOffset: number, maxBytes: number, minOneBatch: boolean, upTo: number = this.hw): Promise<ReadResult> {
    return this.log.read(fetchOffset, maxBytes, { maxOffset: upTo, minOneBatch });
  }

  /** The log was cut (DeleteRecords moves the start, truncation moves the end): resync HW and producers. */
  onLogTruncated(): void {
    if (this.hw > this.log.logEndOffset) this.hw = this.log.logEndOffset;
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
      let pos = 0;
      while (pos < batches.length) {
        const size = batches.readInt32BE(pos + BATCH_LENGTH) + LOG_OVERHEAD;
        if (batches.readBigInt64BE(pos + 43) >= 0n) {
          const base = Number(batches.readBigInt64BE(pos));
          this.recordProducerBatch(batches, pos, base, base + batches.readInt32BE(pos + 23));
        }
        pos += size;
      }
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
    this.onHighWatermark(this);
  }
}
