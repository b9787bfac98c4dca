/**
 * One v2 record (inside a RecordBatch, magic 2):
 *
 *   length: varint (bytes after this field)
 *   attributes: int8 (unused, 0)
 *   timestampDelta: varlong (relative to the batch's baseTimestamp)
 *   offsetDelta: varint (relative to the batch's baseOffset)
 *   key: varint length (-1 = null) + bytes
 *   value: varint length (-1 = null) + bytes
 *   headers: varint count, then per header: varint key length + utf8 key, varint value length (-1 = null) + bytes
 *
 * Number vs bigint: deltas are `number` (int32 offsetDelta; timestampDelta limited to ±2^52 ms,
 * see varint.ts). Absolute offsets and timestamps live at batch level as `bigint`.
 *
 * Decoded keys, values and header values are `subarray` views into the input buffer (zero copy):
 * copy them if the input buffer is going to be reused.
 */
import { type Cursor, readVarInt, readVarLongNumber, sizeOfVarInt, sizeOfVarLongNumber, writeVarInt, writeVarLongNumber } from './varint.js';
import { RecordsError } from './errors.js';

/** length + attributes + timestampDelta + offsetDelta + key + value + header count, one byte each. */
export const MIN_RECORD_SIZE = 7;

export interface RecordHeader {
  key: string;
  value: Buffer | null;
}

/** A v2 record. Named KafkaRecord so it does not shadow TypeScript's built-in `Record<K, V>`. */
export interface KafkaRecord {
  attributes: number;
  timestampDelta: number;
  offsetDelta: number;
  key: Buffer | null;
  value: Buffer | null;
  headers: RecordHeader[];
}

function sizeOfNullableBytes(b: Buffer | null): number {
  return b === null ? 1 : sizeOfVarInt(b.length) + b.length;
}

/** Bytes of the record after its own length prefix. */
export function recordBodySize(r: KafkaRecord): number {
  let size = 1 + sizeOfVarLongNumber(r.timestampDelta) + sizeOfVarInt(r.offsetDelta);
  size += sizeOfNullableBytes(r.key) + sizeOfNullableBytes(r.value);
  size += sizeOfVarInt(r.headers.length);
  for (const h of r.headers) {
    const keyLen = Buffer.byteLength(h.key, 'utf8');
    size += sizeOfVarInt(keyLen) + keyLen + sizeOfNullableBytes(h.value);
  }
  return size;
}

/** Total encoded size of the record including its length prefix. */
export function encodedRecordSize(r: KafkaRecord): number {
  const body = recordBodySize(r);
  return sizeOfVarInt(body) + body;
}

function writeNullableBytes(buf: Buffer, offset: number, b: Buffer | null): number {
  if (b === null) return writeVarInt(buf, offset, -1);
  offset = writeVarInt(buf, offset, b.length);
  return offset + b.copy(buf, offset);
}

/** Writes the record at `offset` (buffer must have room, see encodedRecordSize); returns the end offset. */
export function writeRecord(buf: Buffer, offset: number, r: KafkaRecord, bodySize = recordBodySize(r)): number {
  offset = writeVarInt(buf, offset, bodySize);
  buf.writeInt8(r.attributes, offset++);
  offset = writeVarLongNumber(buf, offset, r.timestampDelta);
  offset = writeVarInt(buf, offset, r.offsetDelta);
  offset = writeNullableBytes(buf, offset, r.key);
  offset = writeNullableBytes(buf, offset, r.value);
  offset = writeVarInt(buf, offset, r.headers.length);
  for (const h of r.headers) {
    const keyLen = Buffer.byteLength(h.key, 'utf8');
    offset = writeVarInt(buf, offset, keyLen);
    offset += buf.write(h.key, offset, keyLen, 'utf8');
    offset = writeNullableBytes(buf, offset, h.value);
  }
  return offset;
}

