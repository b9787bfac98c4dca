/**
 * Decodes __consumer_offsets records for kafka-dump-log --offsets-decoder, and __transaction_state
 * records for --transaction-log-decoder, printing keys and values as JSON the way Kafka's
 * DumpLogSegments does ({"type":...,"data":...}; a tombstone is <DELETE>).
 */
import { GroupMetadataKeyCodec, GroupMetadataValueCodec, OffsetCommitKeyCodec, OffsetCommitValueCodec } from '../../protocol/coordinator-records/index.js';
import { decodeTransactionLog } from '../../protocol/transaction-log-json.js';
import { Reader, type MessageCodec } from '../../protocol/primitives/index.js';

function toJson(value: unknown): string {
  return JSON.stringify(value, (_k, v: unknown) => {
    if (typeof v === 'bigint') return Number(v);
    if (v && typeof v === 'object' && 'type' in v && (v as { type: unknown }).type === 'Buffer' && 'data' in v) {
      return Buffer.from((v as { data: number[] }).data).toString('base64');
    }
    return v;
  });
}

function decodeWith<T>(codec: MessageCodec<T>, buf: Buffer, version: number): T {
  return codec.read(new Reader(buf, 2), version);
}

/** Returns [keyText, payloadText]; unknown formats fall back to a plain description. */
export function decodeOffsetsRecord(key: Buffer | null, value: Buffer | null): { key: string; payload: string } {
  if (key === null || key.length < 2) return { key: 'null', payload: value === null ? 'null' : `<${value.length} bytes>` };
  const keyVersion = key.readInt16BE(0);
  try {
    if (keyVersion === 0 || keyVersion === 1) {
      const k = decodeWith(OffsetCommitKeyCodec, key, keyVersion);
      const payload = value === null ? '<DELETE>' : valueJson(OffsetCommitValueCodec, value);
      return { key: toJson({ type: String(keyVersion), data: k }), payload };
    }
    if (keyVersion === 2) {
      const k = decodeWith(GroupMetadataKeyCodec, key, keyVersion);
      const payload = value === null ? '<DELETE>' : valueJson(GroupMetadataValueCodec, value);
      return { key: toJson({ type: String(keyVersion), data: k }), payload };
    }
  } catch (err) {
    return { key: `<undecodable key version ${keyVersion}: ${(err as Error).message}>`, payload: value === null ? 'null' : `<${value.length} bytes>` };
  }
  return { key: `unknown::version=${keyVersion}`, payload: value === null ? 'null' : `<${value.length} bytes>` };
}

function valueJson<T>(codec: MessageCodec<T>, value: Buffer): string {
  const version = value.readInt16BE(0);
  return toJson({ version: String(version), data: decodeWith(codec, value, version) });
}

/**
 * A __transaction_state record as [keyText, payloadText], DumpLogSegments' form of what Kafka's
 * JSON converters write (decodeTransactionLog, shared with the console consumer's formatter).
 */
export function decodeTransactionLogRecord(key: Buffer | null, value: Buffer | null): { key: string; payload: string } {
  const opaque = value === null ? 'null' : `<${value.length} bytes>`;
  if (key === null || key.length < 2) return { key: 'null', payload: opaque };
  const keyVersion = key.readInt16BE(0);
  try {
    const d = decodeTransactionLog(key, value);
    if (!d.key || d.key.data === 'unknown') return { key: `unknown::version=${keyVersion}`, payload: opaque };
    const payload =
      d.value === null
        ? '<DELETE>'
        : d.value.data === 'unknown'
          ? `unknown::version=${d.value.version}`
          : toJson({ version: String(d.value.version), data: d.value.data });
    return { key: toJson({ type: String(keyVersion), data: d.key.data }), payload };
  } catch (err) {
    return { key: `<undecodable key version ${keyVersion}: ${(err as Error).message}>`, payload: opaque };
  }
}
