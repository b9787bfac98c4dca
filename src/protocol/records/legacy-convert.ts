/**
 * Produce-path up-conversion of legacy message sets (magic 0/1) into ONE v2 batch, bounded
 * before anything is built: each top-level entry is checked against max.message.bytes before it
 * is inflated, wrappers inflate with a hard cap shared by the whole set, and the v2 output size
 * (hence the message count) is checked against the same cap before the output is allocated.
 * Messages are never materialised as objects: a first pass measures, a second writes the v2
 * records straight into the output buffer; both walk in slices with yields to the event loop.
 */
import { crc32 } from '@node-rs/crc32';
import { gzip } from 'node:zlib';
import { promisify } from 'node:util';
import { compressFrame as lz4CompressFrameAsync } from 'lz4-napi';
import { compress as snappyCompressAsync } from 'snappy';
import { CompressionType, LOG_OVERHEAD, RECORD_BATCH_OVERHEAD, writeBatchHeader } from './batch-header.js';
import { compress, isKnownCompression, lz4RepairMagic0Checksum, XERIAL_MAGIC } from './compression/index.js';
import { DecompressionLimitError, decompressBoundedAsync } from './compression/bounded.js';
import { RecordsError } from './errors.js';
import { MAX_REPORTED_RECORD_ERRORS } from './record-walk.js';
import { sizeOfVarInt, sizeOfVarLongNumber, writeVarInt, writeVarLongNumber } from './varint.js';

export interface LegacyConversionLimits {
  /** Largest top-level entry (a message or a compressed wrapper) accepted: max.message.bytes. */
  maxMessageBytes: number;
  /** Cap on the bytes all wrappers of the set inflate to, and on the v2 records written. */
  maxUncompressedBytes: number;
  /** Report messages without a key (compacted topics refuse them). */
  compacted: boolean;
  /** Report magic-1 timestamps outside [min, max] (NO_TIMESTAMP is exempt). */
  timestampRange?: { min: number; max: number };
}

export type LegacyConversion =
  | { kind: 'ok'; batch: Buffer }
  | { kind: 'empty' }
  | { kind: 'keyless'; total: number; indexes: number[] }
  | { kind: 'bad_timestamps'; indexes: number[]; timestamps: number[] };

const SIZE_OFFSET = 8;
const CRC_OFFSET = 12;
const MAGIC_OFFSET = 16;
const ATTRIBUTES_OFFSET = 17;
const ATTR_COMPRESSION = 0x07;
const ATTR_LOG_APPEND_TIME = 0x08;
/** crc + magic + attributes + key length + value length (magic 0). */
const MIN_MESSAGE_SIZE = 14;
const SLICE_BYTES = 256 << 10;
const SYNC_COMPRESS_MAX = 1 << 20;

const yieldToLoop = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

// The fields of the message most recently parsed by `parseMessage` (module scalars, no objects).
let mMagic = 0;
let mAttributes = 0;
let mTimestamp = -1;
let mKeyStart = 0;
let mKeyLen = -1;
let mValueStart = 0;
let mValueLen = -1;

function int64Number(buf: Buffer, pos: number): number {
  const hi = buf.readInt32BE(pos);
  const value = hi * 0x1_0000_0000 + buf.readUInt32BE(pos + 4);
  if (!Number.isSafeInteger(value)) throw new RecordsError('bad_record', 'legacy message timestamp out of range');
  return value;
}

/** Parses (and CRC-checks) the legacy message of `size` bytes after the offset/size prefix at `start`. */
function parseMessage(buf: Buffer, start: number, size: number): void {
  const end = start + LOG_OVERHEAD + size;
  if (size < MIN_MESSAGE_SIZE) throw new RecordsError('bad_record', `legacy message of ${size} bytes is too short`);
  mMagic = buf.readInt8(start + MAGIC_OFFSET);
  if (mMagic !== 0 && mMagic !== 1) throw new RecordsError('bad_magic', `expected a legacy message, found magic ${mMagic}`);
  const stored = buf.readUInt32BE(start + CRC_OFFSET);
  const computed = crc32(buf.subarray(start + MAGIC_OFFSET, end)) >>> 0;
  if (stored !== computed) throw new RecordsError('crc_mismatch', `legacy message CRC ${stored} differs from computed ${computed}`);
  mAttributes = buf.readInt8(start + ATTRIBUTES_OFFSET);
  let pos = start + ATTRIBUTES_OFFSET + 1;
  mTimestamp = -1;
  if (mMagic === 1) {
    if (pos + 8 > end) throw new RecordsError('bad_record', 'legacy message too short for its timestamp');
    mTimestamp = int64Number(buf, pos);
    pos += 8;
  }
  if (pos + 4 > end) throw new RecordsError('bad_record', 'legacy message ends inside its key length');
  mKeyLen = buf.readInt32BE(pos);
  pos += 4;
  mKeyStart = pos;
  if (mKeyLen > 0) pos += mKeyLen;
  if (mKeyLen < -1 || pos + 4 > end) throw new RecordsError('bad_record', 'legacy message key overruns the message');
  mValueLen = buf.readInt32BE(pos);
  pos += 4;
  mValueStart = pos;
  if (mValueLen > 0) pos += mValueLen;
  if (mValueLen < -1 || pos !== end) throw new RecordsError('bad_record', 'legacy message size disagrees with its fields');
}

