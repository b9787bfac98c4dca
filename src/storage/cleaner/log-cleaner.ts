/**
 * The background cleaner of compacted logs. Off the request path: driven by the manager's
 * timer, one log at a time, yielding to the event loop between segments. Each cleaned segment
 * replaces the original atomically:
 *
 *   write <base>.log.cleaned (fsync) → rename to <base>.log.swap (the commit point) →
 *   under the log lock: delete the old indexes, rename .swap over <base>.log, rebuild indexes.
 *
 * Recovery finishes a committed swap and discards a `.cleaned` file, so a crash while cleaning
 * loses nothing. Readers holding the old segment keep reading its (unlinked) file until it is
 * closed after file.delete.delay.ms.
 */
import { open, rename, unlink } from 'node:fs/promises';
import { setImmediate as yieldToEventLoop } from 'node:timers/promises';
import { fsyncDir } from '../checkpoint/atomic-file.js';
import { tpKey } from '../../common/partition-keys.js';
import { isCompacted } from '../config.js';
import { LogSegment } from '../segment/log-segment.js';
import { CLEANED_SUFFIX, SWAP_SUFFIX } from '../segment/segment-names.js';
import type { UnifiedLog } from '../log/unified-log.js';
import type { StorageLogger } from '../logger.js';
import { planCleaning } from './cleanable.js';
import { CleanedTransactions } from './cleaned-txns.js';
import type { AbortedTxn } from '../segment/transaction-index.js';
import { addToOffsetMap, rewriteSegment, type CleanerReadOptions } from './segment-rewriter.js';
import { readDecompressionCap } from '../../protocol/records/read-limits.js';
import type { CleanerSlots } from './cleaner-slots.js';

export class LogCleaner {
  /** First dirty offset per log ("topic-partition"), persisted as cleaner-offset-checkpoint. */
  readonly firstDirtyOffsets = new Map<string, number>();
  private current: { log: UnifiedLog; aborted: boolean } | undefined;
  private running: Promise<unknown> = Promise.resolve();
  private stopped = false;

  constructor(
    private readonly logs: () => UnifiedLog[],
    private readonly logger: StorageLogger,
    private readonly clock: () => number,
    /** Shard workers: the broker-wide cap on logs cleaned at once (cleaner-slots.ts); absent: this cleaner's one log at a time is the cap. */
    private readonly slots?: CleanerSlots,
  ) {}

  /** Cleans the dirtiest eligible log, if any. Returns how many logs were cleaned (0 or 1). */
  cleanOnce(): Promise<number> {
    const run = this.running.then(() => this.cleanDirtiest());
    this.running = run.catch(() => undefined);
    return run;
  }

  private async cleanDirtiest(): Promise<number> {
    if (this.stopped) return 0;
    const now = this.clock();
    let best: { log: UnifiedLog; ratio: number } | undefined;
    for (const log of this.logs()) {
      if (!isCompacted(log.config) || log.offline) continue;
      const plan = planCleaning(log, this.firstDirtyOffsets.get(log.name), now);
      if (plan.dirtyBytes === 0 || plan.dirtyRatio < log.config.minCleanableDirtyRatio) continue;
      if (!best || plan.dirtyRatio > best.ratio) best = { log, ratio: plan.dirtyRatio };
    }
    if (!best) return 0;
    if (this.slots && !this.slots.tryTake()) return 0;
    try {
      await this.cleanLog(best.log);
    } finally {
      this.slots?.give();
    }
    return 1;
  }

