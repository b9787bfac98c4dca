/**
 * Rewrites one segment keeping, per key, only the record at the latest offset, and dropping
 * tombstones older than delete.retention.ms. Offsets never change (gaps are fine): retained
 * records keep their deltas, so a partly kept batch is re-encoded with the same base offset,
 * last offset delta, timestamps, producer fields and compression.
 */
import { RECORD_BATCH_OVERHEAD } from '../../protocol/records/batch-header.js';
import { decodeBatch, encodeBatch, type RecordBatch } from '../../protocol/records/batch.js';
import type { KafkaRecord } from '../../protocol/records/record.js';
import { readAt, scanBatchHeaders } from '../batch-scan.js';
import type { LogSegment } from '../log-segment.js';

/** Binary-safe map key for a record key. */
export function mapKey(key: Buffer): string {
  return key.toString('latin1');
}

/** Calls visit for every decoded batch of the segment (up to `sizeLimit`). */
export async function forEachBatch(
  seg: LogSegment,
  sizeLimit: number,
  visit: (batch: RecordBatch, raw: Buffer) => void,
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
      visit(decodeBatch(raw, 0, { verifyCrc: false }), raw);
    }
    i = j;
  }
}

/** Adds the segment's keyed records to the key → latest offset map. */
export async function addToOffsetMap(seg: LogSegment, map: Map<string, number>): Promise<void> {
  await forEachBatch(seg, seg.size, (batch) => {
    if (batch.isControl) return;
    const base = Number(batch.baseOffset);
    for (const r of batch.records) if (r.key !== null) map.set(mapKey(r.key), base + r.offsetDelta);
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
  opts: { now: number; deleteRetentionMs: number },
): Promise<{ bytes: Buffer; stats: RewriteStats }> {
  const parts: Buffer[] = [];
  const stats: RewriteStats = { recordsKept: 0, recordsDropped: 0, bytesIn: seg.size, bytesOut: 0 };
  await forEachBatch(seg, seg.size, (batch, raw) => {
    if (batch.isControl) {
      parts.push(raw);
      return;
    }
    const base = Number(batch.baseOffset);
    const tombstonesExpired = Number(batch.maxTimestamp) + opts.deleteRetentionMs < opts.now;
    const kept: KafkaRecord[] = [];
    for (const r of batch.records) {
      if (r.key === null) {
        kept.push(r);
        continue;
      }
      const latest = map.get(mapKey(r.key));
      const isLatest = latest === undefined || base + r.offsetDelta >= latest;
      if (isLatest && !(r.value === null && tombstonesExpired)) kept.push(r);
    }
    stats.recordsKept += kept.length;
    stats.recordsDropped += batch.records.length - kept.length;
    if (kept.length === batch.records.length) parts.push(raw);
    else if (kept.length > 0) {
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
    }
  });
  const bytes = Buffer.concat(parts);
  stats.bytesOut = bytes.length;
  return { bytes, stats };
}
