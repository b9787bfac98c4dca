/**
 * A partition's local log (Kafka's LocalLog): an ordered list of segments, the last one active,
 * the offsets they span and the leader epochs they hold. Appends are serialised by a mutex;
 * reads never take it (they snapshot the immutable segment array and sizes), so a fetch never
 * waits behind a disk write. UnifiedLog (unified-log.ts) puts producer state, the high watermark
 * and the last stable offset over it; everything outside storage reaches a log through that.
 */
import { EventEmitter } from 'node:events';
import path from 'node:path';
import { FailureLog } from '../../common/failure-log.js';
import { LogSegment } from '../segment/log-segment.js';
import { loadEpochHistory, loadLogStartState, type LogOpenOptions } from './log-open.js';
import { LogIoFailures } from './log-io-failures.js';
import { LogAvailability } from './log-availability.js';
import { oldestSegmentsToDelete, splitForTruncation } from './segment-list.js';
import { readFromSegments, type ReadResult } from './log-read.js';
import { recordEpochs, shouldRoll } from './roll-policy.js';
import { SegmentRetirement } from '../segment/segment-retirement.js';
import { planAppend } from '../append/append-step.js';
import { validateLogConfig, type LogConfig } from '../config.js';
import { OffsetOutOfRangeError, RecordTooLargeError } from '../errors.js';
import { LeaderEpochCache } from './leader-epoch-cache.js';
import type { StorageLogger } from '../logger.js';
import { Mutex } from '../../common/mutex.js';
import type { AppendOptions, AppendResult } from './append-types.js';
import { LogFlusher } from './log-flush.js';
import { findOffsetByTimestamp, findMaxTimestampOffset } from './timestamp-lookup.js';
import { readDecompressionCap } from '../../protocol/records/read-limits.js';

export type { ReadResult } from './log-read.js';
export type { LogOpenOptions } from './log-open.js';

export declare interface LocalLog {
  on(event: 'append', listener: (info: { firstOffset: number; lastOffset: number }) => void): this;
}

