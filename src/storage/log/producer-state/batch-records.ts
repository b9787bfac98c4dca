/**
 * What one appended v2 batch means for a log's producer state (leader appends, follower appends
 * and the replay after a restart all go through here): an idempotent or transactional data
 * batch records its sequence range and may open a transaction; a control batch holding an
 * end-transaction marker closes one. Returns the closed transaction, which the log indexes in
 * its .txnindex when it was aborted.
 */
import { BATCH_LENGTH, LOG_OVERHEAD, isControlBatch, isTransactional } from '../../../protocol/records/batch-header.js';
import { decodeBatch } from '../../../protocol/records/batch.js';
import { ControlRecordType, endTxnMarkerOf } from '../../../protocol/records/control.js';
import type { AbortedTxn } from '../../segment/transaction-index.js';
import { lastSequenceOf, type CompletedTxn, type ProducerStateMap } from './producer-state.js';

/** Control batches hold one small record; anything larger is not a marker worth inflating. */
const MAX_CONTROL_BATCH_BYTES = 1024;

/** The end-transaction marker of the control batch at `pos`, or undefined (another control record type). */
export function markerAt(buf: Buffer, pos: number): { aborted: boolean; coordinatorEpoch: number } | undefined {
  const batch = decodeBatch(buf, pos, { verifyCrc: false, maxBytes: MAX_CONTROL_BATCH_BYTES });
  const marker = endTxnMarkerOf(batch);
  return marker ? { aborted: marker.type === ControlRecordType.Abort, coordinatorEpoch: marker.coordinatorEpoch } : undefined;
}

/**
 * Records the batch at `pos` (offsets already assigned: [firstOffset, lastOffset]) in `producers`.
 * Batches without a producer id and pre-v2 batches are ignored.
 */
export function recordProducerBatch(producers: ProducerStateMap, buf: Buffer, pos: number, firstOffset: number, lastOffset: number): CompletedTxn | undefined {
  if (buf.readInt8(pos + 16) !== 2) return undefined;
  const pid = buf.readBigInt64BE(pos + 43);
  if (pid < 0n) return undefined;
  const epoch = buf.readInt16BE(pos + 51);
  const timestamp = Number(buf.readBigInt64BE(pos + 35));
  if (isControlBatch(buf, pos)) {
    const marker = markerAt(buf, pos);
    return marker ? producers.completeTxn(pid, epoch, firstOffset, marker.aborted, marker.coordinatorEpoch, timestamp) : undefined;
  }
  const firstSeq = buf.readInt32BE(pos + 53);
  producers.update(
    pid,
    epoch,
    { firstSeq, lastSeq: lastSequenceOf(firstSeq, buf.readInt32BE(pos + 23)), firstOffset, lastOffset, timestamp },
    isTransactional(buf, pos),
  );
  return undefined;
}

/** Every batch of `batches` (offsets assigned) in order; the transactions they closed. */
export function recordProducerBatches(producers: ProducerStateMap, batches: Buffer): CompletedTxn[] {
  const closed: CompletedTxn[] = [];
  let pos = 0;
  while (pos + LOG_OVERHEAD <= batches.length) {
    const size = batches.readInt32BE(pos + BATCH_LENGTH) + LOG_OVERHEAD;
    if (pos + size > batches.length) break;
    if (batches.readInt8(pos + 16) === 2 && batches.readBigInt64BE(pos + 43) >= 0n) {
      const base = Number(batches.readBigInt64BE(pos));
      const done = recordProducerBatch(producers, batches, pos, base, base + batches.readInt32BE(pos + 23));
      if (done) closed.push(done);
    }
    pos += size;
  }
  return closed;
}

/** The .txnindex entry of an aborted transaction. */
export function abortEntry(t: CompletedTxn): AbortedTxn {
  return { producerId: t.producerId, firstOffset: t.firstOffset, lastOffset: t.lastOffset, lastStableOffset: t.lastStableOffset };
}
