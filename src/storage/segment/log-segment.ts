/**
 * One segment: `<base>.log` holding batches exactly as on the wire, plus its `.index`,
 * `.timeindex` and, once it holds an aborted transaction's marker, `.txnindex`. Writes are
 * positional through a SegmentFile (a descriptor opened lazily under the process-wide open-file
 * budget, see segment-file.ts); the in-memory `size` only moves
 * after a write fully succeeded, so readers never see a partial batch.
 */
import { ftruncateSync, writeSync } from 'node:fs';
import { stat } from 'node:fs/promises';
import path from 'node:path';
import { RECORD_BATCH_OVERHEAD, baseOffsetAt, batchSize, lastOffsetAt, maxTimestampAt } from '../../protocol/records/batch-header.js';
import { readAt, scanBatchHeaders } from './batch-scan.js';
import { rebuildSegment, type RecoveryResult } from './segment-rebuild.js';
import { fetchReadBuffers } from './read-buffer-pool.js';
import { OffsetIndex } from './offset-index.js';
import { TimeIndex } from './time-index.js';
import { TransactionIndex } from './transaction-index.js';
import { SegmentFile } from './segment-file.js';
import { INDEX_SUFFIX, LOG_SUFFIX, TIME_INDEX_SUFFIX, TXN_INDEX_SUFFIX, segmentFileName } from './segment-names.js';

export interface SegmentSettings {
  indexIntervalBytes: number;
  segmentIndexBytes: number;
}

export interface BatchLocation {
  position: number;
  size: number;
  baseOffset: number;
  lastOffset: number;
  maxTimestamp: number;
}

/** Whole batches read from a segment, and the base offset of the first batch found. */
export type SegmentRead = { records: Buffer; firstBatchOffset: number };

const acquireReadBuffer = (length: number): Buffer => fetchReadBuffers.acquire(length);

export class LogSegment {
  size = 0;
  /** Offset after the last batch (the segment's contribution to the log end offset). */
  nextOffset: number;
  maxTimestampSoFar = -1;
  offsetOfMaxTimestampSoFar: number;
  /** Timestamp that segment.ms counts from: first batch's max timestamp, else creation time. */
  rollingBasedTimestamp: number | undefined;
  lastModifiedMs: number;
  private bytesSinceLastIndexEntry = 0;
  unflushedBytes = 0;

  private constructor(
    readonly dir: string,
    readonly baseOffset: number,
    public file: SegmentFile,
    readonly offsetIndex: OffsetIndex,
    readonly timeIndex: TimeIndex,
    readonly txnIndex: TransactionIndex,
    private settings: SegmentSettings,
    readonly createdMs: number,
  ) {
    this.nextOffset = baseOffset;
    this.offsetOfMaxTimestampSoFar = baseOffset;
    this.lastModifiedMs = createdMs;
  }

  static logPath(dir: string, base: number): string {
    return path.join(dir, segmentFileName(base, LOG_SUFFIX));
  }

  get logFile(): string {
    return LogSegment.logPath(this.dir, this.baseOffset);
  }

  /**
   * Opens (creating if absent) the segment files. The offset and time indexes are not loaded
   * yet; the transaction index is (a missing file is an empty index). A corrupt one is dropped
   * and reported through `onTxnIndexProblem`: Partition.open rebuilds it (producer-state-recovery.ts)
   * or re-adds the aborts it replays.
   */
  static async open(
    dir: string,
    baseOffset: number,
    settings: SegmentSettings,
    now: number,
    onTxnIndexProblem?: (msg: string) => void,
    /** False when the directory's listing has no transaction index: nothing to read (most segments). */
    txnIndexListed = true,
  ): Promise<LogSegment> {
    const logFile = LogSegment.logPath(dir, baseOffset);
    const { file: fh, stats: st } = await SegmentFile.open(logFile);
    const txnIndex = new TransactionIndex(path.join(dir, segmentFileName(baseOffset, TXN_INDEX_SUFFIX)), baseOffset);
    try {
      if (txnIndexListed) await txnIndex.load();
    } catch (err) {
      onTxnIndexProblem?.(`${(err as Error).message}; dropping the transaction index`);
      await txnIndex.delete();
    }
    const seg = new LogSegment(
      dir,
      baseOffset,
      fh,
      new OffsetIndex(path.join(dir, segmentFileName(baseOffset, INDEX_SUFFIX)), baseOffset, settings.segmentIndexBytes),
      new TimeIndex(path.join(dir, segmentFileName(baseOffset, TIME_INDEX_SUFFIX)), baseOffset, settings.segmentIndexBytes),
      txnIndex,
      settings,
      now,
    );
    seg.size = st.size;
    seg.lastModifiedMs = st.size > 0 ? st.mtimeMs : now;
    return seg;
  }

