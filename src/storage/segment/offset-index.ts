/**
 * Sparse offset index of one segment: entries of (relative offset int32, file position int32),
 * big-endian, 8 bytes each, in Kafka's `.index` format. Kept in memory (a grow-only buffer);
 * `persist` writes the entries not yet on disk. The file is only a cache of the log: when it is
 * missing or fails the sanity check it is rebuilt from the segment.
 */
import { FIRST_INDEX_ALLOCATION_ENTRIES, IndexFile, type IndexFileProblem } from './index-file.js';

export type { IndexFileProblem } from './index-file.js';

export const OFFSET_INDEX_ENTRY = 8;

export class OffsetIndex extends IndexFile {
  constructor(file: string, baseOffset: number, maxIndexBytes: number) {
    super(file, baseOffset, maxIndexBytes, OFFSET_INDEX_ENTRY, FIRST_INDEX_ALLOCATION_ENTRIES);
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
  load(logSize: number): Promise<IndexFileProblem | undefined> {
    let prevRel = -1;
    let prevPos = -1;
    return this.loadEntries((data, at, i) => {
      const rel = data.readInt32BE(at);
      const pos = data.readInt32BE(at + 4);
      if (rel <= prevRel || pos <= prevPos || pos >= logSize) return `entry ${i} (${rel} -> ${pos}) is out of order or beyond the log`;
      prevRel = rel;
      prevPos = pos;
      return undefined;
    });
  }

  /** Adds an entry; offsets and positions must increase. Returns false when full or not increasing. */
  append(offset: number, position: number): boolean {
    if (this.isFull()) return false;
    const rel = offset - this.baseOffset;
    if (this.count > 0 && (rel <= this.relativeOffsetAt(this.count - 1) || position <= this.positionAt(this.count - 1))) return false;
    const at = this.nextSlot();
    this.buf.writeInt32BE(rel, at);
    this.buf.writeInt32BE(position, at + 4);
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
    this.truncateToCount(this.floorSlot(offset - 1) + 1);
  }
}
