/**
 * One partition's log: an ordered list of segments, the last one active. Appends are serialised
 * by a mutex; reads never take it (they snapshot the immutable segment array and sizes), so a
 * fetch never waits behind a disk write.
 */
import { collectAbortedTxns, recordAbortedTxn } from './aborted-txns.js';
import type { AbortedTxn } from './transaction-index.js';
import { EventEmitter } from 'node:events';
import { unlink } from 'node:fs/promises';
import path from 'node:path';
import { FailureLog } from './failure-log.js';
import { LogSegment } from './log-segment.js';
import { readFromSegments, type ReadResult } from './log-read.js';
import { recordEpochs, shouldRoll } from './roll-policy.js';
import { SegmentRetirement } from './segment-retirement.js';
import { assignOffsets, existingOffsetRange, maxTimestampOfBatches, validateBatches } from './append-validation.js';
import { validateLogConfig, type LogConfig } from './config.js';
import { KafkaStorageError, LogClosedError, OffsetOutOfRangeError, RecordTooLargeError, StorageError, UnexpectedAppendOffsetError, UnexpectedStorageError, errnoOf, isOsError } from './errors.js';
import { LeaderEpochCache } from './leader-epoch-cache.js';
import type { StorageLogger } from './logger.js';
import { Mutex } from './mutex.js';
import { loadSegments } from './recovery.js';
import { findOffsetByTimestamp, findMaxTimestampOffset } from './timestamp-lookup.js';
import { readDecompressionCap } from '../protocol/records/read-limits.js';

const PLURAL = { append: 'appends', read: 'reads', truncate: 'truncations', flush: 'flushes' } as const;

export interface AppendResult {
  firstOffset: number;
  lastOffset: number;
  logAppendTime: number;
  logStartOffset: number;
  maxTimestamp: number;
}

export interface AppendOptions {
  leaderEpoch: number;
  now?: number;
  /** false on followers: offsets come with the batches. Defaults to true. */
  assignOffsets?: boolean;
  /**
   * The caller already verified every batch's CRC (e.g. the produce handler's own validation):
   * skip the second CRC pass, which costs as much as the page-cache write. Framing, magic and
   * sizes are still checked.
   */
  crcVerified?: boolean;
}

export type { ReadResult } from './log-read.js';

export interface LogOpenOptions {
  dir: string;
  topic: string;
  partition: number;
  config: LogConfig;
  logger: StorageLogger;
  recoveryPoint?: number;
  logStartOffset?: number;
  hadCleanShutdown?: boolean;
  /** Called on I/O errors other than a full disk, so the manager can take the directory offline. */
  onIoError?: (log: Log, err: unknown) => void;
  /** Called when the log start offset moved (the manager checkpoints it). */
  onLogStartOffsetChanged?: (log: Log) => void;
  clock?: () => number;
  /** Rate-limited logging of I/O failures, shared by the logs of a manager. Default: one per log. */
  failureLog?: FailureLog;
}

export declare interface Log {
  on(event: 'append', listener: (info: { firstOffset: number; lastOffset: number }) => void): this;
}

/**
 * What the cleaner must respect of the producers writing to a log. Kafka's UnifiedLog holds its
 * producer state; Fjord's lives in the partition hosting the log, which sets this on open.
 */
export interface LogProducerView {
  /** The cleaner never cleans at or past it (Kafka bounds firstUncleanableOffset by the LSO). */
  lastStableOffset(): number;
  /** Per active producer: the last offset of its last data batch (-1: none since its epoch) and its epoch. */
  lastRecordsOfActiveProducers(): ReadonlyMap<bigint, { lastDataOffset: number; epoch: number }>;
}

export class Log extends EventEmitter {
  readonly topic: string;
  readonly partition: number;
  readonly dir: string;
  config: LogConfig;
  /** Immutable snapshot; replaced (never mutated) when segments come or go. */
  segments: readonly LogSegment[] = [];
  /** Set by the hosting partition; unset, the cleaner knows of no transactions and producers. */
  producerView: LogProducerView | undefined;
  recoveryPoint = 0;
  offline = false;
  /**
   * Closed (partition deleted, broker stopping): later calls fail with LogClosedError, and so do
   * calls that were in flight when its files closed. Never a reason to take the directory offline.
   */
  private closed = false;
  readonly epochs: LeaderEpochCache;
  lastFlushMs: number;
  private startOffset = 0;
  private endOffset = 0;
  private unflushedMessages = 0;
  readonly lock = new Mutex();
  private readonly retirement = new SegmentRetirement();
  private backgroundFlush: Promise<void> = Promise.resolve();
  readonly logger: StorageLogger;
  readonly clock: () => number;
  private readonly opts: LogOpenOptions;
  /** The log directory holding this partition's directory. */
  readonly logDir: string;
  private readonly failures: FailureLog;

