/**
 * All logs of the broker across its log directories: locking, start-up recovery, checkpoints,
 * periodic retention / flush / cleaning, and offline-directory tracking.
 */
import { mkdir, rename, rm } from 'node:fs/promises';
import path from 'node:path';
import { readMetaProperties, writeMetaProperties } from '../checkpoint/checkpoint-files.js';
import { hadCleanShutdown, markCleanShutdown, removeCleanShutdownMarker } from './clean-shutdown.js';
import { deleteDirName, findPartitionDirs } from './partition-dirs.js';
import { tpKey } from '../../common/partition-keys.js';
import type { LogConfig } from '../config.js';
import { LogCleaner } from '../cleaner/log-cleaner.js';
import type { CleanerSlots } from '../cleaner/cleaner-slots.js';
import { LogDirLockedError } from '../errors.js';
import { DirLock } from './lock.js';
import { ensureDirectory } from './log-dirs.js';
import { CoalescingWrites, dirCheckpointEntries, readDirCheckpoints, writeDirCheckpoints } from './log-dir-checkpoints.js';
import type { DirsShard } from './dirs-shard.js';
import { LocalLog } from '../log/local-log.js';
import { silentLogger, type StorageLogger } from '../logger.js';
import { applyRetention } from './retention.js';
import { FailureLog } from '../../common/failure-log.js';
import { LatencyHistogram } from '../../common/latency-histogram.js';
import { forEachConcurrently } from '../../common/concurrency.js';
import { defaultOpenFileBudget, segmentFiles } from '../segment/segment-file.js';
import { UnifiedLog } from '../log/unified-log.js';
import type { FlushStats } from '../log/log-flush.js';

export interface LogManagerOptions {
  logDirs: string[];
  defaults: LogConfig;
  logger?: StorageLogger;
  retentionCheckIntervalMs?: number;
  cleanerEnabled?: boolean;
  /** log.flush.offset.checkpoint.interval.ms (and log start offset checkpoints). Default 60000. */
  checkpointIntervalMs?: number;
  /** How often flush.ms is checked. Default 1000. */
  flushCheckIntervalMs?: number;
  /** log.cleaner.backoff.ms. Default 15000. */
  cleanerBackoffMs?: number;
  /** One shard of the broker's logs: the broker-wide cap on logs cleaned at once (log.cleaner.threads), shared with the other shards. */
  cleanerSlots?: CleanerSlots;
  /**
   * The broker's logs: a log's high watermark is replication's to set; until it is (or a
   * checkpoint had it), it stays at the log start, and so does the last stable offset the cleaner
   * must not pass. Default false (storage alone): every appended offset counts as committed.
   */
  highWatermarkSetByOwner?: boolean;
  clock?: () => number;
  /** Per-topic overrides (from the metadata store) applied when existing logs are loaded. */
  topicConfig?: (topic: string) => Partial<LogConfig> | undefined;
  /** Logs recovered in parallel per directory (num.recovery.threads.per.data.dir). Default 4. */
  recoveryThreads?: number;
  /** Written as meta.properties into each log directory that has none (broker.id, cluster.id…). */
  metaProperties?: Record<string, string>;
  /** At most one line per log directory per this interval about failing appends (or flushes). Default 10000. */
  failureLogIntervalMs?: number;
  /**
   * Segment files open at once, process-wide (log.segment.max.open.files); idle ones are closed
   * and reopened on demand. Undefined or <= 0: half the open-file limit.
   */
  maxOpenSegmentFiles?: number;
  /** One shard of the broker's logs (a shard worker's): only its partitions, no shared file written here (dirs-shard.ts). */
  shard?: DirsShard;
}

export interface LogDirState {
  dir: string;
  online: boolean;
  error?: string;
  logs: { topic: string; partition: number; size: number; offsetLag: number }[];
}

interface DirState {
  dir: string;
  lock?: DirLock;
  online: boolean;
  error?: string;
  hadCleanShutdown: boolean;
  /** The directory's checkpoint writes, one at a time. */
  checkpoints: CoalescingWrites;
}

const SHUTDOWN_CONCURRENCY = 16;
/** Logs loaded at once after a clean shutdown (no recovery: a few small reads each). */
const CLEAN_LOAD_CONCURRENCY = 32;