  updateSettings(settings: SegmentSettings): void {
    this.settings = settings;
  }

  /** Largest timestamp for retention: max record timestamp, else the file's modification time. */
  get largestTimestamp(): number {
    return this.maxTimestampSoFar >= 0 ? this.maxTimestampSoFar : this.lastModifiedMs;
  }

  indexesFull(): boolean {
    return this.offsetIndex.isFull() || this.timeIndex.isFull();
  }

  /**
   * Positional write of the whole buffer. Synchronous on purpose: a write into the page cache
   * takes microseconds, while a libuv thread-pool round trip costs ~40 µs per call and caps
   * sequential append throughput far below the disk's (see docs/storage.md). Replaceable so
   * tests can inject faults such as ENOSPC.
   */
  writeAt = (buf: Buffer, position: number): void => {
    let done = 0;
    while (done < buf.length) done += writeSync(this.file.fd, buf, done, buf.length - done, position + done);
  };

  /**
   * Appends already validated batches (offsets assigned) at the end. On a write error the file is
   * cut back to its previous length and the error re-thrown; in-memory state is untouched.
   */
  append(buf: Buffer, now: number): void {
    const startPos = this.size;
    try {
      this.writeAt(buf, startPos);
    } catch (err) {
      try {
        ftruncateSync(this.file.fd, startPos);
      } catch {
        // Nothing more we can do; recovery validates the tail anyway.
      }
      throw err;
    }
    this.onAppended(buf, startPos, now);
  }

  /** Bookkeeping after buf was written at startPos: indexes, timestamps, sizes. */
  private onAppended(buf: Buffer, startPos: number, now: number): void {
    let i = 0;
    while (i < buf.length) {
      const size = batchSize(buf, i);
      this.trackBatch(buf, i, startPos + i, size);
      i += size;
    }
    this.size = startPos + buf.length;
    this.unflushedBytes += buf.length;
    this.lastModifiedMs = now;
  }

  /** Index and timestamp bookkeeping for one batch located at filePos (Kafka's LogSegment.append rule). */
  trackBatch(buf: Buffer, start: number, filePos: number, size: number): void {
    const lastOffset = lastOffsetAt(buf, start);
    const maxTs = maxTimestampAt(buf, start);
    if (this.rollingBasedTimestamp === undefined) this.rollingBasedTimestamp = maxTs;
    if (maxTs > this.maxTimestampSoFar) {
      this.maxTimestampSoFar = maxTs;
      this.offsetOfMaxTimestampSoFar = lastOffset;
    }
    if (this.bytesSinceLastIndexEntry > this.settings.indexIntervalBytes) {
      this.offsetIndex.append(lastOffset, filePos);
      this.timeIndex.maybeAppend(this.maxTimestampSoFar, this.offsetOfMaxTimestampSoFar);
      this.bytesSinceLastIndexEntry = 0;
    }
    this.bytesSinceLastIndexEntry += size;
    this.nextOffset = lastOffset + 1;
  }