/** Encodes records back to back (the uncompressed records section of a batch). */
export function encodeRecords(records: readonly KafkaRecord[]): Buffer {
  const bodies = new Array<number>(records.length);
  let total = 0;
  let i = 0;
  for (const record of records) {
    const body = recordBodySize(record);
    bodies[i++] = body;
    total += sizeOfVarInt(body) + body;
  }
  const buf = Buffer.allocUnsafe(total);
  let offset = 0;
  i = 0;
  for (const record of records) offset = writeRecord(buf, offset, record, bodies[i++]);
  return buf;
}

function readLength(buf: Buffer, cur: Cursor, end: number, what: string): number {
  const len = readVarInt(buf, cur);
  if (len < -1 || (len > 0 && cur.pos + len > end)) {
    throw new RecordsError('bad_record', `invalid ${what} length ${len} in record`);
  }
  return len;
}

function readNullableBytes(buf: Buffer, cur: Cursor, end: number, what: string): Buffer | null {
  const len = readLength(buf, cur, end, what);
  if (len < 0) return null;
  const start = cur.pos;
  cur.pos += len;
  return buf.subarray(start, start + len);
}

/** Decodes one record at `cur.pos`, never reading past `limit`; advances the cursor past it. */
export function readRecord(buf: Buffer, cur: Cursor, limit: number = buf.length): KafkaRecord {
  let bodySize: number;
  try {
    bodySize = readVarInt(buf, cur);
  } catch (err) {
    throw new RecordsError('bad_record', `malformed record length: ${(err as Error).message}`);
  }
  const bodyStart = cur.pos;
  const end = bodyStart + bodySize;
  if (bodySize < 1 || end > limit) throw new RecordsError('bad_record', `invalid record size ${bodySize}`);
  try {
    const attributes = buf.readInt8(cur.pos++);
    const timestampDelta = readVarLongNumber(buf, cur);
    const offsetDelta = readVarInt(buf, cur);
    const key = readNullableBytes(buf, cur, end, 'key');
    const value = readNullableBytes(buf, cur, end, 'value');
    const headerCount = readVarInt(buf, cur);
    if (headerCount < 0) throw new RecordsError('bad_record', `invalid header count ${headerCount}`);
    const headers: RecordHeader[] = [];
    for (let i = 0; i < headerCount; i++) {
      const keyLen = readLength(buf, cur, end, 'header key');
      if (keyLen < 0) throw new RecordsError('bad_record', 'null header key');
      const hk = buf.toString('utf8', cur.pos, cur.pos + keyLen);
      cur.pos += keyLen;
      headers.push({ key: hk, value: readNullableBytes(buf, cur, end, 'header value') });
    }
    if (cur.pos !== end) {
      throw new RecordsError('bad_record', `record declared ${bodySize} bytes but used ${cur.pos - bodyStart}`);
    }
    return { attributes, timestampDelta, offsetDelta, key, value, headers };
  } catch (err) {
    if (err instanceof RecordsError) throw err;
    throw new RecordsError('bad_record', `malformed record: ${(err as Error).message}`);
  }
}

/** Decodes exactly `count` records filling `section` (an uncompressed records section). */
export function decodeRecordsSection(section: Buffer, count: number): KafkaRecord[] {
  // Refuse before allocating: a hostile count must not make us build a huge array.
  if (count * MIN_RECORD_SIZE > section.length) {
    throw new RecordsError('record_count_mismatch', `batch declares ${count} records but has only ${section.length} bytes`);
  }
  const records = new Array<KafkaRecord>(count);
  const cur = { pos: 0 };
  for (let i = 0; i < count; i++) {
    if (cur.pos >= section.length) {
      throw new RecordsError('record_count_mismatch', `batch declares ${count} records but holds ${i}`);
    }
    records[i] = readRecord(section, cur, section.length);
  }
  if (cur.pos !== section.length) {
    throw new RecordsError('record_count_mismatch', `bytes left after the ${count} declared records`);
  }
  return records;
}
