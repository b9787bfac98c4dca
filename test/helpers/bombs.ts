/**
 * Compression bombs and other hostile record sets, built cheaply: gzip and zstd accept
 * concatenated members/frames, so a bomb is one small compressed chunk repeated.
 */
import { gzipSync, constants } from 'node:zlib';
import { compress as zstdCompress } from 'zstd-napi';
import { CompressionType, encodeLegacyMessage, writeBatchHeader } from '../../src/protocol/records/index.js';

const ATTR_GZIP = 1;

/** A gzip stream inflating to `chunk` repeated `times` times. */
export function repeatedGzip(chunk: Buffer, times: number): Buffer {
  const member = gzipSync(chunk, { level: constants.Z_BEST_COMPRESSION });
  return Buffer.concat(Array.from({ length: times }, () => member));
}

/** A zstd stream (one frame per repetition) inflating to `chunk` repeated `times` times. */
export function repeatedZstd(chunk: Buffer, times: number): Buffer {
  const frame = zstdCompress(chunk);
  return Buffer.concat(Array.from({ length: times }, () => frame));
}

/**
 * One legacy (magic 1) gzip wrapper whose inner set is `inflatedMb` MiB of empty messages
 * (34 bytes each): what an attacker sends with Produce v2.
 */
export function legacyGzipBomb(inflatedMb: number): Buffer {
  const one = encodeLegacyMessage(1, 0n, 0, 1_700_000_000_000n, null, Buffer.alloc(0));
  const perChunk = Math.floor((1 << 20) / one.length);
  const chunk = Buffer.concat(Array.from({ length: perChunk }, () => one));
  const value = repeatedGzip(chunk, inflatedMb);
  return encodeLegacyMessage(1, BigInt(perChunk * inflatedMb - 1), ATTR_GZIP, 1_700_000_000_000n, null, value);
}

/** A v2 batch around an already-built (possibly compressed) records section. */
export function rawV2Batch(section: Buffer, count: number, compression: CompressionType, attrs = 0): Buffer {
  const buf = Buffer.alloc(61 + section.length);
  section.copy(buf, 61);
  writeBatchHeader(buf, {
    baseOffset: 0n,
    partitionLeaderEpoch: -1,
    attributes: compression | attrs,
    lastOffsetDelta: count - 1,
    baseTimestamp: 1_700_000_000_000n,
    maxTimestamp: 1_700_000_000_000n,
    producerId: -1n,
    producerEpoch: -1,
    baseSequence: -1,
    recordsCount: count,
  });
  return buf;
}

/** The start of one v2 record whose value is `valueBytes` long (the value bytes follow, then 0x00 for no headers). */
function recordPrefix(valueBytes: number): Buffer {
  const varint = (v: number): number[] => {
    let z = v >= 0 ? v * 2 : -v * 2 - 1;
    const out: number[] = [];
    while (z >= 0x80) {
      out.push((z % 0x80) | 0x80);
      z = Math.floor(z / 0x80);
    }
    out.push(z);
    return out;
  };
  const valueLen = varint(valueBytes);
  const body = 1 + 1 + 1 + 1 + valueLen.length + valueBytes + 1; // attrs, ts delta, offset delta, null key, value, headers
  return Buffer.from([...varint(body), 0, 0, 0, 1, ...valueLen]);
}

/** A v2 batch of ONE record whose value is `inflatedMb` MiB of zeros, compressed with gzip or zstd. */
export function v2Bomb(compression: CompressionType.Gzip | CompressionType.Zstd, inflatedMb: number): Buffer {
  const zeros = Buffer.alloc(1 << 20);
  const prefix = recordPrefix(inflatedMb << 20);
  const tail = Buffer.from([0]);
  const section =
    compression === CompressionType.Gzip
      ? Buffer.concat([gzipSync(prefix), repeatedGzip(zeros, inflatedMb), gzipSync(tail)])
      : Buffer.concat([zstdCompress(prefix), repeatedZstd(zeros, inflatedMb), zstdCompress(tail)]);
  return rawV2Batch(section, 1, compression);
}
