/**
 * The leader's idempotence check before an append: whether the batches are in sequence for
 * their producers (storage/log/producer-state). What an appended batch then means for producer
 * state is storage's (storage/log/producer-state/batch-records.ts).
 */
import { BATCH_LENGTH, LOG_OVERHEAD, isTransactional } from '../protocol/records/batch-header.js';
import { APPEND, lastSequenceOf, type ProducerStateMap, type SequenceCheck } from '../storage/log/producer-state/producer-state.js';

/**
 * The leader's idempotence check of validated batches (offsets not assigned yet), before they
 * are appended: the first batch refused ('error') or a retry of one of its producer's last five
 * batches ('duplicate', answered with the original offsets) decides; else 'append'. With
 * `fromClient` false (a coordinator's own batches) sequences are not checked, only epochs.
 */
export function checkProducerBatches(producers: ProducerStateMap, batches: Buffer, fromClient: boolean): SequenceCheck {
  let pos = 0;
  while (pos < batches.length) {
    const pid = batches.readBigInt64BE(pos + 43);
    if (pid >= 0n) {
      const firstSeq = batches.readInt32BE(pos + 53);
      const check = producers.check(
        pid,
        batches.readInt16BE(pos + 51),
        firstSeq,
        lastSequenceOf(firstSeq, batches.readInt32BE(pos + 23)),
        isTransactional(batches, pos),
        fromClient,
      );
      if (check.kind !== 'append') return check;
    }
    pos += batches.readInt32BE(pos + BATCH_LENGTH) + LOG_OVERHEAD;
  }
  return APPEND;
}
