/**
 * Caps on inflating stored batches when they are read (down-conversion for old fetchers,
 * timestamp lookup, compaction, coordinator loading, dump-log). A batch in a log may predate
 * produce-side validation, or come from a replica path: its few KB can declare gigabytes.
 *
 * The cap is derived from the topic's max.message.bytes (the largest *compressed* batch the
 * topic accepts): READ_INFLATION_FACTOR times that, never below MIN_READ_DECOMPRESSED_BYTES
 * (small max.message.bytes must not make ordinary compressed batches unreadable) and never above
 * MAX_READ_DECOMPRESSED_BYTES. With the default max.message.bytes (1048588) the cap is 32 MiB.
 */

/** Ratio allowed between a stored batch's limit and its inflated records: ordinary data compresses 2-10x. */
export const READ_INFLATION_FACTOR = 32;
export const MIN_READ_DECOMPRESSED_BYTES = 16 << 20;
export const MAX_READ_DECOMPRESSED_BYTES = 1 << 30;
/** max.message.bytes' default, for readers that know no topic config (dump-log). */
export const DEFAULT_MAX_MESSAGE_BYTES = 1048588;

/** The most bytes one stored batch's records may inflate to when read, for a topic's max.message.bytes. */
export function readDecompressionCap(maxMessageBytes: number = DEFAULT_MAX_MESSAGE_BYTES): number {
  const derived = Math.max(0, maxMessageBytes) * READ_INFLATION_FACTOR;
  return Math.min(MAX_READ_DECOMPRESSED_BYTES, Math.max(MIN_READ_DECOMPRESSED_BYTES, derived));
}
