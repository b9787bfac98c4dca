/**
 * Segments leaving a log (retention, truncation, cleaner swaps) are not closed at once: reads
 * that started before may still use them. Their files are renamed `.deleted` (or, for a
 * cleaner swap, already replaced) and closed/unlinked after file.delete.delay.ms.
 */
import { rename, unlink } from 'node:fs/promises';
import type { LogSegment } from './log-segment.js';
import { DELETED_SUFFIX } from './segment-names.js';

export class SegmentRetirement {
  private readonly timers = new Set<NodeJS.Timeout>();
  private readonly retired = new Set<LogSegment>();

  has(seg: LogSegment): boolean {
    return this.retired.has(seg);
  }

  /** Renames the segment's files to `.deleted`, then closes and unlinks them after delayMs. */
  async delete(seg: LogSegment, delayMs: number): Promise<void> {
    this.retired.add(seg);
    const files = await renameSegmentFiles(seg, DELETED_SUFFIX);
    this.later(delayMs, async () => {
      await seg.close();
      await Promise.all(files.map((f) => unlink(f).catch(() => undefined)));
    });
  }

  /** The segment's file was replaced in place (cleaner swap): only close it later. */
  replaced(seg: LogSegment, delayMs: number): void {
    this.retired.add(seg);
    this.later(delayMs, () => seg.close());
  }

  private later(delayMs: number, fn: () => Promise<void>): void {
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      void fn();
    }, delayMs);
    timer.unref();
    this.timers.add(timer);
  }

  /** Closes everything now (log shutdown); `.deleted` files left are removed at next start-up. */
  async closeAll(): Promise<void> {
    for (const t of this.timers) clearTimeout(t);
    this.timers.clear();
    for (const s of this.retired) await s.close();
  }
}

/** Renames all four files of the segment by appending `suffix`; returns the new names of those that existed. */
async function renameSegmentFiles(seg: LogSegment, suffix: string): Promise<string[]> {
  const renamed: string[] = [];
  await seg.txnIndex.close().catch(() => undefined);
  for (const file of [seg.logFile, seg.offsetIndex.file, seg.timeIndex.file, seg.txnIndex.file]) {
    try {
      await rename(file, file + suffix);
      // Reads still in flight may reopen the log file: under its new name.
      if (file === seg.file.path) seg.file.path = file + suffix;
      renamed.push(file + suffix);
    } catch {
      // An index file may not exist yet; the log file rename is what matters.
    }
  }
  return renamed;
}
