/**
 * What one appended v2 batch means for a log's producer state (leader appends, follower appends
 * and the replay after a restart all go through here): an idempotent or transactional data
 * batch records its sequence range and may open a transaction; a control batch holding an
 * end-transaction marker closes one. Returns the closed transaction, which the log indexes in
 * its .txnindex when it was aborted.
 */
import {
  LOG_OVERHEAD,
  baseOffsetAt,
  baseSequenceOf,
  batchSize,
  hasProducerId,
  isControlBatch,
  isTransactional,
  lastOffsetAt,
  lastOffsetDeltaOf,
  magicOf,
  maxTimestampAt,
  producerEpochOf,
  producerIdOf,
} from '../../../protocol/records/batch-header.js';
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
  if (magicOf(buf, pos) !== 2 || !hasProducerId(buf, pos)) return undefined;
  const pid = producerIdOf(buf, pos);
  const epoch = producerEpochOf(buf, pos);
  const timestamp = maxTimestampAt(buf, pos);
  if (isControlBatch(buf, pos)) {
    const marker = markerAt(buf, pos);
    return marker ? producers.completeTxn(pid, epoch, firstOffset, marker.aborted, marker.coordinatorEpoch, timestamp) : undefined;
  }
  const firstSeq = baseSequenceOf(buf, pos);
  producers.update(
    pid,
    epoch,
    { firstSeq, lastSeq: lastSequenceOf(firstSeq, lastOffsetDeltaOf(buf, pos)), firstOffset, lastOffset, timestamp },
    isTransactional(buf, pos),
  );
  return undefined;
}

/** Every batch of `batches` (offsets assigned) in order; the transactions they closed. */
export function recordProducerBatches(producers: ProducerStateMap, batches: Buffer): readonly CompletedTxn[] {
  // Most appends close no transaction: the list is made only for one that does.
  let closed: CompletedTxn[] | undefined;
  let pos = 0;
  while (pos + LOG_OVERHEAD <= batches.length) {
    const size = batchSize(batches, pos);
    if (pos + size > batches.length) break;
    if (magicOf(batches, pos) === 2 && hasProducerId(batches, pos)) {
      const done = recordProducerBatch(producers, batches, pos, baseOffsetAt(batches, pos), lastOffsetAt(batches, pos));
      if (done) (closed ??= []).push(done);
    }
    pos += size;
  }
  return closed ?? NONE_CLOSED;
}
const NONE_CLOSED: readonly CompletedTxn[] = Object.freeze([]);

/** The .txnindex entry of an aborted transaction. */
export function abortEntry(t: CompletedTxn): AbortedTxn {
  return { producerId: t.producerId, firstOffset: t.firstOffset, lastOffset: t.lastOffset, lastStableOffset: t.lastStableOffset };
}