  /** Cleans one log now, whatever its dirty ratio (tests and admin use). */
  async cleanLog(log: UnifiedLog): Promise<void> {
    const now = this.clock();
    const plan = planCleaning(log, this.firstDirtyOffsets.get(log.name), now);
    if (plan.segments.length === 0) return;
    const state = { log, aborted: false };
    this.current = state;
    // Batches that cannot be decoded within the cap stay byte for byte; each is reported once
    // per cleaning of the log (the offset-map pass and the rewrite pass both meet it).
    const reported = new Set<bigint>();
    const readOpts: CleanerReadOptions = {
      maxDecompressedBytes: readDecompressionCap(log.config.maxMessageBytes),
      onUndecodable: (position, baseOffset, err) => {
        if (reported.has(baseOffset)) return;
        reported.add(baseOffset);
        this.logger.warn(`cleaner keeps the batch at offset ${baseOffset} (position ${position}) of ${log.name} as is: it cannot be decoded (${err.message})`);
      },
    };
    try {
      // Aborted transactions from every segment's .txnindex (a marker may lie past what is
      // cleaned while its records do not): each pass walks in offset order and learns from them
      // which batches are aborted (Kafka's collectAbortedTransactions + CleanedTransactionMetadata).
      const aborted = log.segments.flatMap((s) => s.txnIndex.all()).filter((t) => t.firstOffset < plan.firstUncleanable);
      const mapStart = plan.dirtySegments[0]?.baseOffset ?? plan.firstUncleanable;
      const mapTxns = new CleanedTransactions(aborted.filter((t) => t.lastOffset >= mapStart));
      const map = new Map<string, number>();
      for (const seg of plan.dirtySegments) {
        await addToOffsetMap(seg, map, readOpts, mapTxns);
        await yieldToEventLoop();
        if (state.aborted) return;
      }
      const txns = new CleanedTransactions(aborted);
      const lastRecordsOfActiveProducers = log.lastRecordsOfActiveProducers();
      let kept = 0;
      let dropped = 0;
      for (const seg of plan.segments) {
        if (state.aborted) return;
        const { bytes, stats, abortedTxns } = await rewriteSegment(seg, map, {
          now,
          deleteRetentionMs: log.config.deleteRetentionMs,
          txns,
          lastRecordsOfActiveProducers,
          ...readOpts,
        });
        kept += stats.recordsKept;
        dropped += stats.recordsDropped;
        const indexChanged = !sameEntries(seg.txnIndex.all(), abortedTxns);
        if (stats.recordsDropped > 0 || stats.markersChanged > 0 || indexChanged) await this.swap(log, seg, bytes, abortedTxns, state);
        await yieldToEventLoop();
      }
      if (!state.aborted) {
        this.firstDirtyOffsets.set(log.name, plan.firstUncleanable);
        this.logger.info(
          `cleaned ${log.name} up to offset ${plan.firstUncleanable}: kept ${kept} records, removed ${dropped} (dirty ratio ${plan.dirtyRatio.toFixed(2)})`,
        );
      }
    } finally {
      this.current = undefined;
    }
  }

  private async swap(log: UnifiedLog, old: LogSegment, bytes: Buffer, abortedTxns: readonly AbortedTxn[], state: { aborted: boolean }): Promise<void> {
    const cleaned = old.logFile + CLEANED_SUFFIX;
    const fh = await open(cleaned, 'w');
    try {
      await fh.writeFile(bytes);
      await fh.sync();
    } catch (err) {
      // A full disk: a partial output would hold space until the next start. Remove it.
      await fh.close().catch(() => undefined);
      await unlink(cleaned).catch(() => undefined);
      throw err;
    }
    await fh.close();
    await log.local.replaceSegments(async (current) => {
      const idx = current.indexOf(old);
      // The segment was deleted or truncated meanwhile (retention, replica truncation): give up.
      if (state.aborted || idx < 0 || idx === current.length - 1 || old.size !== (await old.fileSizeOnDisk())) {
        await unlink(cleaned).catch(() => undefined);
        return undefined;
      }
      await rename(cleaned, old.logFile + SWAP_SUFFIX);
      await fsyncDir(log.dir);
      // Committed. Old indexes would describe the old file: remove them before the swap lands.
      await unlink(old.offsetIndex.file).catch(() => undefined);
      await unlink(old.timeIndex.file).catch(() => undefined);
      await rename(old.logFile + SWAP_SUFFIX, old.logFile);
      await fsyncDir(log.dir);
      const fresh = await LogSegment.open(log.dir, old.baseOffset, log.local.segmentSettings(), this.clock());
      // The aborts whose records were still there this round, as Kafka's cleaned segment's
      // index. Written after the swap: a crash between leaves the old entries, a superset whose
      // extra ones cover no record any more.
      await fresh.txnIndex.replaceAll(abortedTxns);
      await fresh.rebuildIndexes(false);
      fresh.sealTimeIndex();
      await fresh.persistIndexes();
      log.local.retireReplacedSegment(old);
      const next = [...current];
      next[idx] = fresh;
      return next;
    });
  }

  /** Stops cleaning `log` (it is being deleted) and waits for the cleaner to let go of it. */
  async abort(log: UnifiedLog): Promise<void> {
    if (this.current?.log === log) this.current.aborted = true;
    await this.running;
  }

  async shutdown(): Promise<void> {
    this.stopped = true;
    if (this.current) this.current.aborted = true;
    await this.running;
  }

  /** Seeds the first dirty offsets read from cleaner-offset-checkpoint. */
  seed(entries: Map<string, number>): void {
    for (const [k, v] of entries) this.firstDirtyOffsets.set(k, v);
  }

  static key(topic: string, partition: number): string {
    return tpKey(topic, partition);
  }
}

function sameEntries(a: readonly AbortedTxn[], b: readonly AbortedTxn[]): boolean {
  return (
    a.length === b.length && a.every((t, i) => t.producerId === b[i]!.producerId && t.firstOffset === b[i]!.firstOffset && t.lastOffset === b[i]!.lastOffset)
  );
}
