/**
 * A partition's producer state when its log opens (Kafka's loadProducerState and the producer
 * part of recoverSegment): the latest snapshot, then the log after it replayed batch by batch.
 * A .txnindex a crash lost (or that was dropped as corrupt) before the replay's start is rebuilt
 * first, and an abort whose index entry the crash lost after it is recorded again by the replay.
 */
import {
  ATTRIBUTES,
  ATTR_CONTROL,
  ATTR_DELETE_HORIZON,
  BATCH_LENGTH,
  LOG_OVERHEAD,
  MAGIC,
  baseOffsetAt,
  lastOffsetAt,
} from '../../../protocol/records/batch-header.js';
import { recordAbortedTxn } from '../aborted-txns.js';
import { readAt, scanBatchHeaders } from '../../segment/batch-scan.js';
import type { LocalLog } from '../local-log.js';
import type { LogSegment } from '../../segment/log-segment.js';
import type { AbortedTxn } from '../../segment/transaction-index.js';
import { ProducerStateMap, type CompletedTxn } from './producer-state.js';
import { abortEntry, markerAt, recordProducerBatch } from './batch-records.js';
import { loadLatestSnapshot } from './producer-state-snapshot.js';

const SCAN_CHUNK = 1 << 20;

/**
 * The producer state of an opened log: the latest snapshot not beyond the log end, then the
 * batches of [replayedFrom, log end) fed to it. `replayedFrom` equals the log end when the
 * snapshot covers the whole log (or the log is empty): nothing was replayed.
 */
export async function recoverProducerState(log: LocalLog): Promise<{ producers: ProducerStateMap; replayedFrom: number }> {
  const snap = await loadLatestSnapshot(log.dir, log.logEndOffset, (m) => log.logger.warn(m));
  const producers = snap?.state ?? new ProducerStateMap();
  const from = Math.max(snap?.offset ?? 0, log.logStartOffset);
  await rebuildLostTxnIndexes(log, from, producers);
  await replayBatches(log, producers, from, log.logEndOffset, async (closed) => {
    // An abort whose index entry a crash lost (the marker was in the log, the entry not yet on disk).
    if (closed.aborted) await recordAbortedTxn(log.segments, abortEntry(closed), true);
  });
  return { producers, replayedFrom: from };
}

/** Feeds the batches of [from, to) to `producers`; `onClosed` gets each transaction a marker closed. */
async function replayBatches(
  log: LocalLog,
  producers: ProducerStateMap,
  from: number,
  to: number,
  onClosed: (t: CompletedTxn) => Promise<void>,
): Promise<void> {
  let offset = from;
  while (offset < to) {
    const { records } = await log.read(offset, SCAN_CHUNK, { minOneBatch: true });
    if (records.length === 0) break;
    let pos = 0;
    while (pos + LOG_OVERHEAD <= records.length) {
      const size = records.readInt32BE(pos + BATCH_LENGTH) + LOG_OVERHEAD;
      if (pos + size > records.length) break;
      const base = baseOffsetAt(records, pos);
      const last = lastOffsetAt(records, pos);
      if (base >= to) return;
      const closed = recordProducerBatch(producers, records, pos, base, last);
      if (closed) await onClosed(closed);
      offset = last + 1;
      pos += size;
    }
    if (pos === 0) break;
  }
}

/**
 * The .txnindex of a segment before `from` (where the replay starts) that a crash lost, or that
 * was dropped as corrupt, is rebuilt: segments without one are searched for ABORT markers (the
 * headers, then the few control batches), and if one holds a marker the cleaner has not already
 * emptied (no delete horizon), producer state is replayed from the log start through that
 * segment, as Kafka's recoverSegment rebuilds producer state before recovering a segment. Each
 * entry so gets its transaction's real first offset (it may begin segments earlier) and last
 * stable offset. Only partitions that saw transactions are searched (a .txnindex on disk, or a
 * producer that wrote or got a marker), so plain partitions read nothing at start.
 */
async function rebuildLostTxnIndexes(log: LocalLog, from: number, state: ProducerStateMap): Promise<void> {
  const segments = log.segments;
  const candidates = segments.filter((s) => s.baseOffset < from && !s.txnIndex.fileExists);
  if (candidates.length === 0) return;
  const sawTransactions =
    segments.some((s) => s.txnIndex.fileExists) || [...state.producers.values()].some((e) => e.coordinatorEpoch >= 0 || e.currentTxnFirstOffset >= 0);
  if (!sawTransactions) return;
  const lost = new Set<LogSegment>();
  for (const seg of candidates) if (await holdsLiveAbortMarker(seg)) lost.add(seg);
  if (lost.size === 0) return;
  const last = [...lost].at(-1)!;
  const next = segments[segments.indexOf(last) + 1];
  const entries = new Map<LogSegment, AbortedTxn[]>();
  const scratch = new ProducerStateMap();
  await replayBatches(log, scratch, log.logStartOffset, next ? next.baseOffset : log.logEndOffset, async (closed) => {
    // As Kafka's recovery: a marker with no open transaction before it gets [marker, marker].
    if (!closed.aborted) return;
    const seg = segmentHolding(segments, closed.lastOffset);
    if (seg && lost.has(seg)) entries.set(seg, [...(entries.get(seg) ?? []), abortEntry(closed)]);
  });
  for (const seg of lost) {
    const found = entries.get(seg) ?? [];
    if (found.length === 0) continue;
    await seg.txnIndex.replaceAll(found);
    log.logger.warn(`rebuilt the lost transaction index of ${log.name} segment ${seg.baseOffset}: ${found.length} aborted transaction(s)`);
  }
}

function segmentHolding(segments: readonly LogSegment[], offset: number): LogSegment | undefined {
  let found: LogSegment | undefined;
  for (const s of segments) {
    if (s.baseOffset > offset) break;
    found = s;
  }
  return found;
}

/** Whether the segment holds an ABORT marker without a delete horizon (one whose records may remain). */
async function holdsLiveAbortMarker(seg: LogSegment): Promise<boolean> {
  const controls: { position: number; size: number }[] = [];
  await scanBatchHeaders(seg.file, 0, seg.size, (buf, start, position, size) => {
    if (buf.readInt8(start + MAGIC) === 2) {
      const attributes = buf.readInt16BE(start + ATTRIBUTES);
      if ((attributes & ATTR_CONTROL) !== 0 && (attributes & ATTR_DELETE_HORIZON) === 0) controls.push({ position, size });
    }
    return true;
  });
  for (const c of controls) {
    const buf = await readAt(seg.file, c.position, c.size);
    try {
      if (markerAt(buf, 0)?.aborted) return true;
    } catch {
      // Not a readable marker: nothing to index.
    }
  }
  return false;
}
