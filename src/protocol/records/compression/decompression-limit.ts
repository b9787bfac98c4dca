/**
 * The error every bounded decoder throws when its output would pass the caller's cap, and the
 * check of a decoded buffer against the cap. Its own file so that the per-codec decoders
 * (bounded-lz4.ts, bounded-zstd.ts) and the dispatch in bounded.ts share it without importing
 * one another.
 */

/** Output would exceed the caller's cap. Carries the cap so the error message can name it. */
export class DecompressionLimitError extends Error {
  override name = 'DecompressionLimitError';
  constructor(
    readonly maxBytes: number,
    detail: string,
  ) {
    super(`decompressed size exceeds the limit of ${maxBytes} bytes (${detail})`);
  }
}

/** `out` when within the cap, else DecompressionLimitError naming the codec and the size. */
export function checkDecompressedSize(out: Buffer, maxBytes: number, codec: string): Buffer {
  if (out.length > maxBytes) throw new DecompressionLimitError(maxBytes, `${codec} inflated to ${out.length} bytes`);
  return out;
}
