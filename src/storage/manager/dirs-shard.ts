/**
 * A LogManager that is one shard of a broker's logs (issue 26, docs/threads.md step 1: a shard
 * worker thread opens its own partitions' logs). It opens only the partitions `owns` accepts and
 * leaves each directory's shared files (.lock, meta.properties, the clean shutdown marker, the
 * four checkpoint files) to their one writer, the thread that holds the lock: this manager's
 * checkpoint entries and the outcome of its shutdown go there instead. The files keep today's
 * format and hold every shard's entries, so a restart with another shard count reads them whole.
 */
import type { DirCheckpointEntries } from './log-dir-checkpoints.js';

export interface DirsShard {
  owns(topic: string, partition: number): boolean;
  /** Whether `dir` had a clean shutdown marker when the lock holder opened it. */
  hadCleanShutdown(dir: string): boolean;
  /**
   * This shard's entries for `dir`, all of them (they replace what it handed before). Resolves,
   * as a file write would, once the lock holder has written files that hold them (or newer
   * ones); rejects when that write failed. The manager waits for it before its next write, so
   * writes asked for meanwhile share one hand-over.
   */
  writeCheckpoints(dir: string, entries: DirCheckpointEntries): Promise<void>;
  /** Shutdown: the logs of `dir` whose final flush failed, and whether the last checkpoint write went through. */
  closed(dir: string, unclean: readonly string[], checkpointed: boolean): void;
}