  private constructor(opts: LogOpenOptions) {
    super();
    this.setMaxListeners(0);
    this.opts = opts;
    this.topic = opts.topic;
    this.partition = opts.partition;
    this.dir = opts.dir;
    this.config = opts.config;
    this.logger = opts.logger;
    this.clock = opts.clock ?? Date.now;
    this.epochs = new LeaderEpochCache(opts.dir);
    this.lastFlushMs = this.clock();
    this.logDir = path.dirname(opts.dir);
    this.failures = opts.failureLog ?? new FailureLog(opts.logger, this.clock);
  }

  static async open(opts: LogOpenOptions): Promise<Log> {
    validateLogConfig(opts.config);
    const log = new Log(opts);
    const loaded = await loadSegments(opts.dir, opts.config, {
      recoveryPoint: opts.recoveryPoint ?? 0,
      hadCleanShutdown: opts.hadCleanShutdown ?? false,
      logger: opts.logger,
      now: log.clock(),
    });
    let segments = loaded.segments;
    const checkpointedStart = opts.logStartOffset ?? 0;
    if (segments.length === 0 || checkpointedStart > loaded.nextOffset) {
      // Nothing on disk, or everything before the checkpointed start is gone: start fresh there.
      for (const seg of segments) await log.deleteSegmentFiles(seg);
      const start = segments.length === 0 ? Math.max(checkpointedStart, 0) : checkpointedStart;
      segments = [await LogSegment.open(opts.dir, start, log.segmentSettings(), log.clock())];
      log.endOffset = start;
    } else {
      log.endOffset = loaded.nextOffset;
    }
    log.segments = segments;
    log.startOffset = Math.max(checkpointedStart, segments[0]!.baseOffset);
    log.recoveryPoint = opts.hadCleanShutdown ? log.endOffset : Math.min(opts.recoveryPoint ?? 0, log.endOffset);
    await log.epochs.load((m) => opts.logger.warn(m));
    if (log.epochs.truncateFromEnd(log.endOffset) || log.epochs.truncateFromStart(log.startOffset)) {
      // On a full disk the trimmed cache stays in memory; the file is trimmed again next time.
      await log.epochs.persist().catch((err: unknown) => {
        const code = errnoOf(err);
        if (code !== 'ENOSPC' && code !== 'EDQUOT') throw err;
        opts.logger.warn(`cannot persist leader epochs of ${log.name}: ${code} (the disk is full)`);
      });
    }
    return log;
  }

  get logStartOffset(): number {
    return this.startOffset;
  }
  get logEndOffset(): number {
    return this.endOffset;
  }
  get activeSegment(): LogSegment {
    return this.segments[this.segments.length - 1]!;
  }
  /** Bytes of all segments. */
  get size(): number {
    let total = 0;
    for (const s of this.segments) total += s.size;
    return total;
  }
  get name(): string {
    return `${this.topic}-${this.partition}`;
  }

  segmentSettings(): { indexIntervalBytes: number; segmentIndexBytes: number } {
    return { indexIntervalBytes: this.config.indexIntervalBytes, segmentIndexBytes: this.config.segmentIndexBytes };
  }

  updateConfig(cfg: Partial<LogConfig>): void {
    const next = { ...this.config, ...cfg };
    validateLogConfig(next);
    this.config = next;
    for (const s of this.segments) s.updateSettings(this.segmentSettings());
  }

  get isClosed(): boolean {
    return this.closed;
  }

  private closedError(action: string): LogClosedError {
    return new LogClosedError(`${action} of ${this.name}: the log is closed (its partition was deleted or the broker is stopping)`);
  }

  private checkOnline(action = 'access'): void {
    if (this.closed) throw this.closedError(action);
    if (this.offline) throw new KafkaStorageError(`log ${this.name} is in an offline log directory ${this.dir}`);
  }