export class LogManager {
  private readonly dirs: DirState[] = [];
  private readonly logs = new Map<string, { log: UnifiedLog; dir: DirState }>();
  /**
   * Deletions under way, by partition: a log created again under the same name waits for them,
   * or it would open the old files and then lose its directory to the deletion's rename.
   */
  private readonly deleting = new Map<string, Promise<void>>();
  private readonly timers: NodeJS.Timeout[] = [];
  readonly logger: StorageLogger;
  readonly cleaner: LogCleaner;
  private closed = false;
  /** Flushes of this manager's logs that synced something, and their time (the metrics read it). */
  readonly flushStats: FlushStats = new LatencyHistogram();
  /** Times a directory's checkpoint files were written (diagnostics, tests). */
  checkpointWrites = 0;
  private readonly clock: () => number;
  /** Rate-limits the lines about failing appends and flushes: one per directory per interval. */
  private readonly failureLog: FailureLog;

  private constructor(private readonly opts: LogManagerOptions) {
    this.logger = opts.logger ?? silentLogger;
    this.clock = opts.clock ?? Date.now;
    this.failureLog = new FailureLog(this.logger, this.clock, opts.failureLogIntervalMs);
    this.cleaner = new LogCleaner(() => this.allLogs(), this.logger, this.clock, opts.cleanerSlots);
  }

  static async open(opts: LogManagerOptions): Promise<LogManager> {
    const max = opts.maxOpenSegmentFiles ?? -1;
    segmentFiles.limit = max > 0 ? max : defaultOpenFileBudget();
    const mgr = new LogManager(opts);
    try {
      for (const dir of opts.logDirs) await mgr.openDir(path.resolve(dir));
    } catch (err) {
      for (const d of mgr.dirs) await d.lock?.release();
      throw err;
    }
    mgr.startTimers();
    return mgr;
  }

  private async openDir(dir: string): Promise<void> {
    const state: DirState = { dir, online: true, hadCleanShutdown: false, checkpoints: new CoalescingWrites() };
    this.dirs.push(state);
    try {
      await ensureDirectory(dir);
      if (!this.opts.shard) state.lock = await DirLock.acquire(dir);
      if (state.lock?.pidWritten === false) {
        this.logger.warn(
          `the disk of ${dir} is full: its .lock file could not get this broker's PID, so another broker started on it would take the lock as stale`,
        );
      }
    } catch (err) {
      if (err instanceof LogDirLockedError) throw err;
      this.takeOffline(state, err);
      return;
    }
    try {
      if (this.opts.metaProperties && (await readMetaProperties(dir)) === undefined) {
        await writeMetaProperties(dir, this.opts.metaProperties);
      }
      const shard = this.opts.shard;
      state.hadCleanShutdown = shard ? shard.hadCleanShutdown(dir) : await hadCleanShutdown(dir);
      const checkpoints = await readDirCheckpoints(dir, this.logger);
      this.cleaner.seed(checkpoints.cleanerOffsets);
      const found = (await findPartitionDirs(dir)).filter((p) => !shard || shard.owns(p.topic, p.partition));
      const started = this.clock();
      // Like num.recovery.threads.per.data.dir: a few logs recover at once. After a clean shutdown
      // nothing is recovered, a log only reads a few small files: more at once keep the I/O
      // threads busy while this thread parses (10,000 logs: 9.7 s with 4 at once, at load 17).
      const atOnce = Math.max(1, this.opts.recoveryThreads ?? 4, state.hadCleanShutdown ? CLEAN_LOAD_CONCURRENCY : 0);
      // One config per topic, not per log: resolving it (overrides over defaults) was 5% of loading 1 x 10,000.
      const configs = new Map<string, LogConfig>();
      await forEachConcurrently(found, atOnce, async ({ topic, partition }) => {
        const key = tpKey(topic, partition);
        let config = configs.get(topic);
        if (config === undefined) configs.set(topic, (config = { ...this.opts.defaults, ...(this.opts.topicConfig?.(topic) ?? {}) }));
        const log = await this.openLog(state, topic, partition, config, {
          recoveryPoint: checkpoints.recoveryPoints.get(key),
          logStartOffset: checkpoints.logStartOffsets.get(key),
          highWatermark: checkpoints.highWatermarks.get(key),
        });
        this.logs.set(key, { log, dir: state });
      });
      this.logger.info(
        `loaded ${this.logsIn(state).length} logs from ${dir} in ${this.clock() - started} ms (${found.length === 0 ? 'nothing to recover' : state.hadCleanShutdown ? 'clean shutdown' : 'unclean shutdown'})`,
      );
      // From here on a crash must not be mistaken for a clean shutdown.
      if (!shard) await removeCleanShutdownMarker(dir);
      await this.writeCheckpoints(state);
    } catch (err) {
      this.takeOffline(state, err);
    }
  }

