/** What a local log's append takes and answers (LocalLog.append, UnifiedLog.append). */
import type { AppendPlan, ProducerSequenceCheck } from '../append/append-step.js';

export interface AppendResult {
  firstOffset: number;
  lastOffset: number;
  logAppendTime: number;
  logStartOffset: number;
  maxTimestamp: number;
  /** The producer state refused a batch, or found a retry (AppendOptions.producers): nothing was written. */
  refused?: AppendPlan['refused'];
}

export interface AppendOptions {
  leaderEpoch: number;
  now?: number;
  /** false on followers: offsets come with the batches. Defaults to true. */
  assignOffsets?: boolean;
  /**
   * The caller already verified every batch's CRC (e.g. the produce handler's own validation):
   * skip the second CRC pass, which costs as much as the page-cache write. Framing, magic and
   * sizes are still checked.
   */
  crcVerified?: boolean;
  /** Framing, sizes and CRCs already checked (a produce's validated records, a coordinator's own batch). */
  validated?: boolean;
  /** Leader appends: each idempotent batch is checked against the producer state first. */
  producers?: ProducerSequenceCheck;
  /** With `producers`: false for a coordinator's batches (epochs checked, not sequences). */
  fromClient?: boolean;
}
