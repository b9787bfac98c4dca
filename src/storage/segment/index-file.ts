/**
 * What the offset and time indexes share: fixed-size entries in a grow-only buffer, loaded from
 * and appended to their file, rewritten whole after a truncation. Subclasses say how an entry is
 * laid out and what makes a loaded file trustworthy.
 */
import { open } from 'node:fs/promises';
import { readWholeFile } from '../checkpoint/whole-file.js';
import { errnoOf } from '../errors.js';
import { Mutex } from '../../common/mutex.js';
import { shortLivedFiles } from './segment-file.js';

export interface IndexFileProblem {
  reason: string;
}

/** The buffer of an index without entries (shared: nothing is ever written into it). */
const NO_ENTRIES = Buffer.alloc(0);

/**
 * Entries room is made for at an index's first append; the buffer then doubles. Small on
 * purpose: most segments of a broker with thousands of partitions hold a handful of entries
 * (the closing time-index entry of every written segment), and 256 or 512 entries each came to
 * 7 KB per partition, 70 MB at 10,000 partitions. Doubling from 8 to a full 10 MB index copies
 * less than the index's own size in all.
 */
export const FIRST_INDEX_ALLOCATION_ENTRIES = 8;

export abstract class IndexFile {
  protected buf: Buffer;
  protected count = 0;
  private persistedCount = 0;
  /** Entries known to be on disk (fsynced); a sync with nothing new skips the fsync. */
  private syncedCount = 0;
  /** The file exists (loaded or written once): a flush need not create it. */
  private onDisk = false;
  private dirtyFromStart = false;
  /** Bumped by every truncation, so a persist racing one knows its write is stale. */
  private truncations = 0;
  private readonly persistLock = new Mutex();
  readonly maxEntries: number;

  constructor(
    readonly file: string,
    readonly baseOffset: number,
    maxIndexBytes: number,
    private readonly entrySize: number,
    private readonly initialEntries: number,
  ) {
    this.maxEntries = Math.max(1, Math.floor(maxIndexBytes / entrySize));
    // Nothing until the first entry: most segments of a broker with thousands of partitions are
    // empty active segments, and 7 KB of index buffers each came to 62 MB at 8,600 partitions.
    this.buf = NO_ENTRIES;
  }

  get entries(): number {
    return this.count;
  }
  get sizeInBytes(): number {
    return this.count * this.entrySize;
  }
  isFull(): boolean {
    return this.count >= this.maxEntries;
  }

  /**
   * Reads the file and takes its entries when every one passes `checkEntry` (called with the
   * file's bytes and the entry's byte position); otherwise returns why it is not trustworthy.
   */
  protected async loadEntries(checkEntry: (data: Buffer, at: number, i: number) => string | undefined): Promise<IndexFileProblem | undefined> {
    let data: Buffer;
    try {
      data = await readWholeFile(this.file);
    } catch (err) {
      if (errnoOf(err) === 'ENOENT') return { reason: 'missing' };
      return { reason: `unreadable (${String(err)})` };
    }
    if (data.length % this.entrySize !== 0) return { reason: `size ${data.length} is not a multiple of ${this.entrySize}` };
    const n = data.length / this.entrySize;
    if (n > this.maxEntries) return { reason: `${n} entries exceed the maximum ${this.maxEntries}` };
    for (let i = 0; i < n; i++) {
      const problem = checkEntry(data, i * this.entrySize, i);
      if (problem !== undefined) return { reason: problem };
    }
    // Exactly the entries read, in a buffer of its own (what was read is a slice of a pooled one,
    // which it would keep alive): most loaded segments are inactive and never grow, the active
    // one doubles on its next append.
    if (n === 0) this.buf = NO_ENTRIES;
    else {
      this.buf = Buffer.allocUnsafeSlow(data.length);
      data.copy(this.buf);
    }
    this.count = n;
    this.persistedCount = n;
    this.syncedCount = 0; // read back, not known to be durable
    this.onDisk = true;
    return undefined;
  }

  /** Byte position for one more entry, growing the buffer as needed; the caller writes it and counts it. */
  protected nextSlot(): number {
    if ((this.count + 1) * this.entrySize > this.buf.length) {
      const grown = Buffer.alloc(Math.min(this.maxEntries * this.entrySize, Math.max(this.buf.length * 2, this.initialEntries * this.entrySize)));
      this.buf.copy(grown, 0, 0, this.count * this.entrySize);
      this.buf = grown;
    }
    return this.count * this.entrySize;
  }

  /** Keeps the first `n` entries; the file is rewritten whole on the next persist. */
  protected truncateToCount(n: number): void {
    this.count = n;
    this.persistedCount = Math.min(this.persistedCount, n);
    this.syncedCount = Math.min(this.syncedCount, n);
    this.dirtyFromStart = true;
    this.truncations++;
  }

  reset(): void {
    this.truncateToCount(0);
  }

  /** Writes unwritten entries (the whole file after a truncation), optionally fsyncing. */
  persist(sync: boolean): Promise<void> {
    return this.persistLock.run(() => this.persistNow(sync));
  }

  private async persistNow(sync: boolean): Promise<void> {
    // Nothing to sync when every entry is already durable, or there is none: an index without
    // entries loses nothing (shutting down 20,000 small partitions must not cost 40,000 fsyncs).
    const needSync = sync && (this.dirtyFromStart || this.syncedCount !== this.count) && this.count > 0;
    // A flush still creates a missing file, so an idle segment does not look damaged at start-up.
    if (!this.dirtyFromStart && this.persistedCount === this.count && !needSync && (this.onDisk || !sync)) return;
    const truncationsBefore = this.truncations;
    const fromStart = this.dirtyFromStart;
    const from = fromStart ? 0 : this.persistedCount;
    const upto = this.count;
    const bytes = Buffer.from(this.buf.subarray(from * this.entrySize, upto * this.entrySize));
    this.dirtyFromStart = false;
    try {
      await shortLivedFiles.run(async () => {
        const fh = await open(this.file, fromStart ? 'w' : 'a');
        try {
          if (bytes.length > 0) await fh.write(bytes, 0, bytes.length);
          if (needSync) await fh.datasync();
        } finally {
          await fh.close();
        }
      });
    } catch (err) {
      // The file may now hold less than before (a full disk): the next persist rewrites it whole.
      this.dirtyFromStart = true;
      this.persistedCount = 0;
      throw err;
    }
    // A truncation during the write re-marks the file dirty; otherwise what we wrote is durable.
    this.onDisk = true;
    if (this.truncations === truncationsBefore) {
      this.persistedCount = Math.max(this.persistedCount, upto);
      if (needSync) this.syncedCount = Math.max(this.syncedCount, upto);
    }
  }

  contents(): Buffer {
    return this.buf.subarray(0, this.count * this.entrySize);
  }
}
