/**
 * A shard's checkpoint entries on their way to the directory's one writer (SharedDirFiles on the
 * main thread). The contract is the one a file write gives a single-threaded LogManager: the
 * promise resolves once the main thread has written the files that hold these entries (or newer
 * ones of this shard), and rejects when that write failed. Keeping it also keeps the main thread
 * from drowning: at most one report per directory is in flight, and every report asked for while
 * it is coalesces into the next, which carries the latest entries only. Without this, deleting a
 * 2,000-partition topic posted 2,000 reports of every entry (about 1,000,000 in all), and the
 * main thread's event loop stalled for over a second deserialising them.
 */
import type { DirCheckpointEntries } from '../../../storage/manager/log-dir-checkpoints.js';
import type { FromShard } from './shard-protocol.js';

interface Waiter {
  resolve: () => void;
  reject: (err: Error) => void;
}

interface DirHandover {
  /** Waiting on the report in flight. */
  inFlight: Waiter[];
  /** The latest entries asked for while a report was in flight, and who waits on them. */
  next?: { entries: DirCheckpointEntries; waiters: Waiter[] };
}

export class CheckpointHandover {
  /** Reports posted (tests, diagnostics). */
  reports = 0;
  private readonly dirs = new Map<string, DirHandover>();

  constructor(private readonly post: (m: FromShard) => void) {}

  /** Hands this shard's entries for `dir` (all of them: they replace what it handed before). */
  write(dir: string, entries: DirCheckpointEntries): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const waiter = { resolve, reject };
      const d = this.dirs.get(dir);
      if (!d) {
        this.dirs.set(dir, { inFlight: [waiter] });
        this.send(dir, entries);
      } else if (d.next) {
        d.next.entries = entries;
        d.next.waiters.push(waiter);
      } else {
        d.next = { entries, waiters: [waiter] };
      }
    });
  }

  /** The main thread's answer to this shard's report in flight for `dir`: whether the files were written. */
  written(dir: string, ok: boolean): void {
    const d = this.dirs.get(dir);
    if (!d) return;
    const settled = d.inFlight;
    const next = d.next;
    if (next) {
      this.dirs.set(dir, { inFlight: next.waiters });
      this.send(dir, next.entries);
    } else {
      this.dirs.delete(dir);
    }
    for (const w of settled) {
      if (ok) w.resolve();
      else w.reject(new Error(`the main thread could not write the checkpoint files of ${dir}`));
    }
  }

  private send(dir: string, entries: DirCheckpointEntries): void {
    this.reports++;
    this.post({ type: 'checkpoints', dir, entries });
  }
}