  /** Opens the local log (recovering it) and its producer state; `checkpointed` is what the directory's checkpoints say of it. */
  private async openLog(
    state: DirState,
    topic: string,
    partition: number,
    config: LogConfig,
    checkpointed: { recoveryPoint?: number | undefined; logStartOffset?: number | undefined; highWatermark?: number | undefined },
    hadCleanShutdown = state.hadCleanShutdown,
  ): Promise<UnifiedLog> {
    const { recoveryPoint, logStartOffset } = checkpointed;
    const local = await LocalLog.open({
      dir: path.join(state.dir, tpKey(topic, partition)),
      topic,
      partition,
      config,
      logger: this.logger,
      recoveryPoint,
      logStartOffset,
      hadCleanShutdown,
      clock: this.clock,
      onIoError: (_log, err) => this.takeOffline(state, err),
      onLogStartOffsetChanged: () => void this.writeCheckpoints(state).catch(() => undefined),
      failureLog: this.failureLog,
      flushStats: this.flushStats,
    });
    try {
      return await UnifiedLog.open(local, {
        checkpointedHighWatermark: checkpointed.highWatermark,
        highWatermarkSetByOwner: this.opts.highWatermarkSetByOwner ?? false,
      });
    } catch (err) {
      await local.close().catch(() => undefined);
      throw err;
    }
  }

  private logsIn(state: DirState): UnifiedLog[] {
    return [...this.logs.values()].filter((e) => e.dir === state).map((e) => e.log);
  }

  /** Marks a directory offline (one error line); its logs refuse reads and appends from now on. */
  takeOffline(state: DirState, err: unknown): void {
    if (!state.online) return;
    state.online = false;
    state.error = (err as Error)?.message ?? String(err);
    this.logger.error(`log directory ${state.dir} is offline: ${state.error}`);
    for (const log of this.logsIn(state)) log.local.offline = true;
  }

  getLog(topic: string, partition: number): UnifiedLog | undefined {
    return this.logs.get(tpKey(topic, partition))?.log;
  }

  allLogs(): UnifiedLog[] {
    return [...this.logs.values()].filter((e) => e.dir.online).map((e) => e.log);
  }

  async createLog(topic: string, partition: number, cfg: Partial<LogConfig> = {}): Promise<UnifiedLog> {
    const key = tpKey(topic, partition);
    for (let pending = this.deleting.get(key); pending; pending = this.deleting.get(key)) await pending.catch(() => undefined);
    const existing = this.logs.get(key);
    if (existing) {
      if (Object.keys(cfg).length > 0) existing.log.updateConfig(cfg);
      return existing.log;
    }
    const online = this.dirs.filter((d) => d.online);
    if (online.length === 0) throw new Error('no online log directory to create a log in');
    // Put the new log in the directory holding the fewest logs (Kafka's default placement).
    const state = online.reduce((a, b) => (this.logsIn(b).length < this.logsIn(a).length ? b : a));
    const logDir = path.join(state.dir, key);
    const made = await mkdir(logDir, { recursive: true });
    let log: UnifiedLog;
    try {
      log = await this.openLog(state, topic, partition, { ...this.opts.defaults, ...cfg }, {}, false);
    } catch (err) {
      // Leave nothing behind (EMFILE, ENOSPC...): a directory this call made goes again.
      if (made !== undefined) await rm(logDir, { recursive: true, force: true }).catch(() => undefined);
      throw err;
    }
    this.logs.set(key, { log, dir: state });
    return log;
  }

  async deleteLog(topic: string, partition: number): Promise<void> {
    const key = tpKey(topic, partition);
    const entry = this.logs.get(key);
    if (!entry) return;
    this.logs.delete(key);
    const done: Promise<void> = this.deleteLogFiles(key, entry).finally(() => {
      if (this.deleting.get(key) === done) this.deleting.delete(key);
    });
    this.deleting.set(key, done);
    await done;
  }

  private async deleteLogFiles(key: string, entry: { log: UnifiedLog; dir: DirState }): Promise<void> {
    this.cleaner.firstDirtyOffsets.delete(key);
    await this.cleaner.abort(entry.log);
    await entry.log.close();
    const target = path.join(path.dirname(entry.log.dir), deleteDirName(entry.log.topic, entry.log.partition));
    await rename(entry.log.dir, target);
    void rm(target, { recursive: true, force: true });
    // Not awaited: deletions one after the other (the undo of a large CreatePartitions) share the
    // next write instead of rewriting every log's entry once per deletion. A crash before it
    // leaves entries of deleted logs in the files, which nothing reads.
    void this.writeCheckpoints(entry.dir);
  }

