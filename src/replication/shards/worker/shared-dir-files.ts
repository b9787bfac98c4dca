/**
 * The main thread's side of the log directories when shard workers own the logs: the one writer
 * of each directory's shared files. It holds the .lock, reads the clean shutdown marker before
 * the workers start (they recover or not by it) and removes it once they have loaded, and writes
 * the four checkpoint files (recovery points, log start offsets, replication offsets, cleaner
 * offsets) from what each shard reports (its entries for the directory, all of them, each time;
 * a shard keeps one report per directory in flight until the write that holds it is answered).
 * The files keep the single-thread format with every shard's entries, so a restart with another
 * shard count (or none) reads them whole: each shard takes the entries of the partitions it owns.
 * Until a shard has reported, the entries the files had for its partitions are kept as read.
 */
import path from 'node:path';
import { DirLock } from '../../../storage/manager/lock.js';
import { ensureDirectory } from '../../../storage/manager/log-dirs.js';
import { hadCleanShutdown, markCleanShutdown, removeCleanShutdownMarker } from '../../../storage/manager/clean-shutdown.js';
import {
  CoalescingWrites,
  readDirCheckpoints,
  writeDirCheckpointEntries,
  type CheckpointEntry,
  type DirCheckpointEntries,
} from '../../../storage/manager/log-dir-checkpoints.js';
import type { StorageLogger } from '../../../storage/logger.js';
import { shardOf } from '../partition-shards.js';

type Kind = keyof DirCheckpointEntries;
const KINDS: readonly Kind[] = ['recoveryPoints', 'logStartOffsets', 'highWatermarks', 'cleanerOffsets'];

interface Dir {
  dir: string;
  lock: DirLock;
  hadCleanShutdown: boolean;
  /** What the files said at start, per kind. */
  read: DirCheckpointEntries;
  /** Each shard's latest report. */
  reports: (DirCheckpointEntries | undefined)[];
  /** Each shard's shutdown: whether it closed every log cleanly and handed its last entries. */
  closedCleanly: (boolean | undefined)[];
  writes: CoalescingWrites;
}

export class SharedDirFiles {
  /** Checkpoint file sets written (tests, diagnostics). */
  writes = 0;
  /** Reports received from the shards, and the entries they held (tests, diagnostics: each was deserialised on this thread). */
  reports = 0;
  reportedEntries = 0;

  private constructor(
    private readonly dirs: Map<string, Dir>,
    private readonly shards: number,
    private readonly logger: StorageLogger,
  ) {}

  /** Locks every directory (refusing, as LogManager does, one another broker holds) and reads what the workers need first. */
  static async open(logDirs: readonly string[], shards: number, logger: StorageLogger): Promise<SharedDirFiles> {
    const dirs = new Map<string, Dir>();
    try {
      for (const raw of logDirs) {
        const dir = path.resolve(raw);
        await ensureDirectory(dir);
        const lock = await DirLock.acquire(dir);
        const files = await readDirCheckpoints(dir, logger);
        const asEntries = (m: Map<string, number>): CheckpointEntry[] => [...m].map(([key, offset]) => ({ ...splitKey(key), offset }));
        dirs.set(dir, {
          dir,
          lock,
          hadCleanShutdown: await hadCleanShutdown(dir),
          read: {
            recoveryPoints: asEntries(files.recoveryPoints),
            logStartOffsets: asEntries(files.logStartOffsets),
            highWatermarks: asEntries(files.highWatermarks),
            cleanerOffsets: asEntries(files.cleanerOffsets),
          },
          reports: new Array<DirCheckpointEntries | undefined>(shards).fill(undefined),
          closedCleanly: new Array<boolean | undefined>(shards).fill(undefined),
          writes: new CoalescingWrites(),
        });
      }
    } catch (err) {
      for (const d of dirs.values()) await d.lock.release();
      throw err;
    }
    return new SharedDirFiles(dirs, shards, logger);
  }

  /** Per directory (resolved path), whether it had a clean shutdown marker: the workers' recovery reads it. */
  cleanShutdowns(): Record<string, boolean> {
    return Object.fromEntries([...this.dirs.values()].map((d) => [d.dir, d.hadCleanShutdown]));
  }

  get logDirs(): string[] {
    return [...this.dirs.keys()];
  }

  /** Every worker has loaded its logs: from here on a crash must not pass for a clean shutdown. */
  async loaded(): Promise<void> {
    for (const d of this.dirs.values()) await removeCleanShutdownMarker(d.dir);
  }

  /**
   * A shard's entries for `dir`: the files are rewritten (writes coalesce). Resolves once a
   * write that holds them is done (false when it failed): the shard's answer
   * (checkpoint-handover.ts).
   */
  report(shard: number, dir: string, entries: DirCheckpointEntries): Promise<boolean> {
    const d = this.dirs.get(dir);
    if (!d) return Promise.resolve(false);
    this.reports++;
    for (const kind of KINDS) this.reportedEntries += entries[kind].length;
    d.reports[shard] = entries;
    return this.write(d);
  }

  closed(shard: number, dir: string, unclean: readonly string[], checkpointed: boolean): void {
    const d = this.dirs.get(dir);
    if (d) d.closedCleanly[shard] = unclean.length === 0 && checkpointed;
  }

  /** After the workers ended: the last write, the clean shutdown marker when every shard closed cleanly, the locks released. */
  async shutdown(): Promise<void> {
    for (const d of this.dirs.values()) {
      const written = await this.write(d);
      const unclean = d.closedCleanly.flatMap((ok, shard) => (ok ? [] : [`the logs of shard ${shard}`]));
      await markCleanShutdown(d.dir, unclean, written, this.logger);
      await d.lock.release();
    }
  }

  private write(d: Dir): Promise<boolean> {
    return d.writes.run(async () => {
      this.writes++;
      try {
        await writeDirCheckpointEntries(d.dir, this.merged(d));
        return true;
      } catch (err) {
        this.logger.warn(`writing checkpoints in ${d.dir} failed: ${String(err)}`);
        return false;
      }
    });
  }

  /** Every shard's latest entries, and for a shard that has not reported yet the entries read at start for its partitions. */
  private merged(d: Dir): DirCheckpointEntries {
    const out: DirCheckpointEntries = { recoveryPoints: [], logStartOffsets: [], highWatermarks: [], cleanerOffsets: [] };
    for (const kind of KINDS) {
      for (const e of d.read[kind]) if (d.reports[shardOf(e.topic, e.partition, this.shards)] === undefined) out[kind].push(e);
      for (const r of d.reports) if (r) out[kind].push(...r[kind]);
    }
    return out;
  }
}

/** "topic-partition" (a topic name may itself hold dashes: the partition is after the last). */
function splitKey(key: string): { topic: string; partition: number } {
  const at = key.lastIndexOf('-');
  return { topic: key.slice(0, at), partition: Number(key.slice(at + 1)) };
}