  /** Translates an I/O failure into KafkaStorageError, reporting non-ENOSPC faults to the manager. */
  private storageFailure(action: 'append' | 'read' | 'truncate' | 'flush', err: unknown): StorageError {
    // Files closed under a request (its partition deleted meanwhile) fail with EBADF or ENOENT:
    // that request's problem, not the directory's.
    if (this.closed) return this.closedError(action);
    // Only what the operating system returned can mean a failing disk; an exception of ours
    // (or a Node argument check) fails the one call, loudly, and the directory keeps serving.
    if (!isOsError(err)) {
      const detail = err instanceof Error ? (err.stack ?? err.message) : String(err);
      this.failures.failed(this.logDir, `unexpected ${PLURAL[action]} failures`, 'error', () => `${action} of ${this.name} failed unexpectedly (not an I/O error; the log dir stays online): ${detail}`);
      return new UnexpectedStorageError(`${action} failed for ${this.name}: ${(err as Error)?.message ?? String(err)}`, { cause: err });
    }
    const code = errnoOf(err);
    const full = code === 'ENOSPC' || code === 'EDQUOT';
    // A full disk or too many open files is the broker's condition, not a faulty directory.
    if (!full && code !== 'EMFILE' && code !== 'ENFILE') this.opts.onIoError?.(this, err);
    const message = (err as Error)?.message ?? String(err);
    // Every failure is counted; at most one line per directory and interval is written.
    this.failures.failed(this.logDir, PLURAL[action], full ? 'error' : 'warn', () =>
      full
        ? `${action} of ${this.name} in log dir ${this.logDir} failed: ${code} (${message}); the disk is full: appends there are refused with KAFKA_STORAGE_ERROR until space is freed, stored data is still served`
        : `${action} of ${this.name} in log dir ${this.logDir} failed: ${code ?? 'error'} (${message})`,
    );
    return new KafkaStorageError(`${action} failed for ${this.name}: ${message}`, { cause: err });
  }

  async append(batches: Buffer, opts: AppendOptions): Promise<AppendResult> {
    const assign = opts.assignOffsets ?? true;
    const summary = validateBatches(batches, this.config.maxMessageBytes, assign, !opts.crcVerified);
    if (batches.length > this.config.segmentBytes)
      throw new RecordTooLargeError(`append of ${batches.length} bytes exceeds segment.bytes ${this.config.segmentBytes}`);
    return this.lock.run(async () => {
      this.checkOnline('append');
      const now = opts.now ?? this.clock();
      const logAppendTime = assign && this.config.messageTimestampType === 'LogAppendTime' ? now : undefined;
      let firstOffset: number;
      let lastOffset: number;
      if (assign) {
        firstOffset = this.endOffset;
        lastOffset = assignOffsets(batches, firstOffset, opts.leaderEpoch, logAppendTime);
      } else {
        const range = existingOffsetRange(batches);
        if (!range.monotonic || range.first < this.endOffset)
          throw new UnexpectedAppendOffsetError(
            `replica append starting at ${range.first} is not beyond log end offset ${this.endOffset} of ${this.name}`,
          );
        firstOffset = range.first;
        lastOffset = range.last;
      }
      const { maxTimestamp, firstBatchMaxTimestamp } = maxTimestampOfBatches(batches);
      try {
        if (shouldRoll(this.activeSegment, this.config, batches.length, lastOffset, firstBatchMaxTimestamp, now)) await this.roll(firstOffset);
        this.activeSegment.append(batches, now);
      } catch (err) {
        throw this.storageFailure('append', err);
      }
      this.endOffset = lastOffset + 1;
      if (this.failures.anyFailing) this.failures.succeeded(this.logDir, PLURAL.append);
      if (recordEpochs(this.epochs, batches, assign ? opts.leaderEpoch : undefined, firstOffset)) {
        await this.epochs.persist().catch((e) => this.logger.warn(`cannot persist leader epochs of ${this.name}: ${String(e)}`));
      }
      this.unflushedMessages += summary.recordCount;
      this.emit('append', { firstOffset, lastOffset });
      if (this.unflushedMessages >= this.config.flushMessages) await this.flushLocked();
      return { firstOffset, lastOffset, logAppendTime: logAppendTime ?? -1, logStartOffset: this.startOffset, maxTimestamp };
    });
  }