/** One source of messages: a run of top-level uncompressed messages, or one inflated wrapper. */
interface Segment {
  buf: Buffer;
  from: number;
  to: number;
}

/** Calls `each(buf, start, size)` for every complete entry of [from, to), yielding between slices. */
async function forEachEntry(segments: readonly Segment[], each: (buf: Buffer, start: number, size: number) => void): Promise<void> {
  let sinceYield = 0;
  for (const s of segments) {
    let pos = s.from;
    while (pos + LOG_OVERHEAD <= s.to) {
      const size = s.buf.readInt32BE(pos + SIZE_OFFSET);
      if (size < 0 || pos + LOG_OVERHEAD + size > s.to) break; // partial trailing entry
      each(s.buf, pos, size);
      pos += LOG_OVERHEAD + size;
      sinceYield += LOG_OVERHEAD + size;
      if (sinceYield >= SLICE_BYTES) {
        sinceYield = 0;
        await yieldToLoop();
      }
    }
  }
}

async function inflateWrapper(codec: CompressionType, magic: number, value: Buffer, budget: number): Promise<Buffer> {
  try {
    // Magic-0 LZ4 frames carry Kafka's historically wrong header checksum.
    const input = codec === CompressionType.Lz4 && magic === 0 ? lz4RepairMagic0Checksum(value) : value;
    return await decompressBoundedAsync(codec, input, budget);
  } catch (err) {
    if (err instanceof DecompressionLimitError) throw new RecordsError('decompressed_too_large', `legacy wrapper ${err.message}`);
    throw new RecordsError('decompression_failed', `cannot decompress legacy wrapper: ${(err as Error).message}`);
  }
}

const gzipAsync = promisify(gzip);

/** Compresses the converted records section; off the event loop when it is large. */
async function compressSection(codec: CompressionType, section: Buffer): Promise<Buffer> {
  if (codec === CompressionType.None) return section;
  if (section.length <= SYNC_COMPRESS_MAX) return compress(codec, section);
  switch (codec) {
    case CompressionType.Gzip:
      return gzipAsync(section);
    case CompressionType.Lz4:
      return lz4CompressFrameAsync(section);
    case CompressionType.Snappy: {
      // xerial framing, as Kafka writes: 32 KiB blocks, each compressed on the thread pool.
      const parts: Buffer[] = [XERIAL_MAGIC, Buffer.from([0, 0, 0, 1, 0, 0, 0, 1])];
      for (let pos = 0; pos < section.length; pos += 32 << 10) {
        const block = await snappyCompressAsync(section.subarray(pos, pos + (32 << 10)));
        const len = Buffer.allocUnsafe(4);
        len.writeInt32BE(block.length, 0);
        parts.push(len, block);
      }
      return Buffer.concat(parts);
    }
    default:
      return compress(codec, section);
  }
}

/**
 * Converts the legacy message set a client produced into one v2 batch with offset deltas
 * 0..n-1 (the broker assigns offsets) and the codec of its first wrapper. Throws RecordsError
 * (typed reason) on corruption or when a bound is hit; a LogAppendTime flag from a client is
 * refused as Kafka does (INVALID_TIMESTAMP).
 */
