/**
 * In-place access to the fixed 61-byte header of a RecordBatch (magic 2).
 *
 * The broker treats batches as opaque bytes on its hot path: it reads these header fields
 * directly from the buffer and never builds objects per record. Offsets below are Kafka's
 * on-wire layout (see the "Record Batch" section of Kafka's protocol documentation).
 */
import { crc32c } from '@node-rs/crc32';

export const BASE_OFFSET = 0;
export const BATCH_LENGTH = 8; // bytes after this int32 field = batch size - 12
export const PARTITION_LEADER_EPOCH = 12;
export const MAGIC = 16;
export const CRC = 17;
export const ATTRIBUTES = 21;
export const LAST_OFFSET_DELTA = 23;
export const BASE_TIMESTAMP = 27;
export const MAX_TIMESTAMP = 35;
export const PRODUCER_ID = 43;
export const PRODUCER_EPOCH = 51;
export const BASE_SEQUENCE = 53;
export const RECORDS_COUNT = 57;
export const RECORD_BATCH_OVERHEAD = 61;
/** Bytes before the batch length field's end: every batch (and legacy message) starts with offset + length. */
export const LOG_OVERHEAD = 12;

export const ATTR_COMPRESSION_MASK = 0x07;
export const ATTR_TIMESTAMP_TYPE = 0x08; // 1 = LogAppendTime
export const ATTR_TRANSACTIONAL = 0x10;
export const ATTR_CONTROL = 0x20;
export const ATTR_DELETE_HORIZON = 0x40;

export enum CompressionType {
  None = 0,
  Gzip = 1,
  Snappy = 2,
  Lz4 = 3,
  Zstd = 4,
}

/** A view of one batch inside a larger buffer; `start` is the batch's first byte. */
export interface BatchView {
  buf: Buffer;
  start: number;
}

export function batchSize(buf: Buffer, start: number): number {
  return buf.readInt32BE(start + BATCH_LENGTH) + LOG_OVERHEAD;
}
export function magicOf(buf: Buffer, start: number): number {
  return buf.readInt8(start + MAGIC);
}
export function baseOffsetOf(buf: Buffer, start: number): bigint {
  return buf.readBigInt64BE(start + BASE_OFFSET);
}
export function lastOffsetDeltaOf(buf: Buffer, start: number): number {
  return buf.readInt32BE(start + LAST_OFFSET_DELTA);
}
export function attributesOf(buf: Buffer, start: number): number {
  return buf.readInt16BE(start + ATTRIBUTES);
}
export function recordsCountOf(buf: Buffer, start: number): number {
  return buf.readInt32BE(start + RECORDS_COUNT);
}
export function maxTimestampOf(buf: Buffer, start: number): bigint {
  return buf.readBigInt64BE(start + MAX_TIMESTAMP);
}
export function baseTimestampOf(buf: Buffer, start: number): bigint {
  return buf.readBigInt64BE(start + BASE_TIMESTAMP);
}
export function producerIdOf(buf: Buffer, start: number): bigint {
  return buf.readBigInt64BE(start + PRODUCER_ID);
}
export function producerEpochOf(buf: Buffer, start: number): number {
  return buf.readInt16BE(start + PRODUCER_EPOCH);
}
export function baseSequenceOf(buf: Buffer, start: number): number {
  return buf.readInt32BE(start + BASE_SEQUENCE);
}
export function partitionLeaderEpochOf(buf: Buffer, start: number): number {
  return buf.readInt32BE(start + PARTITION_LEADER_EPOCH);
}

/** Stored CRC32C of the batch (covers attributes through the end of the batch). */
export function storedCrcOf(buf: Buffer, start: number): number {
  return buf.readUInt32BE(start + CRC);
}
export function computeCrc(buf: Buffer, start: number): number {
  const end = start + batchSize(buf, start);
  return crc32c(buf.subarray(start + ATTRIBUTES, end)) >>> 0;
}
export function isCrcValid(buf: Buffer, start: number): boolean {
  return storedCrcOf(buf, start) === computeCrc(buf, start);
}

/** Rewrite the base offset; the CRC does not cover it, so nothing else changes. */
export function setBaseOffset(buf: Buffer, start: number, offset: bigint): void {
  buf.writeBigInt64BE(offset, start + BASE_OFFSET);
}
export function setPartitionLeaderEpoch(buf: Buffer, start: number, epoch: number): void {
  buf.writeInt32BE(epoch, start + PARTITION_LEADER_EPOCH);
}
/** Stamp LogAppendTime: sets the timestamp-type bit and max timestamp, then re-computes the CRC. */
export function setLogAppendTime(buf: Buffer, start: number, timestampMs: bigint): void {
  const attrs = attributesOf(buf, start);
  buf.writeInt16BE(attrs | ATTR_TIMESTAMP_TYPE, start + ATTRIBUTES);
  buf.writeBigInt64BE(timestampMs, start + MAX_TIMESTAMP);
  buf.writeUInt32BE(computeCrc(buf, start), start + CRC);
}
export function rewriteCrc(buf: Buffer, start: number): void {
  buf.writeUInt32BE(computeCrc(buf, start), start + CRC);
}
export function lastOffsetOf(buf: Buffer, start: number): bigint {
  return baseOffsetOf(buf, start) + BigInt(lastOffsetDeltaOf(buf, start));
}
export function setMaxTimestamp(buf: Buffer, start: number, timestampMs: bigint): void {
  buf.writeBigInt64BE(timestampMs, start + MAX_TIMESTAMP);
}

