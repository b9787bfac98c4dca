/**
 * Rewrites one segment keeping, per key, only the record at the latest offset, and dropping
 * tombstones older than delete.retention.ms. Offsets never change (gaps are fine): retained
 * records keep their deltas, so a partly kept batch is re-encoded with the same base offset,
 * last offset delta, timestamps, producer fields and compression.
 */
import { RECORD_BATCH_OVERHEAD } from '../../protocol/records/batch-header.js';
import { checkBatchRecordsAsync, encodeBatch, forEachRecordAsync, openBatchAsync, type OpenedBatch } from '../../protocol/records/batch.js';
import { RecordsError } from '../../protocol/records/errors.js';
import type { KafkaRecord } from '../../protocol/records/record.js';
import { readAt, scanBatchHeaders } from '../batch-scan.js';
import type { LogSegment } from '../log-segment.js';

/** Binary-safe map key for a record key. */
export function mapKey(key: Buffer): string {
  return key.toString('latin1');
}

/** How the cleaner inflates batches: the cap, and where an undecodable batch is reported. */
export interface CleanerReadOptions {
  /** Cap on one batch's inflated records (readDecompressionCap of the log's max.message.bytes). */
  maxDecompressedBytes: number;
  /** Called once per batch that cannot be decoded within the cap (or at all); it is kept as is. */
  onUndecodable(position: number, baseOffset: bigint, err: RecordsError): void;
}

/**
 * Calls visit for every batch of the segment (up to `sizeLimit`), inflated within the cap off
 * the event loop and checked record by record before any is used. A batch that cannot be
 * decoded (corrupt, or a compression bomb past the cap) is reported and visited with `batch`
 * null: callers keep it byte for byte, so compaction never drops or damages what it cannot read.
 */
export async function forEachBatch(
  seg: LogSegment,
  sizeLimit: number,
  opts: CleanerReadOptions,
  visit: (batch: OpenedBatch | null, raw: Buffer) => Promise<void>,
): Promise<void> {
  const locations: { position: number; size: number }[] = [];
  await scanBatchHeaders(seg.file, 0, sizeLimit, (_b, _s, position, size) => {
    locations.push({ position, size });
    return true;
  });
  // Read in ~1 MiB runs to keep the syscall count low.
  let i = 0;
  while (i < locations.length) {
    const start = locations[i]!.position;
    let j = i;
    let end = start;
    while (j < locations.length && (end - start < 1 << 20 || j === i)) {
      end = locations[j]!.position + locations[j]!.size;
      j++;
    }
    const chunk = await readAt(seg.file, start, end - start);
    for (let k = i; k < j; k++) {
      const off = locations[k]!.position - start;
      const raw = chunk.subarray(off, off + locations[k]!.size);
      let batch: OpenedBatch | null;
      try {
        batch = await openBatchAsync(raw, 0, { verifyCrc: false, maxBytes: opts.maxDecompressedBytes });
        const bad = await checkBatchRecordsAsync(batch);
        if (bad) throw bad;
      } catch (err) {
        if (!(err instanceof RecordsError)) throw err;
        opts.onUndecodable(locations[k]!.position, raw.readBigInt64BE(0), err);
        batch = null;
      }
      await visit(batch, raw);
    }
    i = j;
  }
}

/** Adds the segment's keyed records to the key → latest offset map (undecodable batches add nothing). */
export async function addToOffsetMap(seg: LogSegment, map: Map<string, number>, opts: CleanerReadOptions): Promise<void> {
  await forEachBatch(seg, seg.size, opts, async (batch) => {
    if (!batch || batch.isControl) return;
    const base = Number(batch.baseOffset);
    await forEachRecordAsync(batch, (r) => {
      if (r.key !== null) map.set(mapKey(r.key), base + r.offsetDelta);
    });
  });
}

export interface RewriteStats {
  recordsKept: number;
  recordsDropped: number;
  bytesIn: number;
  bytesOut: number;
}

/** Produces the cleaned bytes of `seg`. */
export async function rewriteSegment(
  seg: LogSegment,
  map: Map<string, number>,
  opts: { now: number; deleteRetentionMs: number } & CleanerReadOptions,
): Promise<{ bytes: Buffer; stats: RewriteStats }> {
  const parts: Buffer[] = [];
  const stats: RewriteStats = { recordsKept: 0, recordsDropped: 0, bytesIn: seg.size, bytesOut: 0 };
  await forEachBatch(seg, seg.size, opts, async (batch, raw) => {
    if (!batch || batch.isControl) {
      parts.push(raw);
      return;
    }
    const base = Number(batch.baseOffset);
    const tombstonesExpired = Number(batch.maxTimestamp) + opts.deleteRetentionMs < opts.now;
    const keep = (r: KafkaRecord): boolean => {
      if (r.key === null) return true;
      const latest = map.get(mapKey(r.key));
      const isLatest = latest === undefined || base + r.offsetDelta >= latest;
      return isLatest && !(r.value === null && tombstonesExpired);
    };
    // First pass counts, holding no record: a batch kept whole is copied as it is.
    let dropped = 0;
    await forEachRecordAsync(batch, (r) => {
      if (!keep(r)) dropped++;
    });
    stats.recordsKept += batch.count - dropped;
    stats.recordsDropped += dropped;
    if (dropped === 0) {
      parts.push(raw);
      return;
    }
    if (dropped === batch.count) return;
    const kept: KafkaRecord[] = [];
    await forEachRecordAsync(batch, (r) => {
      if (keep(r)) kept.push(r);
    });
    const rebuilt = encodeBatch({
      records: kept,
      baseOffset: batch.baseOffset,
      partitionLeaderEpoch: batch.partitionLeaderEpoch,
      compression: batch.compression,
      timestampType: batch.timestampType,
      isTransactional: batch.isTransactional,
      baseTimestamp: batch.baseTimestamp,
      maxTimestamp: batch.maxTimestamp,
      lastOffsetDelta: batch.lastOffsetDelta,
      producerId: batch.producerId,
      producerEpoch: batch.producerEpoch,
      baseSequence: batch.baseSequence,
    });
    if (rebuilt.length >= RECORD_BATCH_OVERHEAD) parts.push(rebuilt);
  });
  const bytes = Buffer.concat(parts);
  stats.bytesOut = bytes.length;
  return { bytes, stats };
}
