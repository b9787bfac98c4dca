/**
 * Codec dispatch for record batches. Everything is synchronous: the native codecs are fast on
 * batch-sized inputs and a sync API keeps the produce path simple.
 */
import { CompressionType } from '../batch-header.js';
import { gzipCompress, gzipDecompress } from './gzip.js';
import { lz4Compress, lz4Decompress } from './lz4.js';
import { snappyCompress, snappyDecompress } from './snappy.js';
import { zstdCompress, zstdDecompress } from './zstd.js';

export { gzipCompress, gzipDecompress } from './gzip.js';
export { snappyCompress, snappyDecompress, isXerialFramed, XERIAL_MAGIC } from './snappy.js';
export { lz4Compress, lz4Decompress, lz4DecompressLegacy, lz4BreakChecksumForMagic0, lz4RepairMagic0Checksum } from './lz4.js';
export { zstdCompress, zstdDecompress } from './zstd.js';

export function isKnownCompression(type: number): type is CompressionType {
  return type >= CompressionType.None && type <= CompressionType.Zstd;
}

export function compress(type: CompressionType, input: Buffer): Buffer {
  switch (type) {
    case CompressionType.None:
      return input;
    case CompressionType.Gzip:
      return gzipCompress(input);
    case CompressionType.Snappy:
      return snappyCompress(input);
    case CompressionType.Lz4:
      return lz4Compress(input);
    case CompressionType.Zstd:
      return zstdCompress(input);
    default:
      throw new RangeError(`unknown compression type ${String(type)}`);
  }
}

export function decompress(type: CompressionType, input: Buffer): Buffer {
  switch (type) {
    case CompressionType.None:
      return input;
    case CompressionType.Gzip:
      return gzipDecompress(input);
    case CompressionType.Snappy:
      return snappyDecompress(input);
    case CompressionType.Lz4:
      return lz4Decompress(input);
    case CompressionType.Zstd:
      return zstdDecompress(input);
    default:
      throw new RangeError(`unknown compression type ${String(type)}`);
  }
}
export * from './bounded.js';
export { lz4OutputBound } from './bounded-lz4.js';