  /**
   * Follower append (Kafka's UnifiedLog.appendAsFollower): the batches are stored as the leader
   * wrote them (base offsets, partition leader epochs, timestamps untouched). Every batch's CRC is
   * checked; the first must start at or after the log end offset and each batch after the
   * previous one (a compacted leader leaves gaps, as in Kafka, so offsets need not be dense);
   * otherwise UnexpectedAppendOffsetError and nothing is written. The leader epoch cache learns
   * each batch's epoch at its base offset.
   */
  appendAsFollower(batches: Buffer): Promise<AppendResult> {
    return this.append(batches, { leaderEpoch: -1, assignOffsets: false });
  }

  /** Rolls the active segment now (admin tools, tests). */
  forceRoll(): Promise<void> {
    return this.lock.run(async () => {
      this.checkOnline('roll');
      if (this.activeSegment.size > 0) await this.roll(this.endOffset);
    });
  }

  /** Seals the active segment and opens a new one at `baseOffset`. Must hold the lock. */
  async roll(baseOffset = this.endOffset): Promise<LogSegment> {
    const old = this.activeSegment;
    if (old.size === 0 && old.baseOffset === baseOffset) return old;
    old.sealTimeIndex();
    const fresh = await LogSegment.open(this.dir, baseOffset, this.segmentSettings(), this.clock());
    this.segments = [...this.segments, fresh];
    // Flush the sealed segment off the append path; the recovery point follows when it is done.
    const previous = this.backgroundFlush;
    this.backgroundFlush = previous.then(() => this.flushSegments([old], baseOffset));
    return fresh;
  }

  private async flushSegments(segs: LogSegment[], upTo: number): Promise<void> {
    try {
      for (const s of segs) if (!this.retirement.has(s)) await s.flush();
      if (upTo > this.recoveryPoint) this.recoveryPoint = Math.min(upTo, this.endOffset);
    } catch (err) {
      if (!this.retirement.has(segs[0]!)) this.logger.warn(`flush of ${this.name} failed: ${String(err)}`);
    }
  }

  async read(fetchOffset: number, maxBytes: number, opts: { maxOffset?: number; minOneBatch?: boolean } = {}): Promise<ReadResult> {
    this.checkOnline('read');
    const start = this.startOffset;
    const end = this.endOffset;
    const segments = this.segments;
    if (fetchOffset < start || fetchOffset > end) throw new OffsetOutOfRangeError(fetchOffset, start, end);
    const empty = { records: Buffer.alloc(0), firstBatchOffset: fetchOffset };
    if (fetchOffset === end || (opts.maxOffset !== undefined && fetchOffset >= opts.maxOffset)) return empty;
    try {
      return (await readFromSegments(segments, fetchOffset, maxBytes, opts.maxOffset, opts.minOneBatch ?? true)) ?? empty;
    } catch (err) {
      // A segment deleted under us (retention raced this read) closes its file: retry on the new list.
      if (segments !== this.segments) return this.read(fetchOffset, maxBytes, opts);
      throw this.storageFailure('read', err);
    }
  }

  async offsetForTimestamp(ts: number): Promise<{ offset: number; timestamp: number } | null> {
    this.checkOnline('timestamp lookup');
    return this.closedAware('timestamp lookup', findOffsetByTimestamp(this.segments, ts, this.startOffset, readDecompressionCap(this.config.maxMessageBytes)));
  }

  async maxTimestampOffset(): Promise<{ offset: number; timestamp: number } | null> {
    this.checkOnline('timestamp lookup');
    return this.closedAware('timestamp lookup', findMaxTimestampOffset(this.segments, readDecompressionCap(this.config.maxMessageBytes)));
  }

  /** A failure of `op` because the log closed while it ran is reported as LogClosedError. */
  private closedAware<T>(action: string, op: Promise<T>): Promise<T> {
    return op.catch((err: unknown) => {
      throw this.closed ? this.closedError(action) : err;
    });
  }