// Number-valued accessors for the broker's hot paths: offsets and timestamps as plain numbers
// (exact below 2^53, as every offset and millisecond timestamp is), with no BigInt allocation.

/** Reads an int64 as a number (exact below 2^53). */
export function readInt64Number(buf: Buffer, pos: number): number {
  return buf.readInt32BE(pos) * 4294967296 + buf.readUInt32BE(pos + 4);
}
/** Writes a non-negative safe integer as an int64. */
export function writeInt64Number(buf: Buffer, value: number, pos: number): void {
  buf.writeUInt32BE(Math.floor(value / 4294967296), pos);
  buf.writeUInt32BE(value >>> 0, pos + 4);
}
export function baseOffsetAt(buf: Buffer, start: number): number {
  return readInt64Number(buf, start + BASE_OFFSET);
}
/** The batch's last offset: base offset + last offset delta. */
export function lastOffsetAt(buf: Buffer, start: number): number {
  return readInt64Number(buf, start + BASE_OFFSET) + buf.readInt32BE(start + LAST_OFFSET_DELTA);
}
export function maxTimestampAt(buf: Buffer, start: number): number {
  return readInt64Number(buf, start + MAX_TIMESTAMP);
}
export function baseTimestampAt(buf: Buffer, start: number): number {
  return readInt64Number(buf, start + BASE_TIMESTAMP);
}
/** Rewrites the base offset (a number); the CRC does not cover it. */
export function setBaseOffsetAt(buf: Buffer, start: number, offset: number): void {
  writeInt64Number(buf, offset, start + BASE_OFFSET);
}
/** Whether the producer id field holds an id (idempotent or transactional batch); -1 means none. */
export function hasProducerId(buf: Buffer, start: number): boolean {
  return buf.readInt32BE(start + PRODUCER_ID) >= 0;
}
export function compressionOf(buf: Buffer, start: number): CompressionType {
  return (attributesOf(buf, start) & ATTR_COMPRESSION_MASK) as CompressionType;
}
export function isControlBatch(buf: Buffer, start: number): boolean {
  return (attributesOf(buf, start) & ATTR_CONTROL) !== 0;
}
export function isTransactional(buf: Buffer, start: number): boolean {
  return (attributesOf(buf, start) & ATTR_TRANSACTIONAL) !== 0;
}
/** The timestamp-type attribute bit: LogAppendTime (set by the broker) rather than CreateTime. */
export function isLogAppendTime(buf: Buffer, start: number): boolean {
  return (attributesOf(buf, start) & ATTR_TIMESTAMP_TYPE) !== 0;
}

/** Every header field of a v2 batch, as `writeBatchHeader` lays them out. */
export interface BatchHeaderFields {
  baseOffset: bigint;
  partitionLeaderEpoch: number;
  attributes: number;
  lastOffsetDelta: number;
  baseTimestamp: bigint;
  maxTimestamp: bigint;
  producerId: bigint;
  producerEpoch: number;
  baseSequence: number;
  recordsCount: number;
}

/**
 * Fills in the 61-byte header of the batch that occupies all of `buf` (its records section must
 * already be in place), then the CRC over attributes..end. Shared by every batch writer.
 */
export function writeBatchHeader(buf: Buffer, h: BatchHeaderFields): void {
  buf.writeBigInt64BE(h.baseOffset, BASE_OFFSET);
  buf.writeInt32BE(buf.length - LOG_OVERHEAD, BATCH_LENGTH);
  buf.writeInt32BE(h.partitionLeaderEpoch, PARTITION_LEADER_EPOCH);
  buf.writeInt8(2, MAGIC);
  buf.writeInt16BE(h.attributes, ATTRIBUTES);
  buf.writeInt32BE(h.lastOffsetDelta, LAST_OFFSET_DELTA);
  buf.writeBigInt64BE(h.baseTimestamp, BASE_TIMESTAMP);
  buf.writeBigInt64BE(h.maxTimestamp, MAX_TIMESTAMP);
  buf.writeBigInt64BE(h.producerId, PRODUCER_ID);
  buf.writeInt16BE(h.producerEpoch, PRODUCER_EPOCH);
  buf.writeInt32BE(h.baseSequence, BASE_SEQUENCE);
  buf.writeInt32BE(h.recordsCount, RECORDS_COUNT);
  buf.writeUInt32BE(computeCrc(buf, 0), CRC);
}
