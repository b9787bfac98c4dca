/**
 * Conversions between legacy message sets (magic 0/1) and v2 record batches: up-conversion of
 * what old producers send, down-conversion of what old consumers fetch.
 */
import { CompressionType } from './batch-header.js';
import { TimestampType, decodeBatch, encodeBatch, iterateBatches } from './batch.js';
import { RecordsError } from './errors.js';
import {
  type LegacyMagic,
  encodeLegacyMessage,
  readLegacyMessageSet,
} from './legacy-message.js';
import type { KafkaRecord } from './record.js';

export * from './legacy-message.js';

const ATTR_LOG_APPEND_TIME = 0x08;

export interface ConvertToV2Options {
  /** Codec for the new batch; default: the codec the legacy set used (None if uncompressed). */
  compression?: CompressionType;
  /**
   * Keep the legacy offsets (baseOffset = first offset, deltas relative to it). Default false:
   * offsetDelta = position and baseOffset = 0, since the broker assigns offsets on produce and
   * old producers write placeholders (-1, or 0..n-1 inside wrappers).
   */
  preserveOffsets?: boolean;
}

/**
 * Converts a legacy message set into ONE v2 batch (as Kafka does on produce from old clients).
 * Magic-0 messages get timestamp -1 (NO_TIMESTAMP). Returns an empty buffer when the set holds
 * no complete message. Throws RecordsError on corrupt input.
 */
export function convertLegacyToV2(buf: Buffer, options: ConvertToV2Options = {}): Buffer {
  const { messages, compression } = readLegacyMessageSet(buf);
  if (messages.length === 0) return Buffer.alloc(0);
  const first = messages[0];
  const baseOffset = options.preserveOffsets ? first.offset : 0n;
  const baseTimestamp = first.timestamp;
  let maxTimestamp = baseTimestamp;
  let logAppendTime = false;
  const records: KafkaRecord[] = messages.map((m, i) => {
    if (m.timestamp > maxTimestamp) maxTimestamp = m.timestamp;
    if (m.timestampType === TimestampType.LogAppendTime) logAppendTime = true;
    const offsetDelta = options.preserveOffsets ? Number(m.offset - baseOffset) : i;
    const timestampDelta = Number(m.timestamp - baseTimestamp);
    if (!Number.isSafeInteger(timestampDelta) || !Number.isSafeInteger(offsetDelta) || offsetDelta < 0 || offsetDelta > 0x7fffffff) {
      throw new RecordsError('bad_record', `legacy message ${i} has an offset or timestamp out of range`);
    }
    return { attributes: 0, timestampDelta, offsetDelta, key: m.key, value: m.value, headers: [] };
  });
  return encodeBatch({
    records,
    baseOffset,
    compression: options.compression ?? compression,
    timestampType: logAppendTime ? TimestampType.LogAppendTime : TimestampType.CreateTime,
    baseTimestamp,
    maxTimestamp,
  });
}

/** Re-encodes one legacy entry at a lower magic (1 -> 0), expanding compressed wrappers. */
function downConvertLegacyEntry(entry: Buffer, toMagic: LegacyMagic, out: Buffer[]): void {
  for (const m of readLegacyMessageSet(entry, { verifyCrc: false }).messages) {
    out.push(encodeLegacyMessage(toMagic, m.offset, 0, m.timestamp, m.key, m.value));
  }
}

/**
 * Converts fetched log data (v2 batches, possibly mixed with legacy entries) for a client that
 * only understands `toMagic`. Output is uncompressed; entries already at or below `toMagic`
 * are copied unchanged. Control batches are dropped (old clients know nothing of
 * transactions) and headers are lost. A partial trailing batch is ignored, as in Kafka.
 */
export function downConvert(v2Batches: Buffer, toMagic: LegacyMagic): Buffer {
  const out: Buffer[] = [];
  for (const entry of iterateBatches(v2Batches)) {
    const bytes = v2Batches.subarray(entry.start, entry.start + entry.size);
    if (entry.magic <= toMagic) {
      out.push(bytes);
      continue;
    }
    if (entry.magic !== 2) {
      downConvertLegacyEntry(bytes, toMagic, out);
      continue;
    }
    // Data comes from our own log, already validated on append: skip the CRC pass.
    const batch = decodeBatch(v2Batches, entry.start, { verifyCrc: false });
    if (batch.isControl) continue;
    const logAppend = batch.timestampType === TimestampType.LogAppendTime;
    const attributes = toMagic === 1 && logAppend ? ATTR_LOG_APPEND_TIME : 0;
    for (const r of batch.records) {
      const timestamp = logAppend ? batch.maxTimestamp : batch.baseTimestamp + BigInt(r.timestampDelta);
      out.push(encodeLegacyMessage(toMagic, batch.baseOffset + BigInt(r.offsetDelta), attributes, timestamp, r.key, r.value));
    }
  }
  return out.length === 1 ? out[0] : Buffer.concat(out);
}
