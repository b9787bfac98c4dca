/**
 * Segment `.log` files opened lazily under a process-wide budget of descriptors, so the number
 * of open files stays bounded whatever the number of partitions (20,000 partitions used to mean
 * 20,000 descriptors, EMFILE, and a broker refusing connections).
 *
 * A `SegmentFile` opens its file on first use and keeps the descriptor until the budget needs it
 * back: when more than `limit` files are open, the least recently used file that no operation is
 * using is closed (a clock sweep: a use sets one flag, so the append and fetch paths pay one field
 * test and one field write). The next use reopens it by path. An async operation pins the
 * descriptor for its duration, so it is never closed (and its number reused) under a read.
 *
 * Reopening by path is checked against the file's identity (device and inode): a segment whose
 * file was replaced in place (a cleaner swap) refuses to reopen rather than read the new file at
 * the old positions; renames done through segment-retirement.ts move the path along.
 */
import { Semaphore } from '../../common/mutex.js';
import { closeSync, fdatasync, fstat, fstatSync, ftruncate, open as openAsync, openSync, read, readFileSync, constants, type Stats } from 'node:fs';

/** Half the soft RLIMIT_NOFILE (Linux /proc), leaving the other half to sockets and short-lived files. */
export function defaultOpenFileBudget(): number {
  let soft = 1024;
  try {
    const m = /^Max open files\s+(\d+|unlimited)\s/m.exec(readFileSync('/proc/self/limits', 'utf8'));
    if (m) soft = m[1] === 'unlimited' ? 1 << 20 : Number(m[1]);
  } catch {
    // Not Linux: assume the common default.
  }
  return Math.max(16, Math.floor(soft / 2));
}

export class OpenFileBudget {
  private readonly open: SegmentFile[] = [];
  /** Openers waiting for a free slot; each returns true once it ran. */
  private readonly waiting: (() => boolean)[] = [];
  /** Slots promised to files being opened asynchronously (counted as open). */
  reserved = 0;
  private hand = 0;
  /** Files opened since start (first opens and reopens), for tests and diagnostics. */
  opens = 0;
  private limitValue: number | undefined;

  /** Most segment files open at once; derived from the open-file limit until set. */
  get limit(): number {
    return (this.limitValue ??= defaultOpenFileBudget());
  }
  set limit(n: number) {
    this.limitValue = Math.max(1, Math.floor(n));
    this.shrink();
  }

  get openCount(): number {
    return this.open.length;
  }

  /** Called by a file that just opened its descriptor. */
  added(f: SegmentFile): void {
    this.opens++;
    f.slot = this.open.length;
    this.open.push(f);
    this.shrink();
  }

  /** Called by a file that closed its descriptor. */
  removed(f: SegmentFile): void {
    const i = f.slot;
    if (i < 0) return;
    const last = this.open.pop()!;
    if (last !== f) {
      this.open[i] = last;
      last.slot = i;
    }
    f.slot = -1;
    if (this.hand >= this.open.length) this.hand = 0;
  }

  /**
   * Runs `open` (synchronously) at a moment a file fits under the limit: now, or once a busy file
   * is released. Async users (reads, syncs) come here, so even 20,000 concurrent background
   * flushes hold at most `limit` descriptors; the synchronous append path never waits (it goes
   * over by one at most, closed again by the next sweep). Check and open happen in one tick, so
   * concurrent callers cannot all see the same free slot.
   */
  whenRoom(open: () => void): Promise<void> | undefined {
    if (this.waiting.length === 0 && this.tryOpen(open)) return undefined;
    return new Promise<void>((resolve, reject) => {
      this.waiting.push(() => {
        if (!this.tryOpen(open, reject)) return false;
        resolve();
        return true;
      });
    });
  }

