/**
 * How produce bytes cross to a shard worker without a structured-clone copy (docs/threads.md
 * section 2): records in shared memory (the broker's Produce frames at num.io.threads > 1) are
 * sent as a window of it and nothing moves, each shard holding that memory until it answers
 * (SharedRecordsLender); records in an ArrayBuffer of their own that only one shard of this request
 * reads are moved (transfer list: the caller's views of it become empty, the caller gives the
 * bytes up with the call); anything else (a slice of Node's 8 KiB pool, which cannot be moved,
 * or a frame whose buffer holds parts for several shards) is copied once into an ArrayBuffer of
 * its own, which is moved. The stats count each way's bytes, so a test or bench sees which ran.
 */
import type { RecordsWindow } from './shard-protocol.js';

export interface HandoverStats {
  /** Messages sent to shard workers (one per request and shard). */
  messages: number;
  /** Record bytes sent as windows of shared memory. */
  sharedBytes: number;
  /** Record bytes moved in a transferred ArrayBuffer. */
  movedBytes: number;
  /** Record bytes copied before the hand-over. */
  copiedBytes: number;
  /** postMessage calls to the worker threads (each wakes a sleeping worker once; coalesced-posts.ts). */
  postsToWorkers: number;
  /** postMessage batches received from the worker threads (each wakes this thread once). */
  postsFromWorkers: number;
  /** Record bytes the shards read for Fetch (WorkerShards.fetch). */
  fetchBytesRead: number;
  /** Of those, bytes read but not answered: cut to the request's limits, or read again after a long poll (cross-shard-fetch.ts). */
  fetchBytesDropped: number;
}

/**
 * Who lends the shared memory that produce records sit in (the network layer's frames): a shard
 * reading a window of it holds it from the message until its answer (or its end), so the memory
 * is not reused under it. Memory the lender did not give out is ignored.
 */
export interface SharedRecordsLender {
  retain(memory: SharedArrayBuffer): void;
  release(memory: SharedArrayBuffer): void;
}

export function newHandoverStats(): HandoverStats {
  return { messages: 0, sharedBytes: 0, movedBytes: 0, copiedBytes: 0, postsToWorkers: 0, postsFromWorkers: 0, fetchBytesRead: 0, fetchBytesDropped: 0 };
}

/** An ArrayBuffer that may be moved: not Node's pool (it is marked untransferable and would be copied silently). */
function movable(ab: ArrayBuffer): boolean {
  return ab.byteLength > Buffer.poolSize;
}

/**
 * Plans one request's hand-over: `shardOfPart[i]` is the shard of `records[i]`. Returns each
 * part's window and each shard's transfer list.
 */
export function planHandover(
  records: readonly (Buffer | null)[],
  shardOfPart: readonly number[],
  stats: HandoverStats,
  /** Shards on this thread: their parts go by reference, neither moved nor copied. */
  isLocal: (shard: number) => boolean = () => false,
  /** False: the caller keeps its buffers (the broker's frame buffers are reused once answered), so nothing is moved; a part not shared is copied. */
  mayMove = true,
): { windows: (RecordsWindow | null)[]; transfers: Map<number, ArrayBuffer[]>; shared: Map<number, SharedArrayBuffer[]> } {
  // Which shards read each (non-shared) ArrayBuffer: one that two shards read cannot move to either.
  const readers = new Map<ArrayBufferLike, number>();
  for (let i = 0; i < records.length; i++) {
    const ab = records[i]?.buffer;
    if (!ab || ab instanceof SharedArrayBuffer) continue;
    const seen = readers.get(ab);
    // A buffer this thread reads too (a local shard's part) stays here: moving it would empty that part.
    readers.set(ab, !isLocal(shardOfPart[i]!) && (seen === undefined || seen === shardOfPart[i]) ? shardOfPart[i]! : -1);
  }
  const transfers = new Map<number, ArrayBuffer[]>();
  // Each shard's shared memory, once per shard: what it holds until it answers.
  const shared = new Map<number, SharedArrayBuffer[]>();
  const moving = new Set<ArrayBufferLike>();
  const windows = records.map((r, i): RecordsWindow | null => {
    if (!r) return null;
    const ab = r.buffer;
    const shard = shardOfPart[i]!;
    if (ab instanceof SharedArrayBuffer) {
      let held = shared.get(shard);
      if (!held) shared.set(shard, (held = []));
      if (!held.includes(ab)) held.push(ab);
      if (!isLocal(shard)) stats.sharedBytes += r.length;
      return { buffer: ab, offset: r.byteOffset, length: r.length };
    }
    if (isLocal(shard)) return { buffer: ab, offset: r.byteOffset, length: r.length };
    let list = transfers.get(shard);
    if (!list) transfers.set(shard, (list = []));
    if (mayMove && ab instanceof ArrayBuffer && readers.get(ab) === shard && movable(ab)) {
      if (!moving.has(ab)) {
        moving.add(ab);
        list.push(ab);
      }
      stats.movedBytes += r.length;
      return { buffer: ab, offset: r.byteOffset, length: r.length };
    }
    const own = Buffer.allocUnsafeSlow(r.length);
    r.copy(own);
    list.push(own.buffer as ArrayBuffer);
    stats.copiedBytes += r.length;
    return { buffer: own.buffer as ArrayBuffer, offset: 0, length: r.length };
  });
  return { windows, transfers, shared };
}

/** A Buffer over a window that came back (fetched records). */
export function bufferOf(w: RecordsWindow | null): Buffer | null {
  return w ? Buffer.from(w.buffer, w.offset, w.length) : null;
}

/** A Buffer in shared memory holding a copy of `bytes`: what a network thread's frame slab would give the produce path. */
export function sharedCopy(bytes: Uint8Array): Buffer {
  const out = Buffer.from(new SharedArrayBuffer(bytes.length));
  out.set(bytes);
  return out;
}