export class LocalLog extends EventEmitter {
  readonly topic: string;
  readonly partition: number;
  readonly dir: string;
  config: LogConfig;
  /** Immutable snapshot; replaced (never mutated) when segments come or go. */
  segments: readonly LogSegment[] = [];
  readonly epochs: LeaderEpochCache;
  private startOffset = 0;
  private endOffset = 0;
  readonly lock = new Mutex();
  private readonly retirement = new SegmentRetirement();
  private readonly flusher: LogFlusher;
  readonly logger: StorageLogger;
  readonly clock: () => number;
  private readonly opts: LogOpenOptions;
  /** The log directory holding this partition's directory. */
  readonly logDir: string;
  private readonly ioFailures: LogIoFailures;
  /** Closed or offline (log-availability.ts). */
  private readonly availability: LogAvailability;

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
    this.flusher = new LogFlusher(this, this.clock, {
      isRetired: (seg) => this.retirement.has(seg),
      failure: (err) => this.availability.failure('flush', err),
      succeeded: () => this.ioFailures.succeeded('flush'),
      stats: opts.flushStats,
    });
    this.logDir = path.dirname(opts.dir);
    this.ioFailures = new LogIoFailures(this.name, this.logDir, opts.failureLog ?? new FailureLog(opts.logger, this.clock), (err) =>
      opts.onIoError?.(this, err),
    );
    this.availability = new LogAvailability(this.name, this.dir, this.ioFailures);
  }

  static async open(opts: LogOpenOptions): Promise<LocalLog> {
    validateLogConfig(opts.config);
    const log = new LocalLog(opts);
    const state = await loadLogStartState(opts, () => log.clock(), log.segmentSettings());
    log.segments = state.segments;
    log.startOffset = state.startOffset;
    log.endOffset = state.endOffset;
    log.flusher.recoveryPoint = state.recoveryPoint;
    await loadEpochHistory(log.epochs, state, opts.logger, log.name);
    return log;
  }

  /** Everything below it is on disk (log-flush.ts). */
  get recoveryPoint(): number {
    return this.flusher.recoveryPoint;
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
    return this.availability.closed;
  }
  /** In a failed log directory: set by the manager, never cleared. */
  get offline(): boolean {
    return this.availability.offline;
  }
  set offline(offline: boolean) {
    this.availability.offline = offline;
  }

  async append(batches: Buffer, opts: AppendOptions): Promise<AppendResult> {
    const assign = opts.assignOffsets ?? true;
    return this.lock.run(async () => {
      const now = opts.now ?? this.clock();
      const logAppendTime = assign && this.config.messageTimestampType === 'LogAppendTime' ? now : undefined;
      // The single pass: validate, check producers, assign offsets, stamp timestamps (append-step.ts).
      const plan = planAppend(batches, {
        assignOffsets: assign,
        logEndOffset: this.endOffset,
        leaderEpoch: opts.leaderEpoch,
        logAppendTime,
        validated: opts.validated ?? false,
        crcVerified: opts.crcVerified ?? false,
        maxMessageBytes: this.config.maxMessageBytes,
        logName: this.name,
        producers: opts.producers,
        fromClient: opts.fromClient,
      });
      if (plan.refused)
        return { firstOffset: -1, lastOffset: -1, logAppendTime: -1, logStartOffset: this.startOffset, maxTimestamp: -1, refused: plan.refused };
      if (batches.length > this.config.segmentBytes)
        throw new RecordTooLargeError(`append of ${batches.length} bytes exceeds segment.bytes ${this.config.segmentBytes}`);
      this.availability.check('append');
      const { firstOffset, lastOffset, maxTimestamp } = plan;
      try {
        if (shouldRoll(this.activeSegment, this.config, batches.length, lastOffset, plan.firstBatchMaxTimestamp, now)) await this.roll(firstOffset);
        this.activeSegment.append(batches, now);
      } catch (err) {
        throw this.availability.failure('append', err);
      }
      this.endOffset = lastOffset + 1;
      this.ioFailures.succeeded('append');
      if (recordEpochs(this.epochs, batches, assign ? opts.leaderEpoch : undefined, firstOffset)) {
        await this.epochs.persist().catch((e) => this.logger.warn(`cannot persist leader epochs of ${this.name}: ${String(e)}`));
      }
      const flushNow = this.flusher.appended(plan.recordCount, this.config.flushMessages);
      this.emit('append', { firstOffset, lastOffset });
      if (flushNow) await this.flusher.flush();
      return { firstOffset, lastOffset, logAppendTime: logAppendTime ?? -1, logStartOffset: this.startOffset, maxTimestamp };
    });
  }

  /** Follower append: the batches as the leader wrote them, offsets and epochs checked (UnifiedLog.appendAsFollower). */
  appendAsFollower(batches: Buffer): Promise<AppendResult> {
    return this.append(batches, { leaderEpoch: -1, assignOffsets: false });
  }

  /** Rolls the active segment now (admin tools, tests). */
  forceRoll(): Promise<void> {
    return this.lock.run(async () => {
      this.availability.check('roll');
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
    this.flusher.flushSealed(old, baseOffset);
    return fresh;
  }

  async read(fetchOffset: number, maxBytes: number, opts: { maxOffset?: number; minOneBatch?: boolean } = {}): Promise<ReadResult> {
    this.availability.check('read');
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
      throw this.availability.failure('read', err);
    }
  }

  offsetForTimestamp(ts: number): Promise<{ offset: number; timestamp: number } | null> {
    return this.availability.lookUp('timestamp lookup', () =>
      findOffsetByTimestamp(this.segments, ts, this.startOffset, readDecompressionCap(this.config.maxMessageBytes)),
    );
  }

  maxTimestampOffset(): Promise<{ offset: number; timestamp: number } | null> {
    return this.availability.lookUp('timestamp lookup', () => findMaxTimestampOffset(this.segments, readDecompressionCap(this.config.maxMessageBytes)));
  }

  async deleteRecordsBefore(offset: number): Promise<number> {
    return this.lock.run(async () => {
      this.availability.check('record deletion');
      if (offset > this.endOffset || offset < 0) throw new OffsetOutOfRangeError(offset, this.startOffset, this.endOffset);
      await this.moveStartOffset(offset);
      await this.deleteSegmentsLocked((seg, next) => (next ? next.baseOffset : this.endOffset) <= this.startOffset && seg.size > 0, 'log start offset');
      return this.startOffset;
    });
  }

  /** Moves the log start forward to `offset` (never back); the epochs before it go and the manager checkpoints it. */
  private async moveStartOffset(offset: number): Promise<void> {
    if (offset <= this.startOffset) return;
    this.startOffset = offset;
    if (this.epochs.truncateFromStart(offset)) await this.epochs.persist();
    this.opts.onLogStartOffsetChanged?.(this);
  }

  /**
   * Deletes the oldest segments while `shouldDelete(segment, nextSegment)` holds. The active
   * segment may go too when it is non-empty (it is rolled first). Returns how many were deleted.
   */
  deleteOldSegments(shouldDelete: (seg: LogSegment, next: LogSegment | undefined) => boolean, reason: string): Promise<number> {
    return this.lock.run(() => this.deleteSegmentsLocked(shouldDelete, reason));
  }

  private async deleteSegmentsLocked(shouldDelete: (seg: LogSegment, next: LogSegment | undefined) => boolean, reason: string): Promise<number> {
    if (this.offline || this.isClosed) return 0;
    const victims = oldestSegmentsToDelete(this.segments, shouldDelete);
    if (victims.length === 0) return 0;
    // The active segment goes too: roll first, a log always has one.
    if (victims.length === this.segments.length) await this.roll(this.endOffset);
    this.segments = this.segments.slice(victims.length);
    await this.moveStartOffset(this.segments[0]!.baseOffset);
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

  /** Removes everything at and after `offset` (replica truncation). */
  async truncateTo(offset: number): Promise<void> {
    await this.lock.run(async () => {
      this.availability.check('truncation');
      if (offset >= this.endOffset) {
        // Nothing to cut, but an epoch may start here with no data (taken by this replica as a
        // leader at its log end): it goes, as the leader's history does not have it (Kafka does the same).
        if (this.epochs.truncateFromEnd(offset)) await this.epochs.persist();
        return;
      }
      try {
        if (offset < this.startOffset) return await this.truncateFullyAndStartAtLocked(offset);
        const { keep, dropped } = splitForTruncation(this.segments, offset);
        this.segments = keep;
        for (const d of dropped) await this.retireSegment(d);
        const removed = await this.activeSegment.truncateTo(offset);
        this.logger.info(`truncated ${this.name} to offset ${offset} (${removed} bytes and ${dropped.length} segments removed)`);
        this.endOffset = offset;
        this.flusher.recoveryPoint = Math.min(this.flusher.recoveryPoint, offset);
        if (this.epochs.truncateFromEnd(offset)) await this.epochs.persist();
      } catch (err) {
        throw this.availability.failure('truncate', err);
      }
    });
  }

  async truncateFullyAndStartAt(offset: number): Promise<void> {
    await this.lock.run(() => this.truncateFullyAndStartAtLocked(offset));
  }

  private async truncateFullyAndStartAtLocked(offset: number): Promise<void> {
    if (this.isClosed) throw this.availability.closedError('truncation');
    // Retire first: renaming the old files frees the name if a segment already starts at `offset`.
    for (const s of this.segments) await this.retireSegment(s);
    this.segments = [await LogSegment.open(this.dir, offset, this.segmentSettings(), this.clock())];
    this.startOffset = offset;
    this.endOffset = offset;
    this.flusher.recoveryPoint = offset;
    this.epochs.clear();
    await this.epochs.persist();
    this.opts.onLogStartOffsetChanged?.(this);
  }

  /** fsyncs everything up to the log end and advances the recovery point. */
  flush(): Promise<void> {
    return this.lock.run(() => {
      if (this.isClosed) throw this.availability.closedError('flush');
      return this.flusher.flush();
    });
  }

  /** flush.ms policy, driven by the manager's scheduler. */
  async flushIfDue(now: number): Promise<void> {
    if (this.flusher.isDue(now, this.config.flushMs)) await this.flush();
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
      const flushed = await this.flusher.finalFlush();
      this.availability.closed = true;
      await this.retirement.closeAll();
      for (const s of this.segments) await s.close();
      this.removeAllListeners();
      return flushed;
    });
  }
}