export async function convertProducedLegacySet(records: Buffer, limits: LegacyConversionLimits): Promise<LegacyConversion> {
  const segments: Segment[] = [];
  let codec = CompressionType.None;
  let budget = limits.maxUncompressedBytes;
  // Top level: bound every entry before inflating anything.
  let pos = 0;
  let runStart = -1;
  while (pos + LOG_OVERHEAD <= records.length) {
    const size = records.readInt32BE(pos + SIZE_OFFSET);
    if (size < 0 || pos + LOG_OVERHEAD + size > records.length) break;
    if (LOG_OVERHEAD + size > limits.maxMessageBytes) {
      throw new RecordsError('decompressed_too_large', `a message of ${LOG_OVERHEAD + size} bytes exceeds max.message.bytes ${limits.maxMessageBytes}`);
    }
    parseMessage(records, pos, size);
    if (mMagic === 1 && (mAttributes & ATTR_LOG_APPEND_TIME) !== 0) {
      throw new RecordsError('invalid_timestamp', 'Invalid timestamp type in message. Producer should not set timestamp type to LogAppendTime.');
    }
    const wrapperCodec = mAttributes & ATTR_COMPRESSION;
    if (wrapperCodec === CompressionType.None) {
      if (runStart < 0) runStart = pos;
      pos += LOG_OVERHEAD + size;
      continue;
    }
    if (runStart >= 0) segments.push({ buf: records, from: runStart, to: pos });
    runStart = -1;
    if (!isKnownCompression(wrapperCodec) || wrapperCodec === CompressionType.Zstd) {
      throw new RecordsError('bad_compression', `compression id ${wrapperCodec} is not valid for magic ${mMagic}`);
    }
    if (mValueLen < 0) throw new RecordsError('bad_record', 'compressed wrapper message without a value');
    if (codec === CompressionType.None) codec = wrapperCodec;
    const inner = await inflateWrapper(wrapperCodec, mMagic, records.subarray(mValueStart, mValueStart + mValueLen), budget);
    budget -= inner.length;
    segments.push({ buf: inner, from: 0, to: inner.length });
    pos += LOG_OVERHEAD + size;
  }
  if (runStart >= 0) segments.push({ buf: records, from: runStart, to: pos });

  // Pass 1: measure the v2 output, check every inner message, find timestamps and keyless ones.
  let count = 0;
  let bytes = 0;
  let baseTimestamp = -1;
  let maxTimestamp = -1;
  let keyless = 0;
  const keylessIndexes: number[] = [];
  let badTimestamps = 0;
  const badIndexes: number[] = [];
  const badValues: number[] = [];
  const range = limits.timestampRange;
  await forEachEntry(segments, (buf, start, size) => {
    parseMessage(buf, start, size);
    if ((mAttributes & ATTR_COMPRESSION) !== 0 && buf !== records) throw new RecordsError('bad_record', 'nested compressed legacy message');
    if (mMagic === 1 && (mAttributes & ATTR_LOG_APPEND_TIME) !== 0) {
      throw new RecordsError('invalid_timestamp', 'Invalid timestamp type in message. Producer should not set timestamp type to LogAppendTime.');
    }
    if (count === 0) baseTimestamp = mTimestamp;
    if (mTimestamp > maxTimestamp) maxTimestamp = mTimestamp;
    if (mKeyLen < 0 && limits.compacted && keyless++ < MAX_REPORTED_RECORD_ERRORS) keylessIndexes.push(count);
    if (range && mTimestamp !== -1 && (mTimestamp < range.min || mTimestamp > range.max) && badTimestamps++ < MAX_REPORTED_RECORD_ERRORS) {
      badIndexes.push(count);
      badValues.push(mTimestamp);
    }
    const body =
      1 +
      sizeOfVarLongNumber(mTimestamp - baseTimestamp) +
      sizeOfVarInt(count) +
      sizeOfVarInt(mKeyLen) +
      Math.max(0, mKeyLen) +
      sizeOfVarInt(mValueLen) +
      Math.max(0, mValueLen) +
      1;
    bytes += sizeOfVarInt(body) + body;
    count++;
    if (bytes > limits.maxUncompressedBytes) {
      throw new RecordsError('decompressed_too_large', `legacy messages convert to more than ${limits.maxUncompressedBytes} bytes of records`);
    }
  });
  if (keyless > 0) return { kind: 'keyless', total: keyless, indexes: keylessIndexes };
  if (badTimestamps > 0) return { kind: 'bad_timestamps', indexes: badIndexes, timestamps: badValues };
  if (count === 0) return { kind: 'empty' };

  // Pass 2: write the records straight into the output section.
  const section = Buffer.allocUnsafe(bytes);
  let out = 0;
  let index = 0;
  await forEachEntry(segments, (buf, start, size) => {
    parseMessage(buf, start, size);
    const body =
      1 +
      sizeOfVarLongNumber(mTimestamp - baseTimestamp) +
      sizeOfVarInt(index) +
      sizeOfVarInt(mKeyLen) +
      Math.max(0, mKeyLen) +
      sizeOfVarInt(mValueLen) +
      Math.max(0, mValueLen) +
      1;
    out = writeVarInt(section, out, body);
    section[out++] = 0;
    out = writeVarLongNumber(section, out, mTimestamp - baseTimestamp);
    out = writeVarInt(section, out, index);
    out = writeVarInt(section, out, mKeyLen);
    if (mKeyLen > 0) out += buf.copy(section, out, mKeyStart, mKeyStart + mKeyLen);
    out = writeVarInt(section, out, mValueLen);
    if (mValueLen > 0) out += buf.copy(section, out, mValueStart, mValueStart + mValueLen);
    section[out++] = 0;
    index++;
  });
  if (out !== bytes || index !== count) throw new RecordsError('bad_record', 'legacy message set changed during conversion');

  const compressed = await compressSection(codec, section);
  const batch = Buffer.allocUnsafe(RECORD_BATCH_OVERHEAD + compressed.length);
  compressed.copy(batch, RECORD_BATCH_OVERHEAD);
  writeBatchHeader(batch, {
    baseOffset: 0n,
    partitionLeaderEpoch: -1,
    attributes: codec,
    lastOffsetDelta: count - 1,
    baseTimestamp: BigInt(baseTimestamp),
    maxTimestamp: BigInt(maxTimestamp),
    producerId: -1n,
    producerEpoch: -1,
    baseSequence: -1,
    recordsCount: count,
  });
  return { kind: 'ok', batch };
}
