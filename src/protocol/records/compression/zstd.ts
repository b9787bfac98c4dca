/**
 * Zstandard codec (zstd-napi, synchronous). Decompression handles frames without a declared
 * content size, which is what Java's streaming zstd-jni output looks like.
 */
import { compress, decompress } from 'zstd-napi';

export function zstdCompress(input: Buffer): Buffer {
  return compress(input);
}

export function zstdDecompress(input: Buffer): Buffer {
  return decompress(input);
}
