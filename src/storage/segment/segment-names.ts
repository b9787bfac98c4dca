/**
 * The names of a segment's files: `<base offset, 20 digits>.<suffix>`, and the suffixes a file
 * takes on its way out (deletion, the cleaner's swap). Apart from LogSegment because recovery,
 * the cleaner, retirement and the dump tool read directory listings by these names alone.
 */
export const LOG_SUFFIX = '.log';
export const INDEX_SUFFIX = '.index';
export const TIME_INDEX_SUFFIX = '.timeindex';
export const TXN_INDEX_SUFFIX = '.txnindex';
export const DELETED_SUFFIX = '.deleted';
export const CLEANED_SUFFIX = '.cleaned';
export const SWAP_SUFFIX = '.swap';

export function segmentFileName(baseOffset: number, suffix: string): string {
  return String(baseOffset).padStart(20, '0') + suffix;
}

/** Parses "00000000000000000042.log" (any suffix) into 42, or undefined. */
export function baseOffsetOfFileName(name: string): number | undefined {
  const m = /^(\d{20})\./.exec(name);
  return m ? Number(m[1]) : undefined;
}