  /**
   * Loads the index files and the segment's end state without validating every batch (used
   * after a clean shutdown or below the recovery point). Falls back to a rebuild when an index
   * is missing or insane. Returns the index problem found, if any.
   */
  async loadFast(): Promise<string | undefined> {
    // Nothing to index (an idle partition never wrote its index files): the fresh state is right.
    if (this.size === 0) return undefined;
    const offsetProblem = await this.offsetIndex.load(this.size);
    const lastIndexed = offsetProblem ? undefined : this.offsetIndex.lookup(Number.MAX_SAFE_INTEGER);
    // Scan only from the last index entry to learn the next offset and trailing timestamps.
    const from = lastIndexed?.position ?? 0;
    if (offsetProblem) {
      await this.rebuildIndexes(false);
      return `offset index ${offsetProblem.reason}`;
    }
    this.nextOffset = this.baseOffset;
    const { endPos, firstTs } = await this.scanTail(from);
    if (endPos !== this.size) {
      // Tail does not parse: the fast path cannot be trusted, validate everything.
      await this.rebuildIndexes(false);
      return `segment tail at ${endPos} does not parse`;
    }
    const lastOffset = this.nextOffset - 1;
    this.bytesSinceLastIndexEntry = this.size - from;
    const timeProblem = await this.timeIndex.load(Math.max(lastOffset, this.baseOffset));
    if (timeProblem) {
      await this.rebuildIndexes(false);
      return `time index ${timeProblem.reason}`;
    }
    const lastTime = this.timeIndex.lastEntry();
    if (lastTime && lastTime.timestamp > this.maxTimestampSoFar) {
      this.maxTimestampSoFar = lastTime.timestamp;
      this.offsetOfMaxTimestampSoFar = lastTime.offset;
    }
    this.rollingBasedTimestamp = firstTs ?? (await this.firstBatchMaxTimestamp());
    return undefined;
  }

  private async firstBatchMaxTimestamp(): Promise<number | undefined> {
    const head = await readAt(this.file, 0, RECORD_BATCH_OVERHEAD);
    return head.length === RECORD_BATCH_OVERHEAD ? maxTimestampAt(head, 0) : undefined;
  }

  /**
   * Validates every batch (CRC included, unless validate=false) from the start, rebuilding both
   * indexes, and truncates at the first invalid byte. See segment-rebuild.ts.
   */
  rebuildIndexes(validate: boolean, maxBatchBytes = Number.MAX_SAFE_INTEGER): Promise<RecoveryResult> {
    return rebuildSegment(this, validate, maxBatchBytes);
  }

  /** Forgets indexes and tracked state before a full rebuild (internal to segment-rebuild.ts). */
  resetTracking(): void {
    this.offsetIndex.reset();
    this.timeIndex.reset();
    this.maxTimestampSoFar = -1;
    this.offsetOfMaxTimestampSoFar = this.baseOffset;
    this.rollingBasedTimestamp = undefined;
    this.bytesSinceLastIndexEntry = 0;
    this.nextOffset = this.baseOffset;
  }

  /** First batch whose last offset >= target, starting from the index's hint. */
  async findBatch(target: number, sizeLimit: number): Promise<BatchLocation | undefined> {
    const hint = this.offsetIndex.lookup(target);
    let found: BatchLocation | undefined;
    await scanBatchHeaders(
      this.file,
      hint.position,
      sizeLimit,
      (buf, start, pos, size) => {
        const last = lastOffsetAt(buf, start);
        if (last < target) return true;
        found = { position: pos, size, baseOffset: baseOffsetAt(buf, start), lastOffset: last, maxTimestamp: maxTimestampAt(buf, start) };
        return false;
      },
      16 * 1024,
    );
    return found;
  }

