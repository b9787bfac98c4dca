/**
 * The aborted transactions of one segment, Kafka's `.txnindex` format: 34-byte entries of
 * [int16 version = 0][int64 producerId][int64 firstOffset][int64 lastOffset][int64 lastStableOffset],
 * in the order their abort markers were written (so lastOffset never decreases). A read_committed
 * fetch asks which aborted transactions overlap the range it returns, and the consumer drops
 * their records. Unlike the offset and time indexes this one is not a cache of what the segment
 * holds: recovery rebuilds it by replaying the producers' markers (Partition.open).
 *
 * Entries are few (one per aborted transaction), so they are kept in memory; the file exists only
 * once a segment holds an abort, is appended to as markers arrive and rewritten after a truncation.
 */
import { open, rm, writeFile, type FileHandle } from 'node:fs/promises';
import { readWholeFile } from '../checkpoint/whole-file.js';

export const TXN_INDEX_ENTRY = 34;
const VERSION = 0;

export interface AbortedTxn {
  producerId: bigint;
  /** Offset of the transaction's first record in this partition. */
  firstOffset: number;
  /** Offset of its abort marker. */
  lastOffset: number;
  /** The partition's last stable offset when the marker was written. */
  lastStableOffset: number;
}

export class TransactionIndexError extends Error {
  override readonly name = 'TransactionIndexError';
}

export function encodeAbortedTxn(t: AbortedTxn): Buffer {
  const b = Buffer.allocUnsafe(TXN_INDEX_ENTRY);
  b.writeInt16BE(VERSION, 0);
  b.writeBigInt64BE(t.producerId, 2);
  b.writeBigInt64BE(BigInt(t.firstOffset), 10);
  b.writeBigInt64BE(BigInt(t.lastOffset), 18);
  b.writeBigInt64BE(BigInt(t.lastStableOffset), 26);
  return b;
}

function decodeAbortedTxn(b: Buffer, at: number): AbortedTxn {
  const version = b.readInt16BE(at);
  if (version !== VERSION) throw new TransactionIndexError(`unknown transaction index entry version ${version} at byte ${at}`);
  return {
    producerId: b.readBigInt64BE(at + 2),
    firstOffset: Number(b.readBigInt64BE(at + 10)),
    lastOffset: Number(b.readBigInt64BE(at + 18)),
    lastStableOffset: Number(b.readBigInt64BE(at + 26)),
  };
}

export class TransactionIndex {
  private entries: AbortedTxn[] = [];
  /**
   * Whether the file is on disk (read by load, or written since). A segment holding an abort
   * marker without one lost it: Partition.open rebuilds it.
   */
  fileExists = false;
  private handle: FileHandle | undefined;
  private dirty = false;

  constructor(
    readonly file: string,
    readonly baseOffset: number,
  ) {}

  /**
   * Reads the file if there is one (Kafka's sanityCheck: whole entries, known version, last
   * offsets in order). Throws TransactionIndexError on a corrupt file; the caller rebuilds it.
   */
  async load(): Promise<void> {
    let data: Buffer;
    try {
      data = await readWholeFile(this.file);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') {
        this.entries = [];
        this.fileExists = false;
        return;
      }
      throw err;
    }
    if (data.length % TXN_INDEX_ENTRY !== 0) {
      throw new TransactionIndexError(`${this.file}: ${data.length} bytes is not a whole number of ${TXN_INDEX_ENTRY}-byte entries`);
    }
    const entries: AbortedTxn[] = [];
    for (let at = 0; at < data.length; at += TXN_INDEX_ENTRY) {
      const t = decodeAbortedTxn(data, at);
      const prev = entries.at(-1);
      if (t.firstOffset > t.lastOffset || (prev && t.lastOffset < prev.lastOffset)) {
        throw new TransactionIndexError(`${this.file}: entry ${entries.length} (${t.firstOffset}..${t.lastOffset}) is out of order`);
      }
      entries.push(t);
    }
    this.entries = entries;
    this.fileExists = true;
  }

  get size(): number {
    return this.entries.length;
  }

  all(): readonly AbortedTxn[] {
    return this.entries;
  }

  /** Records an abort; its marker must not come before the last one recorded (Kafka's rule). */
  async append(t: AbortedTxn): Promise<void> {
    const last = this.entries.at(-1);
    if (last && t.lastOffset < last.lastOffset) {
      throw new TransactionIndexError(`aborted transaction ending at ${t.lastOffset} appended after one ending at ${last.lastOffset}`);
    }
    this.handle ??= await open(this.file, 'a');
    await this.handle.write(encodeAbortedTxn(t));
    this.fileExists = true;
    this.entries.push(t);
    this.dirty = true;
  }

  /**
   * The aborted transactions a fetch of [fetchOffset, upperBoundOffset) must report: those that
   * end at or after the fetch offset and began before the bound. `complete` says no later
   * segment can add any: an abort written when the last stable offset had already reached the
   * bound means every transaction open below the bound had ended by then.
   */
  collectAbortedTxns(fetchOffset: number, upperBoundOffset: number): { aborted: AbortedTxn[]; complete: boolean } {
    const aborted: AbortedTxn[] = [];
    for (const t of this.entries) {
      if (t.lastOffset >= fetchOffset && t.firstOffset < upperBoundOffset) aborted.push(t);
      if (t.lastStableOffset >= upperBoundOffset) return { aborted, complete: true };
    }
    return { aborted, complete: false };
  }

  /**
   * Replaces every entry (the cleaner keeps those whose transaction still had data). No entries:
   * no file, as for a segment that never held an abort. A crash mid-write leaves a file of the
   * wrong length, which the next start drops and rebuilds from the segment.
   */
  async replaceAll(entries: readonly AbortedTxn[]): Promise<void> {
    await this.closeHandle();
    this.entries = [...entries];
    this.fileExists = entries.length > 0;
    if (entries.length === 0) await rm(this.file, { force: true });
    else {
      const fh = await open(this.file, 'w');
      try {
        await fh.writeFile(Buffer.concat(entries.map(encodeAbortedTxn)));
        await fh.sync();
      } finally {
        await fh.close();
      }
    }
  }

  /** Drops aborts whose marker is at or after `offset` (the log was truncated there). */
  async truncateTo(offset: number): Promise<void> {
    const keep = this.entries.filter((t) => t.lastOffset < offset);
    if (keep.length === this.entries.length) return;
    await this.closeHandle();
    this.entries = keep;
    this.fileExists = keep.length > 0;
    if (keep.length === 0) await rm(this.file, { force: true });
    else await writeFile(this.file, Buffer.concat(keep.map(encodeAbortedTxn)));
  }

  async flush(): Promise<void> {
    if (!this.dirty || !this.handle) return;
    this.dirty = false;
    await this.handle.sync();
  }

  async close(): Promise<void> {
    await this.flush();
    await this.closeHandle();
  }

  /** Removes the file (segment deleted, or the index is being rebuilt). */
  async delete(): Promise<void> {
    await this.closeHandle();
    this.entries = [];
    this.fileExists = false;
    await rm(this.file, { force: true });
  }

  private async closeHandle(): Promise<void> {
    const h = this.handle;
    this.handle = undefined;
    this.dirty = false;
    await h?.close();
  }
}
