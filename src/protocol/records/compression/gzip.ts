/** GZIP codec for record batches (node zlib, synchronous). */
import { gunzipSync, gzipSync } from 'node:zlib';

export function gzipCompress(input: Buffer): Buffer {
  return gzipSync(input);
}

/** Accepts multi-member gzip streams, as zlib's gunzip does. */
export function gzipDecompress(input: Buffer): Buffer {
  return gunzipSync(input);
}