  /**
   * Bytes of whole batches starting with the batch containing `target` (or the first after it),
   * at most maxBytes unless the first batch alone is larger and minOneBatch is set. Batches with
   * lastOffset >= maxOffset are excluded. Undefined when the segment has nothing at/after target.
   */
  async read(target: number, maxBytes: number, sizeLimit: number, maxOffset: number | undefined, minOneBatch: boolean): Promise<SegmentRead | undefined> {
    const first = await this.findBatch(target, sizeLimit);
    if (!first) return undefined;
    if (maxOffset !== undefined && first.lastOffset >= maxOffset) return { records: Buffer.alloc(0), firstBatchOffset: first.baseOffset };
    const window = Math.min(Math.max(maxBytes, 0), sizeLimit - first.position);
    if (first.size > window) {
      if (!minOneBatch) return { records: Buffer.alloc(0), firstBatchOffset: first.baseOffset };
      return { records: await readAt(this.file, first.position, first.size), firstBatchOffset: first.baseOffset };
    }
    // Fetch-sized reads come from a pool the network layer refills once the bytes are sent.
    const data = await readAt(this.file, first.position, window, acquireReadBuffer);
    let end = 0;
    while (end + RECORD_BATCH_OVERHEAD <= data.length) {
      const size = batchSize(data, end);
      if (end + size > data.length) break;
      if (maxOffset !== undefined && lastOffsetAt(data, end) >= maxOffset) break;
      end += size;
    }
    return { records: data.subarray(0, end), firstBatchOffset: first.baseOffset };
  }

  /** Cuts the segment so no batch with lastOffset >= offset remains. Returns bytes removed. */
  async truncateTo(offset: number): Promise<number> {
    const loc = await this.findBatch(offset, this.size);
    if (!loc) return 0;
    const removed = this.size - loc.position;
    await this.file.truncate(loc.position);
    this.offsetIndex.truncateToOffset(offset);
    this.timeIndex.truncateToOffset(offset);
    await this.txnIndex.truncateTo(offset);
    // Recompute the tail state from what remains (short scan from the last index entry).
    this.size = loc.position;
    await this.rebuildTailState();
    return removed;
  }

  private async rebuildTailState(): Promise<void> {
    const hint = this.offsetIndex.lookup(Number.MAX_SAFE_INTEGER);
    const last = this.timeIndex.lastEntry();
    this.maxTimestampSoFar = last?.timestamp ?? -1;
    this.offsetOfMaxTimestampSoFar = last?.offset ?? this.baseOffset;
    this.nextOffset = this.baseOffset;
    this.rollingBasedTimestamp = undefined;
    if (hint.position > 0) this.nextOffset = hint.offset + 1;
    if (this.size === 0) return;
    this.rollingBasedTimestamp = await this.firstBatchMaxTimestamp();
    const { endPos } = await this.scanTail(hint.position);
    this.bytesSinceLastIndexEntry = endPos - hint.position;
  }

  /**
   * Reads the batch headers from `from` to the end: the max timestamp and the next offset follow
   * them. Returns where the parse stopped and, when it starts at 0, the first batch's max timestamp.
   */
  private async scanTail(from: number): Promise<{ endPos: number; firstTs: number | undefined }> {
    let endPos = from;
    let firstTs: number | undefined;
    await scanBatchHeaders(this.file, from, this.size, (buf, start, pos, size) => {
      const lastOffset = lastOffsetAt(buf, start);
      const ts = maxTimestampAt(buf, start);
      if (pos === 0) firstTs = ts;
      if (ts > this.maxTimestampSoFar) {
        this.maxTimestampSoFar = ts;
        this.offsetOfMaxTimestampSoFar = lastOffset;
      }
      this.nextOffset = lastOffset + 1;
      endPos = pos + size;
      return true;
    });
    return { endPos, firstTs };
  }

  /** Adds the final time index entry Kafka writes when a segment stops being active. */
  sealTimeIndex(): void {
    if (this.maxTimestampSoFar >= 0) this.timeIndex.maybeAppend(this.maxTimestampSoFar, this.offsetOfMaxTimestampSoFar, true);
  }

  async flush(): Promise<void> {
    await this.file.datasync();
    await this.offsetIndex.persist(true);
    await this.timeIndex.persist(true);
    await this.txnIndex.flush();
    this.unflushedBytes = 0;
  }

  /** Writes index files without forcing them to disk (they are rebuildable caches). */
  async persistIndexes(): Promise<void> {
    await this.offsetIndex.persist(false);
    await this.timeIndex.persist(false);
  }

  async close(): Promise<void> {
    await this.txnIndex.close().catch(() => undefined);
    await this.file.close().catch(() => undefined);
  }

  async fileSizeOnDisk(): Promise<number> {
    return (await stat(this.logFile)).size;
  }
}