  /**
   * A leader took `epoch` at `startOffset` (its log end): the epoch is in the history at once,
   * before any append in it (Kafka's maybeAssignEpochStartOffset), and the checkpoint follows.
   */
  assignEpochStartOffset(epoch: number, startOffset: number): Promise<void> {
    if (!this.epochs.assign(epoch, startOffset)) return Promise.resolve();
    return this.lock.run(async () => {
      if (this.closed) return;
      await this.epochs.persist().catch((e) => this.logger.warn(`cannot persist leader epochs of ${this.name}: ${String(e)}`));
    });
  }

  async deleteRecordsBefore(offset: number): Promise<number> {
    return this.lock.run(async () => {
      this.checkOnline('record deletion');
      if (offset > this.endOffset || offset < 0) throw new OffsetOutOfRangeError(offset, this.startOffset, this.endOffset);
      if (offset > this.startOffset) {
        this.startOffset = offset;
        if (this.epochs.truncateFromStart(offset)) await this.epochs.persist();
        this.opts.onLogStartOffsetChanged?.(this);
      }
      await this.deleteSegmentsLocked((seg, next) => (next ? next.baseOffset : this.endOffset) <= this.startOffset && seg.size > 0, 'log start offset');
      return this.startOffset;
    });
  }

  /**
   * Deletes the oldest segments while `shouldDelete(segment, nextSegment)` holds. The active
   * segment may go too when it is non-empty (it is rolled first). Returns how many were deleted.
   */
  deleteOldSegments(shouldDelete: (seg: LogSegment, next: LogSegment | undefined) => boolean, reason: string): Promise<number> {
    return this.lock.run(() => this.deleteSegmentsLocked(shouldDelete, reason));
  }

  private async deleteSegmentsLocked(
    shouldDelete: (seg: LogSegment, next: LogSegment | undefined) => boolean,
    reason: string,
  ): Promise<number> {
    if (this.offline || this.closed) return 0;
    const victims: LogSegment[] = [];
    for (let i = 0; i < this.segments.length; i++) {
      const seg = this.segments[i]!;
      if (!shouldDelete(seg, this.segments[i + 1])) break;
      victims.push(seg);
    }
    if (victims.length === 0) return 0;
    if (victims.length === this.segments.length) {
      if (this.activeSegment.size === 0) victims.pop();
      else await this.roll(this.endOffset);
    }
    if (victims.length === 0) return 0;
    this.segments = this.segments.slice(victims.length);
    const newStart = this.segments[0]!.baseOffset;
    if (newStart > this.startOffset) {
      this.startOffset = newStart;
      if (this.epochs.truncateFromStart(newStart)) await this.epochs.persist();
      this.opts.onLogStartOffsetChanged?.(this);
    }
    for (const v of victims) {
      this.logger.info(`deleting segment ${v.logFile} of ${this.name} (${v.size} bytes) due to ${reason}`);
      await this.retireSegment(v);
    }
    return victims.length;
  }

  /** Removes a segment that left the log; its files go after file.delete.delay.ms. */
  retireSegment(seg: LogSegment): Promise<void> {
    return this.retirement.delete(seg, this.config.fileDeleteDelayMs);
  }

  /** A segment whose file was replaced in place (cleaner swap): close it later, delete nothing. */
  retireReplacedSegment(seg: LogSegment): void {
    this.retirement.replaced(seg, this.config.fileDeleteDelayMs);
  }

  private async deleteSegmentFiles(seg: LogSegment): Promise<void> {
    await seg.close();
    for (const f of [seg.logFile, seg.offsetIndex.file, seg.timeIndex.file]) await unlink(f).catch(() => undefined);
  }

  /** Removes everything at and after `offset` (replica truncation). */
  async truncateTo(offset: number): Promise<void> {
    await this.lock.run(async () => {
      this.checkOnline('truncation');
      if (offset >= this.endOffset) {
        // Nothing to cut, but an epoch may start here with no data (taken by this replica as a
        // leader at its log end): it goes, as the leader's history does not have it (Kafka does the same).
        if (this.epochs.truncateFromEnd(offset)) await this.epochs.persist();
        return;
      }
      try {
        if (offset < this.startOffset) return await this.truncateFullyAndStartAtLocked(offset);
        const keep = this.segments.filter((s, i) => i === 0 || s.baseOffset < offset);
        const dropped = this.segments.slice(keep.length);
        this.segments = keep;
        for (const d of dropped) await this.retireSegment(d);
        const removed = await this.activeSegment.truncateTo(offset);
        this.logger.info(`truncated ${this.name} to offset ${offset} (${removed} bytes and ${dropped.length} segments removed)`);
        this.endOffset = offset;
        this.recoveryPoint = Math.min(this.recoveryPoint, offset);
        if (this.epochs.truncateFromEnd(offset)) await this.epochs.persist();
      } catch (err) {
        throw this.storageFailure('truncate', err);
      }
    });
  }

