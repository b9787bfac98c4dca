/**
 * Legacy message sets (magic 0 and 1), used by clients older than Kafka 0.11:
 *
 *   offset int64, size int32, then the message:
 *   crc uint32 (CRC32 over magic..end), magic int8, attributes int8,
 *   [timestamp int64, magic 1 only], key int32 length (-1 = null) + bytes, value likewise
 *
 * Attributes: bits 0-2 compression, bit 3 timestamp type (magic 1). A compressed "wrapper"
 * message carries a whole inner message set, compressed, as its value. Inner offsets are
 * absolute for magic 0 and relative (0..n-1, wrapper offset = offset of the last inner
 * message) for magic 1.
 */
import { crc32 } from '@node-rs/crc32';
import { CompressionType, LOG_OVERHEAD } from './batch-header.js';
import { TimestampType } from './batch.js';
import { iterateBatches } from './batch-entries.js';
import { compress, decompress, isKnownCompression, lz4BreakChecksumForMagic0, lz4DecompressLegacy } from './compression/index.js';
import { RecordsError } from './errors.js';

export type LegacyMagic = 0 | 1;

/** One logical message after wrapper messages have been expanded. */
export interface LegacyMessage {
  offset: bigint;
  magic: LegacyMagic;
  /** -1 for magic 0 (no timestamp). */
  timestamp: bigint;
  timestampType: TimestampType;
  key: Buffer | null;
  value: Buffer | null;
}

const CRC_OFFSET = 12;
const MAGIC_OFFSET = 16;
const ATTRIBUTES_OFFSET = 17;
const ATTR_COMPRESSION = 0x07;
const ATTR_LOG_APPEND_TIME = 0x08;

interface RawMessage {
  offset: bigint;
  magic: LegacyMagic;
  attributes: number;
  timestamp: bigint;
  key: Buffer | null;
  value: Buffer | null;
}

function readBytes(buf: Buffer, pos: number, end: number): [Buffer | null, number] {
  if (pos + 4 > end) throw new RecordsError('bad_record', 'legacy message ends inside a length field');
  const len = buf.readInt32BE(pos);
  pos += 4;
  if (len < 0) return [null, pos];
  if (pos + len > end) throw new RecordsError('bad_record', `legacy message field of ${len} bytes overruns the message`);
  return [buf.subarray(pos, pos + len), pos + len];
}

/** Parses one complete legacy entry at [start, start + size). */
function readRawMessage(buf: Buffer, start: number, size: number, verifyCrc: boolean): RawMessage {
  const end = start + size;
  const magic = buf.readInt8(start + MAGIC_OFFSET);
  if (magic !== 0 && magic !== 1) throw new RecordsError('bad_magic', `expected a legacy message, found magic ${magic}`);
  if (verifyCrc) {
    const stored = buf.readUInt32BE(start + CRC_OFFSET);
    const computed = crc32(buf.subarray(start + MAGIC_OFFSET, end)) >>> 0;
    if (stored !== computed) throw new RecordsError('crc_mismatch', `legacy message CRC ${stored} differs from computed ${computed}`);
  }
  const attributes = buf.readInt8(start + ATTRIBUTES_OFFSET);
  let pos = start + ATTRIBUTES_OFFSET + 1;
  let timestamp = -1n;
  if (magic === 1) {
    if (pos + 8 > end) throw new RecordsError('bad_record', 'legacy message too short for its timestamp');
    timestamp = buf.readBigInt64BE(pos);
    pos += 8;
  }
  const [key, afterKey] = readBytes(buf, pos, end);
  const [value, afterValue] = readBytes(buf, afterKey, end);
  if (afterValue !== end) throw new RecordsError('bad_record', 'legacy message size disagrees with its fields');
  return { offset: buf.readBigInt64BE(start), magic, attributes, timestamp, key, value };
}

function decompressWrapper(type: CompressionType, magic: LegacyMagic, value: Buffer): Buffer {
  try {
    // Magic-0 LZ4 frames carry Kafka's historically wrong header checksum.
    if (type === CompressionType.Lz4 && magic === 0) return lz4DecompressLegacy(value);
    return decompress(type, value);
  } catch (err) {
    throw new RecordsError('decompression_failed', `cannot decompress legacy wrapper: ${(err as Error).message}`);
  }
}

function toMessage(raw: RawMessage, offset: bigint, timestamp: bigint, type: TimestampType): LegacyMessage {
  return { offset, magic: raw.magic, timestamp, timestampType: type, key: raw.key, value: raw.value };
}

export interface LegacyReadResult {
  messages: LegacyMessage[];
  /** Codec of the first compressed wrapper met, else None. */
  compression: CompressionType;
}

/**
 * Reads a legacy message set, expanding compressed wrappers. Stops at a partial trailing
 * message. Throws RecordsError on corruption (CRC, sizes, nested compression, v2 batches).
 */
