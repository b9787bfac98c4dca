/**
 * A leader's appends above its high watermark (end offset, bytes), oldest first: when the high
 * watermark moves, parked consumer fetches are told how many bytes became visible. Only kept
 * while followers are in the ISR; a leader alone in it moves the high watermark at each append.
 */

/** Appends remembered one by one; beyond this (followers lag, or ISR writes fail) they merge into the last entry. */
const MAX_ENTRIES = 1024;

export class UnreplicatedAppends {
  private entries: { end: number; bytes: number }[] = [];

  /** An append of `bytes` ending before `end` (its last offset + 1). */
  add(end: number, bytes: number): void {
    const last = this.entries.length >= MAX_ENTRIES ? this.entries[this.entries.length - 1] : undefined;
    if (last) {
      last.end = end;
      last.bytes += bytes;
    } else {
      this.entries.push({ end, bytes });
    }
  }

  /** Forgets the appends a high watermark of `hw` makes visible; returns their bytes. */
  takeCovered(hw: number): number {
    let bytes = 0;
    let i = 0;
    while (i < this.entries.length && this.entries[i]!.end <= hw) bytes += this.entries[i++]!.bytes;
    this.entries.splice(0, i);
    return bytes;
  }

  /** The log was cut at `logEnd`: appends past it are gone. */
  dropBeyond(logEnd: number): void {
    this.entries = this.entries.filter((u) => u.end <= logEnd);
  }

  /** This broker no longer leads. */
  clear(): void {
    this.entries = [];
  }
}