  async truncateFullyAndStartAt(offset: number): Promise<void> {
    await this.lock.run(() => this.truncateFullyAndStartAtLocked(offset));
  }

  private async truncateFullyAndStartAtLocked(offset: number): Promise<void> {
    if (this.closed) throw this.closedError('truncation');
    // Retire first: renaming the old files frees the name if a segment already starts at `offset`.
    for (const s of this.segments) await this.retireSegment(s);
    this.segments = [await LogSegment.open(this.dir, offset, this.segmentSettings(), this.clock())];
    this.startOffset = offset;
    this.endOffset = offset;
    this.recoveryPoint = offset;
    this.epochs.clear();
    await this.epochs.persist();
    this.opts.onLogStartOffsetChanged?.(this);
  }

  /** fsyncs everything up to the log end and advances the recovery point. */
  flush(): Promise<void> {
    return this.lock.run(() => {
      if (this.closed) throw this.closedError('flush');
      return this.flushLocked();
    });
  }

  private async flushLocked(): Promise<void> {
    if (this.offline) return;
    const upTo = this.endOffset;
    // As Kafka: nothing past the recovery point and nothing written since means nothing to sync
    // (an idle log costs no fsync, so shutting down 20,000 idle partitions stays fast).
    if (upTo <= this.recoveryPoint && this.segments.every((s) => s.unflushedBytes === 0)) {
      await this.activeSegment.persistIndexes().catch((err) => this.logger.warn(`cannot write indexes of ${this.name}: ${String(err)}`));
      this.unflushedMessages = 0;
      this.lastFlushMs = this.clock();
      return;
    }
    try {
      for (const s of this.segments) if (s.unflushedBytes > 0 || s === this.activeSegment) await s.flush();
    } catch (err) {
      throw this.storageFailure('flush', err);
    }
    this.recoveryPoint = upTo;
    this.unflushedMessages = 0;
    this.lastFlushMs = this.clock();
    if (this.failures.anyFailing) this.failures.succeeded(this.logDir, PLURAL.flush);
  }

  /** flush.ms policy, driven by the manager's scheduler. */
  async flushIfDue(now: number): Promise<void> {
    if (this.unflushedMessages > 0 && now - this.lastFlushMs >= this.config.flushMs) await this.flush();
  }

  /** Aborted transactions a read_committed fetch of [fetchOffset, upperBound) reports. */
  collectAbortedTxns(fetchOffset: number, upperBound: number): AbortedTxn[] {
    return collectAbortedTxns(this.segments, fetchOffset, upperBound);
  }

  /** Records an abort whose marker was just appended (or, `ifMissing`, replayed after a crash). */
  recordAbortedTxn(t: AbortedTxn, ifMissing = false): Promise<void> {
    return recordAbortedTxn(this.segments, t, ifMissing);
  }

  /** Replaces segments under the lock (the cleaner's swap). `mutate` returns the new list. */
  async replaceSegments(mutate: (current: readonly LogSegment[]) => Promise<readonly LogSegment[] | undefined>): Promise<void> {
    await this.lock.run(async () => {
      const next = await mutate(this.segments);
      if (next) this.segments = next;
    });
  }

  /**
   * Flushes and closes. Resolves false when the final flush failed (or the log is offline):
   * the log was not shut down cleanly and the next start must recover it.
   */
  async close(): Promise<boolean> {
    return this.lock.run(async () => {
      await this.backgroundFlush;
      let flushed = false;
      if (!this.offline) {
        this.activeSegment.sealTimeIndex();
        flushed = await this.flushLocked().then(
          () => true,
          (err: unknown) => {
            this.logger.error(`final flush of ${this.name} failed: ${String(err)}`);
            return false;
          },
        );
      }
      this.closed = true;
      await this.retirement.closeAll();
      for (const s of this.segments) await s.close();
      this.removeAllListeners();
      return flushed;
    });
  }
}
