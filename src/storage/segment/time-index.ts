/**
 * Sparse time index of one segment: entries of (timestamp int64, relative offset int32),
 * 12 bytes each, Kafka's `.timeindex` format. An entry is only added when the timestamp grows,
 * so lookups by timestamp are monotonic. Like the offset index, a rebuildable cache of the log.
 */
import { FIRST_INDEX_ALLOCATION_ENTRIES, IndexFile, type IndexFileProblem } from './index-file.js';

export const TIME_INDEX_ENTRY = 12;

export class TimeIndex extends IndexFile {
  constructor(file: string, baseOffset: number, maxIndexBytes: number) {
    super(file, baseOffset, maxIndexBytes, TIME_INDEX_ENTRY, FIRST_INDEX_ALLOCATION_ENTRIES);
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

  load(lastOffsetInLog: number): Promise<IndexFileProblem | undefined> {
    let prevTs = -Infinity;
    let prevRel = -1;
    return this.loadEntries((data, at, i) => {
      const ts = Number(data.readBigInt64BE(at));
      const rel = data.readInt32BE(at + 8);
      if (ts <= prevTs || rel < prevRel || rel < 0 || this.baseOffset + rel > lastOffsetInLog) {
        return `entry ${i} (${ts} -> ${rel}) is out of order or beyond the log`;
      }
      prevTs = ts;
      prevRel = rel;
      return undefined;
    });
  }

  /** Adds (timestamp, offset) when the timestamp is larger than the last entry's. */
  maybeAppend(timestamp: number, offset: number, force = false): boolean {
    if (this.isFull() && !force) return false;
    if (this.count > 0) {
      if (timestamp <= this.timestampAt(this.count - 1)) return false;
      if (offset < this.offsetAt(this.count - 1)) return false;
    }
    if (this.count >= this.maxEntries) return false;
    const at = this.nextSlot();
    this.buf.writeBigInt64BE(BigInt(timestamp), at);
    this.buf.writeInt32BE(offset - this.baseOffset, at + 8);
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
    this.truncateToCount(n);
  }
}
