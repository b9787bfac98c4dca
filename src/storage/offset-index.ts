/**
 * Sparse offset index of one segment: entries of (relative offset int32, file position int32),
 * big-endian, 8 bytes each, in Kafka's `.index` format. Kept in memory (a grow-only buffer);
 * `persist` writes the entries not yet on disk. The file is only a cache of the log: when it is
 * missing or fails the sanity check it is rebuilt from the segment.
 */
import { open, readFile } from 'node:fs/promises';
import { errnoOf } from './errors.js';
import { Mutex } from './mutex.js';

export const OFFSET_INDEX_ENTRY = 8;

export interface IndexFileProblem {
  reason: string;
}

export class OffsetIndex {
  private buf: Buffer;
  private count = 0;
  private persistedCount = 0;
  readonly maxEntries: number;

  constructor(
    readonly file: string,
    readonly baseOffset: number,
    maxIndexBytes: number,
  ) {
    this.maxEntries = Math.max(1, Math.floor(maxIndexBytes / OFFSET_INDEX_ENTRY));
    this.buf = Buffer.alloc(Math.min(this.maxEntries, 512) * OFFSET_INDEX_ENTRY);
  }

  get entries(): number {
    return this.count;
  }
  get sizeInBytes(): number {
    return this.count * OFFSET_INDEX_ENTRY;
  }
  isFull(): boolean {
    return this.count >= this.maxEntries;
  }

  relativeOffsetAt(i: number): number {
    return this.buf.readInt32BE(i * OFFSET_INDEX_ENTRY);
  }
  offsetAt(i: number): number {
    return this.baseOffset + this.relativeOffsetAt(i);
  }
  positionAt(i: number): number {
    return this.buf.readInt32BE(i * OFFSET_INDEX_ENTRY + 4);
  }
  lastOffset(): number {
    return this.count === 0 ? this.baseOffset : this.offsetAt(this.count - 1);
  }

  /** Loads the file; returns a problem description instead of entries when it is not trustworthy. */
  async load(logSize: number): Promise<IndexFileProblem | undefined> {
    let data: Buffer;
    try {
      data = await readFile(this.file);
    } catch (err) {
      if (errnoOf(err) === 'ENOENT') return { reason: 'missing' };
      return { reason: `unreadable (${String(err)})` };
    }
    if (data.length % OFFSET_INDEX_ENTRY !== 0) return { reason: `size ${data.length} is not a multiple of 8` };
    const n = data.length / OFFSET_INDEX_ENTRY;
    if (n > this.maxEntries) return { reason: `${n} entries exceed the maximum ${this.maxEntries}` };
    let prevRel = -1;
    let prevPos = -1;
    for (let i = 0; i < n; i++) {
      const rel = data.readInt32BE(i * 8);
      const pos = data.readInt32BE(i * 8 + 4);
      if (rel <= prevRel || pos <= prevPos || pos >= logSize) return { reason: `entry ${i} (${rel} -> ${pos}) is out of order or beyond the log` };
      prevRel = rel;
      prevPos = pos;
    }
    this.buf = Buffer.alloc(Math.max(data.length, 512 * 8));
    data.copy(this.buf);
    this.count = n;
    this.persistedCount = n;
    return undefined;
  }

  /** Adds an entry; offsets and positions must increase. Returns false when full or not increasing. */
  append(offset: number, position: number): boolean {
    if (this.isFull()) return false;
    const rel = offset - this.baseOffset;
    if (this.count > 0 && (rel <= this.relativeOffsetAt(this.count - 1) || position <= this.positionAt(this.count - 1))) return false;
    if ((this.count + 1) * OFFSET_INDEX_ENTRY > this.buf.length) {
      const grown = Buffer.alloc(Math.min(this.maxEntries * OFFSET_INDEX_ENTRY, this.buf.length * 2));
      this.buf.copy(grown, 0, 0, this.count * OFFSET_INDEX_ENTRY);
      this.buf = grown;
    }
    this.buf.writeInt32BE(rel, this.count * OFFSET_INDEX_ENTRY);
    this.buf.writeInt32BE(position, this.count * OFFSET_INDEX_ENTRY + 4);
    this.count++;
    return true;
  }

  /** Index of the largest entry whose offset is <= target, or -1. */
  private floorSlot(target: number): number {
    let lo = 0;
    let hi = this.count - 1;
    let found = -1;
    const rel = target - this.baseOffset;
    while (lo <= hi) {
      const mid = (lo + hi) >>> 1;
      if (this.relativeOffsetAt(mid) <= rel) {
        found = mid;
        lo = mid + 1;
      } else hi = mid - 1;
    }
    return found;
  }

  /** Position to start scanning for `target`: the largest indexed batch at or before it. */
  lookup(target: number): { offset: number; position: number } {
    const slot = this.floorSlot(target);
    if (slot < 0) return { offset: this.baseOffset, position: 0 };
    return { offset: this.offsetAt(slot), position: this.positionAt(slot) };
  }

  /** Drops entries for offsets >= offset (log truncation). */
  truncateToOffset(offset: number): void {
    const slot = this.floorSlot(offset - 1);
    this.count = slot + 1;
    this.persistedCount = Math.min(this.persistedCount, this.count);
    this.dirtyFromStart = true;
    this.truncations++;
  }

  reset(): void {
    this.count = 0;
    this.persistedCount = 0;
    this.dirtyFromStart = true;
    this.truncations++;
  }

  private dirtyFromStart = false;

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
    const bytes = Buffer.from(this.buf.subarray(from * OFFSET_INDEX_ENTRY, upto * OFFSET_INDEX_ENTRY));
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
    return this.buf.subarray(0, this.count * OFFSET_INDEX_ENTRY);
  }
}