  private tryOpen(open: () => void, onError?: (err: unknown) => void): boolean {
    this.shrink(this.limit - 1 - this.reserved);
    if (this.open.length + this.reserved >= this.limit) return false;
    if (!onError) {
      open();
      return true;
    }
    try {
      open();
    } catch (err) {
      onError(err);
    }
    return true;
  }

  /** Called when a file's last pin is released: close what is over the limit, let waiters open. */
  unpinned(): void {
    if (this.open.length > this.limit) this.shrink();
    while (this.waiting.length > 0 && this.waiting[0]!()) this.waiting.shift();
  }

  /** Closes idle files (clock sweep) until at most `target` are open or all the rest are in use. */
  private shrink(target = this.limit): void {
    const limit = Math.max(0, target);
    // Enough steps for a turn that only clears "recently used" flags, a turn that closes, and
    // the skips over pinned files (closing moves the last file under the hand).
    let budget = this.open.length * 3 + 1;
    while (this.open.length > limit && budget-- > 0) {
      if (this.hand >= this.open.length) this.hand = 0;
      const f = this.open[this.hand]!;
      if (f.pins > 0) {
        this.hand++;
      } else if (f.referenced) {
        f.referenced = false;
        this.hand++;
      } else {
        f.closeDescriptor(); // removes it from `open`; the hand now points at the next file
      }
    }
  }
}

/** The budget every segment file of this process draws on (descriptors are a process resource). */
export const segmentFiles = new OpenFileBudget();

/**
 * Short-lived files (checkpoints, leader-epoch files, producer snapshots, index writes) open at
 * once, process-wide: one produce to 20,000 new partitions writes 20,000 leader-epoch files, and
 * unbounded that is 20,000 descriptors at the same moment (EMFILE).
 */
export const shortLivedFiles = new Semaphore(64);

function fsCall<T>(fn: (cb: (err: NodeJS.ErrnoException | null, value: T) => void) => void): Promise<T> {
  return new Promise((resolve, reject) => fn((err, value) => (err ? reject(err) : resolve(value))));
}

function closedError(path: string, why: string): NodeJS.ErrnoException {
  const err: NodeJS.ErrnoException = new Error(`segment file ${path} ${why}`);
  err.code = 'EBADF';
  return err;
}

export class SegmentFile {
  private descriptor = -1;
  /** Async operations using the descriptor now; a pinned file is never closed by the budget. */
  pins = 0;
  /** Used since the clock hand last passed. */
  referenced = false;
  /** Position in the budget's list of open files, -1 when closed. */
  slot = -1;
  private closed = false;
  private identity: { dev: number; ino: number } | undefined;

  private constructor(
    public path: string,
    private readonly budget: OpenFileBudget,
  ) {}

  /**
   * Opens (creating if absent) the file once the budget has room, with its stats. The open itself
   * is asynchronous (a slot is reserved meanwhile): creating thousands of partitions, or rolling
   * segments in a tight append loop, must not hold the event loop in open(2).
   */
  static async open(path: string, budget: OpenFileBudget = segmentFiles): Promise<{ file: SegmentFile; stats: Stats }> {
    const waiting = budget.whenRoom(() => {
      budget.reserved++;
    });
    if (waiting) await waiting;
    let fd = -1;
    let stats: Stats;
    try {
      // Read-write without O_APPEND, so positional writes are honoured.
      fd = await fsCall<number>((cb) => openAsync(path, constants.O_RDWR | constants.O_CREAT, 0o644, cb));
      stats = await fsCall<Stats>((cb) => fstat(fd, cb));
    } catch (err) {
      if (fd >= 0) closeSync(fd);
      budget.reserved--;
      budget.unpinned();
      throw err;
    }
    budget.reserved--;
    const f = new SegmentFile(path, budget);
    f.identity = { dev: stats.dev, ino: stats.ino };
    f.adopt(fd);
    // The reservation is over: waiters may find room now (the new file is idle and closable).
    budget.unpinned();
    return { file: f, stats };
  }