export function readLegacyMessageSet(buf: Buffer, options: { verifyCrc?: boolean } = {}): LegacyReadResult {
  const verifyCrc = options.verifyCrc !== false;
  const messages: LegacyMessage[] = [];
  let compression = CompressionType.None;
  for (const entry of iterateBatches(buf)) {
    const raw = readRawMessage(buf, entry.start, entry.size, verifyCrc);
    const codec = raw.attributes & ATTR_COMPRESSION;
    const wrapperLogAppend = raw.magic === 1 && (raw.attributes & ATTR_LOG_APPEND_TIME) !== 0;
    if (codec === CompressionType.None) {
      const type = wrapperLogAppend ? TimestampType.LogAppendTime : TimestampType.CreateTime;
      messages.push(toMessage(raw, raw.offset, raw.timestamp, type));
      continue;
    }
    if (!isKnownCompression(codec) || codec === CompressionType.Zstd) {
      throw new RecordsError('bad_compression', `compression id ${codec} is not valid for magic ${raw.magic}`);
    }
    if (compression === CompressionType.None) compression = codec;
    if (raw.value === null) throw new RecordsError('bad_record', 'compressed wrapper message without a value');
    const inner = decompressWrapper(codec, raw.magic, raw.value);
    const innerRaw: RawMessage[] = [];
    for (const e of iterateBatches(inner)) {
      const m = readRawMessage(inner, e.start, e.size, verifyCrc);
      if ((m.attributes & ATTR_COMPRESSION) !== 0) throw new RecordsError('bad_record', 'nested compressed legacy message');
      innerRaw.push(m);
    }
    const last = innerRaw[innerRaw.length - 1];
    if (last === undefined) continue;
    // Magic 1 inner offsets are relative: the wrapper holds the absolute offset of the last one.
    // Like Kafka, keep them relative when that gives a negative base (producer placeholders,
    // e.g. kafka-python writes wrapper offset 0).
    let base = raw.magic === 1 ? raw.offset - last.offset : 0n;
    if (base < 0n) base = 0n;
    for (const m of innerRaw) {
      if (wrapperLogAppend) messages.push(toMessage(m, base + m.offset, raw.timestamp, TimestampType.LogAppendTime));
      else messages.push(toMessage(m, base + m.offset, m.timestamp, TimestampType.CreateTime));
    }
  }
  return { messages, compression };
}

function legacyMessageSize(magic: LegacyMagic, key: Buffer | null, value: Buffer | null): number {
  return 4 + 1 + 1 + (magic === 1 ? 8 : 0) + 4 + (key?.length ?? 0) + 4 + (value?.length ?? 0);
}

function writeBytes(buf: Buffer, pos: number, b: Buffer | null): number {
  buf.writeInt32BE(b === null ? -1 : b.length, pos);
  return b === null ? pos + 4 : pos + 4 + b.copy(buf, pos + 4);
}

/** Encodes one legacy entry (offset + size + message) with a correct CRC32. */
export function encodeLegacyMessage(
  magic: LegacyMagic,
  offset: bigint,
  attributes: number,
  timestamp: bigint,
  key: Buffer | null,
  value: Buffer | null,
): Buffer {
  const size = legacyMessageSize(magic, key, value);
  const buf = Buffer.allocUnsafe(LOG_OVERHEAD + size);
  buf.writeBigInt64BE(offset, 0);
  buf.writeInt32BE(size, 8);
  buf.writeInt8(magic, MAGIC_OFFSET);
  buf.writeInt8(attributes, ATTRIBUTES_OFFSET);
  let pos = ATTRIBUTES_OFFSET + 1;
  if (magic === 1) pos = buf.writeBigInt64BE(timestamp, pos);
  pos = writeBytes(buf, pos, key);
  writeBytes(buf, pos, value);
  buf.writeUInt32BE(crc32(buf.subarray(MAGIC_OFFSET)) >>> 0, CRC_OFFSET);
  return buf;
}

export interface LegacyEncodeInput {
  magic: LegacyMagic;
  messages: readonly { offset?: bigint; timestamp?: bigint; key: Buffer | null; value: Buffer | null }[];
  /** Wrap everything in one compressed message (gzip, snappy or lz4). */
  compression?: CompressionType;
  /** Offset of the first message (default 0); later ones follow consecutively. */
  baseOffset?: bigint;
  timestampType?: TimestampType;
}

/**
 * Encodes a legacy message set as an old producer (or broker) would. Compressed sets become one
 * wrapper message: inner offsets relative for magic 1, absolute for magic 0. Magic-0 LZ4 frames
 * get Kafka's broken header checksum, as Kafka itself still writes them (old readers expect it).
 */
export function encodeLegacyMessageSet(input: LegacyEncodeInput): Buffer {
  const { magic } = input;
  const compression = input.compression ?? CompressionType.None;
  const base = input.baseOffset ?? 0n;
  const logAppend = magic === 1 && input.timestampType === TimestampType.LogAppendTime ? ATTR_LOG_APPEND_TIME : 0;
  const relative = compression !== CompressionType.None && magic === 1;
  const entries = input.messages.map((m, i) =>
    encodeLegacyMessage(
      magic,
      relative ? BigInt(i) : (m.offset ?? base + BigInt(i)),
      compression === CompressionType.None ? logAppend : 0,
      m.timestamp ?? -1n,
      m.key,
      m.value,
    ),
  );
  const set = Buffer.concat(entries);
  if (compression === CompressionType.None) return set;
  const lastOffset = base + BigInt(Math.max(0, input.messages.length - 1));
  let maxTimestamp = -1n;
  for (const m of input.messages) if ((m.timestamp ?? -1n) > maxTimestamp) maxTimestamp = m.timestamp ?? -1n;
  let compressed = compress(compression, set);
  if (compression === CompressionType.Lz4 && magic === 0) compressed = lz4BreakChecksumForMagic0(compressed);
  return encodeLegacyMessage(magic, lastOffset, compression | logAppend, maxTimestamp, null, compressed);
}
