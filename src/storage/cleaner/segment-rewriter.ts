/**
 * Rewrites one segment keeping, per key, only the record at the latest offset, and dropping
 * tombstones older than delete.retention.ms. Offsets never change (gaps are fine): retained
 * records keep their deltas, so a partly kept batch is re-encoded with the same base offset,
 * last offset delta, timestamps, producer fields and compression.
 *
 * Transactions (CleanedTransactions): batches of aborted transactions go whole; a marker whose
 * transaction has no data left is first given a delete horizon (KIP-534: the header's
 * delete-horizon flag, base timestamp = now + delete.retention.ms) and goes once it has passed,
 * unless it is the last thing its producer wrote (its epoch, kept for fencing).
 */
import {
  ATTRIBUTES,
  ATTR_CONTROL,
  ATTR_TRANSACTIONAL,
  LAST_OFFSET_DELTA,
  MAGIC,
  PRODUCER_ID,
  RECORD_BATCH_OVERHEAD,
} from '../../protocol/records/batch-header.js';
import { checkBatchRecordsAsync, encodeBatch, forEachRecordAsync, openBatchAsync, type OpenedBatch } from '../../protocol/records/batch.js';
import { RecordsError } from '../../protocol/records/errors.js';
import { ControlRecordType, decodeControlRecordKey } from '../../protocol/records/control.js';
import type { AbortedTxn } from '../segment/transaction-index.js';
import type { CleanedTransactions, ControlKind } from './cleaned-txns.js';
import type { KafkaRecord } from '../../protocol/records/record.js';
import { readAt, scanBatchHeaders } from '../segment/batch-scan.js';
import type { LogSegment } from '../segment/log-segment.js';

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

/** What kind of control batch this is: its first record's key (Kafka reads only that one). */
async function controlKind(batch: OpenedBatch): Promise<ControlKind> {
  if (batch.count === 0) return 'empty';
  let key: Buffer | null | undefined;
  await forEachRecordAsync(batch, (r) => {
    if (key === undefined) key = r.key;
  });
  let type: number;
  try {
    type = decodeControlRecordKey(key ?? null).type;
  } catch {
    return 'other';
  }
  return type === ControlRecordType.Abort ? 'abort' : type === ControlRecordType.Commit ? 'commit' : 'other';
}

/** The producer fields of a v2 batch's header; a legacy (magic 0/1) batch has none. */
function headerFields(raw: Buffer): { producerId: bigint; lastOffset: number; transactional: boolean; control: boolean } {
  if (raw.readInt8(MAGIC) !== 2) return { producerId: -1n, lastOffset: Number(raw.readBigInt64BE(0)), transactional: false, control: false };
  const attributes = raw.readInt16BE(ATTRIBUTES);
  return {
    producerId: raw.readBigInt64BE(PRODUCER_ID),
    lastOffset: Number(raw.readBigInt64BE(0)) + raw.readInt32BE(LAST_OFFSET_DELTA),
    transactional: (attributes & ATTR_TRANSACTIONAL) !== 0,
    control: (attributes & ATTR_CONTROL) !== 0,
  };
}

/**
 * Adds the segment's keyed records to the key → latest offset map (undecodable batches add
 * nothing). Records of aborted transactions add nothing either, as in Kafka: an aborted value
 * must not make the committed one before it look superseded.
 */
export async function addToOffsetMap(seg: LogSegment, map: Map<string, number>, opts: CleanerReadOptions, txns: CleanedTransactions): Promise<void> {
  await forEachBatch(seg, seg.size, opts, async (batch, raw) => {
    const h = headerFields(raw);
    if (h.control) {
      txns.onControlBatch(h.producerId, h.lastOffset, batch ? await controlKind(batch) : 'unreadable');
      return;
    }
    if (txns.onDataBatch(h.producerId, h.lastOffset, h.transactional) || !batch) return;
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
  /** Control batches removed, or rewritten with a delete horizon. */
  markersChanged: number;
}

export interface RewriteOptions extends CleanerReadOptions {
  now: number;
  deleteRetentionMs: number;
  txns: CleanedTransactions;
  lastRecordsOfActiveProducers: ReadonlyMap<bigint, { lastDataOffset: number; epoch: number }>;
}

/** Produces the cleaned bytes of `seg`. */
export async function rewriteSegment(
  seg: LogSegment,
  map: Map<string, number>,
  opts: RewriteOptions,
): Promise<{ bytes: Buffer; stats: RewriteStats; abortedTxns: AbortedTxn[] }> {
  const parts: Buffer[] = [];
  const stats: RewriteStats = { recordsKept: 0, recordsDropped: 0, bytesIn: seg.size, bytesOut: 0, markersChanged: 0 };
  const abortedTxns: AbortedTxn[] = [];
  await forEachBatch(seg, seg.size, opts, async (batch, raw) => {
    const h = headerFields(raw);
    if (h.control) {
      const verdict = opts.txns.onControlBatch(h.producerId, h.lastOffset, batch ? await controlKind(batch) : 'unreadable');
      if (verdict.keepEntry) abortedTxns.push(verdict.keepEntry);
      if (!batch || !verdict.discardable) {
        parts.push(raw);
        return;
      }
      if (!batch.hasDeleteHorizon) {
        parts.push(await withDeleteHorizon(batch, BigInt(opts.now + opts.deleteRetentionMs)));
        stats.markersChanged++;
        return;
      }
      const last = opts.lastRecordsOfActiveProducers.get(h.producerId);
      const producersLast = last !== undefined && last.lastDataOffset < 0 && last.epoch === batch.producerEpoch;
      if (Number(batch.baseTimestamp) > opts.now || producersLast) {
        parts.push(raw);
        return;
      }
      stats.markersChanged++;
      return;
    }
    // An aborted transaction's batch goes whole; one that cannot be decoded stays as it is (and,
    // seen, keeps its marker and index entry).
    const aborted = opts.txns.onDataBatch(h.producerId, h.lastOffset, h.transactional);
    if (!batch) {
      parts.push(raw);
      return;
    }
    if (aborted) {
      stats.recordsDropped += batch.count;
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
      hasDeleteHorizon: batch.hasDeleteHorizon,
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
  return { bytes, stats, abortedTxns };
}

/** The control batch re-encoded with its delete horizon: the flag set, the base timestamp the horizon. */
async function withDeleteHorizon(batch: OpenedBatch, horizon: bigint): Promise<Buffer> {
  const records: KafkaRecord[] = [];
  await forEachRecordAsync(batch, (r) => {
    records.push({ ...r, timestampDelta: Number(batch.baseTimestamp + BigInt(r.timestampDelta) - horizon) });
  });
  return encodeBatch({
    records,
    baseOffset: batch.baseOffset,
    partitionLeaderEpoch: batch.partitionLeaderEpoch,
    compression: batch.compression,
    timestampType: batch.timestampType,
    isTransactional: batch.isTransactional,
    isControl: true,
    hasDeleteHorizon: true,
    baseTimestamp: horizon,
    maxTimestamp: batch.maxTimestamp,
    lastOffsetDelta: batch.lastOffsetDelta,
    producerId: batch.producerId,
    producerEpoch: batch.producerEpoch,
    baseSequence: batch.baseSequence,
  });
}
