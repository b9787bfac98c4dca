/**
 * When a local log's data reaches the disk: the recovery point (everything below it is fsynced,
 * so a restart after a crash recovers only what lies past it), the flush.messages / flush.ms
 * policy, and the background flush of the segments a roll sealed.
 */
import type { LatencyHistogram } from '../../common/latency-histogram.js';
import type { LogSegment } from '../segment/log-segment.js';
import type { StorageLogger } from '../logger.js';

/** What the flusher reads of its log. */
export interface FlushedLog {
  readonly name: string;
  readonly logger: StorageLogger;
  readonly segments: readonly LogSegment[];
  readonly activeSegment: LogSegment;
  readonly logEndOffset: number;
  readonly offline: boolean;
}

/** Flushes that synced something: count, total and histogram of their time (Kafka's LogFlushRateAndTimeMs); one per log manager. */
export type FlushStats = LatencyHistogram;

/** How the log judges a segment and reports a failed or a good flush. */
export interface FlushHooks {
  /** Whether the segment left the log (retired): its flush failing is no one's problem. */
  isRetired(seg: LogSegment): boolean;
  /** The error to throw for a failed flush (the log's I/O-failure translation). */
  failure(err: unknown): Error;
  succeeded(): void;
  /** Where flushes that synced something are counted and timed. */
  readonly stats?: FlushStats | undefined;
}

export class LogFlusher {
  /** Everything below it is on disk. */
  recoveryPoint = 0;
  lastFlushMs: number;
  private unflushedMessages = 0;
  private background: Promise<void> = Promise.resolve();

  constructor(
    private readonly log: FlushedLog,
    private readonly clock: () => number,
    private readonly hooks: FlushHooks,
  ) {
    this.lastFlushMs = clock();
  }

  /** Counts appended records; true when flush.messages says to flush now. */
  appended(records: number, flushMessages: number): boolean {
    this.unflushedMessages += records;
    return this.unflushedMessages >= flushMessages;
  }

  /** flush.ms: records are waiting and the last flush is older than `flushMs`. */
  isDue(now: number, flushMs: number): boolean {
    return this.unflushedMessages > 0 && now - this.lastFlushMs >= flushMs;
  }

  /** A roll sealed `sealed`: it is flushed off the append path, and the recovery point follows to `upTo`. */
  flushSealed(sealed: LogSegment, upTo: number): void {
    this.background = this.background.then(async () => {
      try {
        if (!this.hooks.isRetired(sealed)) await sealed.flush();
        if (upTo > this.recoveryPoint) this.recoveryPoint = Math.min(upTo, this.log.logEndOffset);
      } catch (err) {
        if (!this.hooks.isRetired(sealed)) this.log.logger.warn(`flush of ${this.log.name} failed: ${String(err)}`);
      }
    });
  }

  /** Resolves once the background flushes queued so far are done. */
  settled(): Promise<void> {
    return this.background;
  }

  /**
   * The last flush of a closing log: after the background flushes, the active segment's time
   * index is sealed and everything synced. False when that failed or the log is offline: it was
   * not shut down cleanly and the next start must recover it.
   */
  async finalFlush(): Promise<boolean> {
    await this.settled();
    const log = this.log;
    if (log.offline) return false;
    log.activeSegment.sealTimeIndex();
    return this.flush().then(
      () => true,
      (err: unknown) => {
        log.logger.error(`final flush of ${log.name} failed: ${String(err)}`);
        return false;
      },
    );
  }

  /** fsyncs everything up to the log end and advances the recovery point. The caller holds the log's lock. */
  async flush(): Promise<void> {
    const log = this.log;
    if (log.offline) return;
    const upTo = log.logEndOffset;
    // As Kafka: nothing past the recovery point and nothing written since means nothing to sync
    // (an idle log costs no fsync, so shutting down 20,000 idle partitions stays fast).
    if (upTo <= this.recoveryPoint && log.segments.every((s) => s.unflushedBytes === 0)) {
      await log.activeSegment.persistIndexes().catch((err) => log.logger.warn(`cannot write indexes of ${log.name}: ${String(err)}`));
      this.flushed();
      return;
    }
    const started = performance.now();
    try {
      for (const s of log.segments) if (s.unflushedBytes > 0 || s === log.activeSegment) await s.flush();
    } catch (err) {
      throw this.hooks.failure(err);
    }
    this.hooks.stats?.observe(performance.now() - started);
    this.recoveryPoint = upTo;
    this.flushed();
    this.hooks.succeeded();
  }

  private flushed(): void {
    this.unflushedMessages = 0;
    this.lastFlushMs = this.clock();
  }
}
