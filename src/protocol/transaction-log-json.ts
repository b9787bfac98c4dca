/**
 * `__transaction_state` records (TransactionLogKey/Value, each an int16 version then the struct)
 * decoded into what Kafka's generated JSON converters write for them: the fields of the record's
 * version in spec order, tagged fields only when not at their default, int64 as numbers. One
 * decoding for both readers: kafka-dump-log --transaction-log-decoder and the console consumer's
 * TransactionLogMessageFormatter.
 */
import { TransactionLogKeyCodec, TransactionLogValueCodec, type TransactionLogValue } from './coordinator-records/index.js';
import { Reader } from './primitives/index.js';

/** A key or value: its version, and its data, or 'unknown' for a version Kafka cannot read. */
export interface TransactionLogPart<T> {
  version: number;
  data: T | 'unknown';
}

export interface DecodedTransactionLog {
  key: TransactionLogPart<{ transactionalId: string }> | null;
  /** Null for a tombstone. */
  value: TransactionLogPart<Record<string, unknown>> | null;
  /** The decoded value, for formatters that print it their own way. */
  raw: TransactionLogValue | null;
}

const inRange = (version: number, codec: { minVersion: number; maxVersion: number }): boolean => version >= codec.minVersion && version <= codec.maxVersion;

/** Decodes a record; throws the codec's DecodeError on a malformed body of a known version. */
export function decodeTransactionLog(key: Buffer | null, value: Buffer | null): DecodedTransactionLog {
  let k: DecodedTransactionLog['key'] = null;
  if (key !== null && key.length >= 2) {
    const version = key.readInt16BE(0);
    k = {
      version,
      data: inRange(version, TransactionLogKeyCodec)
        ? { transactionalId: TransactionLogKeyCodec.read(new Reader(key, 2), version).transactionalId }
        : 'unknown',
    };
  }
  let v: DecodedTransactionLog['value'] = null;
  let raw: TransactionLogValue | null = null;
  if (value !== null && value.length >= 2) {
    const version = value.readInt16BE(0);
    if (inRange(version, TransactionLogValueCodec)) {
      raw = TransactionLogValueCodec.read(new Reader(value, 2), version);
      v = { version, data: transactionLogValueJson(raw, version) };
    } else v = { version, data: 'unknown' };
  }
  return { key: k, value: v, raw };
}

/** TransactionLogValue as Kafka's TransactionLogValueJsonConverter.write(value, version). */
export function transactionLogValueJson(v: TransactionLogValue, version: number): Record<string, unknown> {
  const out: Record<string, unknown> = { producerId: Number(v.producerId) };
  const tagged = version >= 1;
  if (tagged && v.previousProducerId !== -1n) out.previousProducerId = Number(v.previousProducerId);
  if (tagged && v.nextProducerId !== -1n) out.nextProducerId = Number(v.nextProducerId);
  out.producerEpoch = v.producerEpoch;
  out.transactionTimeoutMs = v.transactionTimeoutMs;
  out.transactionStatus = v.transactionStatus;
  out.transactionPartitions =
    v.transactionPartitions === null ? null : v.transactionPartitions.map((p) => ({ topic: p.topic, partitionIds: [...p.partitionIds] }));
  out.transactionLastUpdateTimestampMs = Number(v.transactionLastUpdateTimestampMs);
  out.transactionStartTimestampMs = Number(v.transactionStartTimestampMs);
  if (tagged && v.clientTransactionVersion !== 0) out.clientTransactionVersion = v.clientTransactionVersion;
  return out;
}
