/** What a local log's append takes and answers (LocalLog.append, UnifiedLog.append). */
export interface AppendResult {
  firstOffset: number;
  lastOffset: number;
  logAppendTime: number;
  logStartOffset: number;
  maxTimestamp: number;
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
}
