/**
 * Sparse time index of one segment: entries of (timestamp int64, relative offset int32),
 * 12 bytes each, Kafka's `.timeindex` format. An entry is only added when the timestamp grows,
 * so lookups by timestamp are monotonic. Like the offset index, a rebuildable cache of the log.
 */
import { open, readFile } from 'node:fs/promises';
import { errnoOf } from './errors.js';
import { Mutex } from './mutex.js';
import type { IndexFileProblem } from './offset-index.js';

export const TIME_INDEX_ENTRY = 12;

export class TimeIndex {
  private buf: Buffer;
  private count = 0;
  private persistedCount = 0;
  private dirtyFromStart = false;
  readonly maxEntries: number;

  constructor(
    readonly file: string,
    readonly baseOffset: number,
    maxIndexBytes: number,
  ) {
    this.maxEntries = Math.max(1, Math.floor(maxIndexBytes / TIME_INDEX_ENTRY));
    this.buf = Buffer.alloc(Math.min(this.maxEntries, 256) * TIME_INDEX_ENTRY);
  }

  get entries(): number {
    return this.count;
  }
  isFull(): boolean {
    return this.count >= this.maxEntries;
  }
  timestampAt(i: number): number {
    return Number(this.buf.readBigInt64BE(i * TIME_INDEX_ENTRY));
  }
  offsetAt(i: number): number {
    return this.baseOffset + this.buf.readInt32BE(i * TIME_INDEX_ENTRY + 8);
  }
  lastEntry(): { timestamp: number; offset: number } | undefined {
    if (this.count === 0) return undefined;
    return { timestamp: this.timestampAt(this.count - 1), offset: this.offsetAt(this.count - 1) };
  }

  async load(lastOffsetInLog: number): Promise<IndexFileProblem | undefined> {
    let data: Buffer;
    try {
      data = await readFile(this.file);
    } catch (err) {
      if (errnoOf(err) === 'ENOENT') return { reason: 'missing' };
      return { reason: `unreadable (${String(err)})` };
    }
    if (data.length % TIME_INDEX_ENTRY !== 0) return { reason: `size ${data.length} is not a multiple of 12` };
    const n = data.length / TIME_INDEX_ENTRY;
    if (n > this.maxEntries) return { reason: `${n} entries exceed the maximum ${this.maxEntries}` };
    let prevTs = -Infinity;
    let prevRel = -1;
    for (let i = 0; i < n; i++) {
      const ts = Number(data.readBigInt64BE(i * 12));
      const rel = data.readInt32BE(i * 12 + 8);
      if (ts <= prevTs || rel < prevRel || rel < 0 || this.baseOffset + rel > lastOffsetInLog)
        return { reason: `entry ${i} (${ts} -> ${rel}) is out of order or beyond the log` };
      prevTs = ts;
      prevRel = rel;
    }
    this.buf = Buffer.alloc(Math.max(data.length, 256 * 12));
    data.copy(this.buf);
    this.count = n;
    this.persistedCount = n;
    return undefined;
  }

  /** Adds (timestamp, offset) when the timestamp is larger than the last entry's. */
  maybeAppend(timestamp: number, offset: number, force = false): boolean {
    if (this.isFull() && !force) return false;
    if (this.count > 0) {
      if (timestamp <= this.timestampAt(this.count - 1)) return false;
      if (offset < this.offsetAt(this.count - 1)) return false;
    }
    if (this.count >= this.maxEntries) return false;
    if ((this.count + 1) * TIME_INDEX_ENTRY > this.buf.length) {
      const grown = Buffer.alloc(Math.min(this.maxEntries * TIME_INDEX_ENTRY, this.buf.length * 2));
      this.buf.copy(grown, 0, 0, this.count * TIME_INDEX_ENTRY);
      this.buf = grown;
    }
    this.buf.writeBigInt64BE(BigInt(timestamp), this.count * TIME_INDEX_ENTRY);
    this.buf.writeInt32BE(offset - this.baseOffset, this.count * TIME_INDEX_ENTRY + 8);
    this.count++;
    return true;
  }

  /** Offset to start scanning from for the first record with timestamp >= target. */
  lookup(target: number): number {
    let lo = 0;
    let hi = this.count - 1;
    let found = -1;
    while (lo <= hi) {
      const mid = (lo + hi) >>> 1;
      if (this.timestampAt(mid) <= target) {
        found = mid;
        lo = mid + 1;
      } else hi = mid - 1;
    }
    return found < 0 ? this.baseOffset : this.offsetAt(found);
  }

  truncateToOffset(offset: number): void {
    let n = this.count;
    while (n > 0 && this.offsetAt(n - 1) >= offset) n--;
    this.count = n;
    this.persistedCount = Math.min(this.persistedCount, n);
    this.dirtyFromStart = true;
    this.truncations++;
  }

  reset(): void {
    this.count = 0;
    this.persistedCount = 0;
    this.dirtyFromStart = true;
    this.truncations++;
  }

  /** Writes unwritten entries (the whole file after a truncation), optionally fsyncing. */
  persist(sync: boolean): Promise<void> {
    return this.persistLock.run(() => this.persistNow(sync));
  }

  private readonly persistLock = new Mutex();

  private async persistNow(sync: boolean): Promise<void> {
    if (!this.dirtyFromStart && this.persistedCount === this.count && !sync) return;
    const truncationsBefore = this.truncations;
    const fromStart = this.dirtyFromStart;
    const from = fromStart ? 0 : this.persistedCount;
    const upto = this.count;
    const bytes = Buffer.from(this.buf.subarray(from * TIME_INDEX_ENTRY, upto * TIME_INDEX_ENTRY));
    this.dirtyFromStart = false;
    const fh = await open(this.file, fromStart ? 'w' : 'a');
    try {
      if (bytes.length > 0) await fh.write(bytes, 0, bytes.length);
      if (sync) await fh.datasync();
    } finally {
      await fh.close();
    }
    // A truncation during the write re-marks the file dirty; otherwise what we wrote is durable.
    if (this.truncations === truncationsBefore) this.persistedCount = Math.max(this.persistedCount, upto);
  }

  private truncations = 0;

  contents(): Buffer {
    return this.buf.subarray(0, this.count * TIME_INDEX_ENTRY);
  }
}