  /** Opens (creating if absent) the file now, whatever the budget, and returns it with its stats. */
  static openNow(path: string, budget: OpenFileBudget = segmentFiles): { file: SegmentFile; stats: Stats } {
    const f = new SegmentFile(path, budget);
    // Read-write without O_APPEND, so positional writes are honoured.
    const fd = openSync(path, constants.O_RDWR | constants.O_CREAT, 0o644);
    let stats: Stats;
    try {
      stats = fstatSync(fd);
    } catch (err) {
      closeSync(fd);
      throw err;
    }
    f.identity = { dev: stats.dev, ino: stats.ino };
    f.adopt(fd);
    return { file: f, stats };
  }

  get isOpen(): boolean {
    return this.descriptor >= 0;
  }

  /**
   * The descriptor, reopened if the budget closed it. For synchronous use only (the append's
   * writeSync): nothing can close it before the caller's synchronous code ends.
   */
  get fd(): number {
    this.referenced = true;
    if (this.descriptor < 0) this.reopen();
    return this.descriptor;
  }

  private adopt(fd: number): void {
    this.descriptor = fd;
    this.referenced = true;
    // Pinned while the budget makes room, so the file just opened is never the one closed.
    this.pins++;
    try {
      this.budget.added(this);
    } finally {
      this.pins--;
    }
  }

  private reopen(): void {
    if (this.closed) throw closedError(this.path, 'is closed');
    const fd = openSync(this.path, constants.O_RDWR);
    const st = fstatSync(fd);
    if (this.identity && (st.dev !== this.identity.dev || st.ino !== this.identity.ino)) {
      closeSync(fd);
      this.closed = true;
      throw closedError(this.path, 'was replaced on disk');
    }
    this.adopt(fd);
  }

  /** Closes the descriptor now (budget eviction); the file reopens on its next use. */
  closeDescriptor(): void {
    const fd = this.descriptor;
    if (fd < 0) return;
    this.descriptor = -1;
    this.budget.removed(this);
    try {
      closeSync(fd);
    } catch {
      // EIO on close of a read/write file: nothing useful to do, the data path reports errors itself.
    }
  }

  /** Runs `op` with a descriptor that stays open until it settles. */
  private async pinned<T>(op: (fd: number) => Promise<T>): Promise<T> {
    if (this.descriptor >= 0) {
      this.referenced = true;
      this.pins++;
    } else {
      // Reopen and pin in the same tick the budget found room (throws if the file is gone).
      const waiting = this.budget.whenRoom(() => {
        void this.fd;
        this.pins++;
      });
      if (waiting) await waiting;
    }
    try {
      return await op(this.descriptor);
    } finally {
      this.pins--;
      if (this.pins === 0) {
        if (this.closed) this.closeDescriptor();
        this.budget.unpinned();
      }
    }
  }

  read(buffer: Buffer, offset: number, length: number, position: number): Promise<{ bytesRead: number; buffer: Buffer }> {
    return this.pinned((fd) => fsCall<number>((cb) => read(fd, buffer, offset, length, position, cb)).then((bytesRead) => ({ bytesRead, buffer })));
  }

  stat(): Promise<Stats> {
    return this.pinned((fd) => fsCall<Stats>((cb) => fstat(fd, cb)));
  }

  truncate(length: number): Promise<void> {
    return this.pinned((fd) => fsCall<void>((cb) => ftruncate(fd, length, (err) => cb(err, undefined))));
  }

  /** fdatasync. It syncs the file, not the descriptor: a reopened one syncs what an evicted one wrote. */
  datasync(): Promise<void> {
    return this.pinned((fd) => fsCall<void>((cb) => fdatasync(fd, (err) => cb(err, undefined))));
  }

  /** Closes for good: later uses fail (EBADF) instead of reopening. Waits for nothing in flight. */
  async close(): Promise<void> {
    this.closed = true;
    if (this.pins === 0) this.closeDescriptor();
  }
}