  /** The log's high watermark as set (UnifiedLog.updateHighWatermark) or checkpointed; undefined when none is known or the log is not open. */
  checkpointedHighWatermark(topic: string, partition: number): number | undefined {
    return this.getLog(topic, partition)?.checkpointedHighWatermark;
  }

  /** Each log directory and whether it is online (Kafka's LogDirectoryOffline gauges), without listing logs. */
  logDirsOnline(): { dir: string; online: boolean }[] {
    return this.dirs.map((d) => ({ dir: d.dir, online: d.online }));
  }

  logDirsState(): LogDirState[] {
    return this.dirs.map((d) => ({
      dir: d.dir,
      online: d.online,
      ...(d.error !== undefined ? { error: d.error } : {}),
      logs: d.online
        ? this.logsIn(d).map((log) => ({
            topic: log.topic,
            partition: log.partition,
            size: log.size,
            offsetLag: Math.max(0, (log.checkpointedHighWatermark ?? log.logEndOffset) - log.logEndOffset),
          }))
        : [],
    }));
  }

  /**
   * Writes the directory's checkpoint files, one write at a time: a call made while a write is
   * queued and not started shares it (the queued write reads the state when it starts). False
   * (after a warning) when one could not be written; never rejects.
   */
  private writeCheckpoints(state: DirState): Promise<boolean> {
    return state.checkpoints.run(async () => {
      if (!state.online) return false;
      this.checkpointWrites++;
      try {
        const shard = this.opts.shard;
        if (shard) await shard.writeCheckpoints(state.dir, dirCheckpointEntries(this.logsIn(state), this.cleaner.firstDirtyOffsets));
        else await writeDirCheckpoints(state.dir, this.logsIn(state), this.cleaner.firstDirtyOffsets);
        return true;
      } catch (err) {
        this.logger.warn(`writing checkpoints in ${state.dir} failed: ${String(err)}`);
        return false;
      }
    });
  }

  /** Runs the retention check once over every log (also called by the timer). */
  async runRetention(): Promise<number> {
    let deleted = 0;
    for (const log of this.allLogs()) {
      try {
        deleted += await applyRetention(log.local, this.clock());
      } catch (err) {
        this.logger.warn(`retention of ${log.name} failed: ${String(err)}`);
      }
    }
    return deleted;
  }

  private startTimers(): void {
    const every = (ms: number, fn: () => Promise<unknown>): void => {
      let running = false;
      const t = setInterval(() => {
        if (running || this.closed) return;
        running = true;
        void fn()
          .catch((err) => this.logger.warn(`storage background task failed: ${String(err)}`))
          .finally(() => (running = false));
      }, ms);
      t.unref();
      this.timers.push(t);
    };
    every(this.opts.retentionCheckIntervalMs ?? 300000, () => this.runRetention());
    every(this.opts.checkpointIntervalMs ?? 60000, () => Promise.all(this.dirs.map((d) => this.writeCheckpoints(d))));
    every(this.opts.flushCheckIntervalMs ?? 1000, async () => {
      const now = this.clock();
      // A failing flush is logged (rate-limited) by the log itself; keep going with the others.
      for (const log of this.allLogs()) if (log.config.flushMs < Number.MAX_SAFE_INTEGER) await log.local.flushIfDue(now).catch(() => undefined);
    });
    if (this.opts.cleanerEnabled ?? true) every(this.opts.cleanerBackoffMs ?? 15000, () => this.cleaner.cleanOnce());
  }

  async shutdown(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    for (const t of this.timers) clearInterval(t);
    await this.cleaner.shutdown();
    for (const state of this.dirs) {
      const logs = this.logsIn(state);
      const unclean: string[] = [];
      // Several at once: concurrent fsyncs share journal commits (8 cost about as much as 1),
      // which keeps SIGTERM with thousands of written partitions within seconds.
      await forEachConcurrently(logs, SHUTDOWN_CONCURRENCY, async (log) => {
        if (!(await log.close())) unclean.push(log.name);
      });
      if (state.online) {
        const checkpointed = await this.writeCheckpoints(state);
        if (this.opts.shard) this.opts.shard.closed(state.dir, unclean, checkpointed);
        else await markCleanShutdown(state.dir, unclean, checkpointed, this.logger);
      }
      await state.lock?.release();
    }
  }
}
