/**
 * The records of `__transaction_state` in Kafka's binary form: key = int16 version 0 +
 * TransactionLogKey, value = int16 version 0 + TransactionLogValue (what Kafka 3.9 writes, so its
 * formatter and dump tools read Fjord's partitions), a null value being the tombstone of an
 * expired transactional id.
 */
import { Reader, Writer } from '../../protocol/primitives/index.js';
import { TransactionLogKeyCodec, TransactionLogValueCodec } from '../../protocol/coordinator-records/index.js';
import type { EncodedRecord } from '../runtime/types.js';
import { NO_PRODUCER_EPOCH, NO_PRODUCER_ID, txnStateFromId, type TxnMetadata } from './txn-state.js';

const KEY_VERSION = 0;
const VALUE_VERSION = 0;

export interface TxnRecord {
  transactionalId: string;
  /** null: tombstone (the id expired). */
  metadata: TxnMetadata | null;
}

export function encodeTxnRecord(r: TxnRecord): EncodedRecord {
  const kw = new Writer(32);
  kw.int16(KEY_VERSION);
  TransactionLogKeyCodec.write(kw, { transactionalId: r.transactionalId }, KEY_VERSION);
  const key = Buffer.from(kw.result());
  const m = r.metadata;
  if (m === null) return { key, value: null };
  const vw = new Writer(64);
  vw.int16(VALUE_VERSION);
  TransactionLogValueCodec.write(
    vw,
    {
      producerId: m.producerId,
      producerEpoch: m.producerEpoch,
      transactionTimeoutMs: m.txnTimeoutMs,
      transactionStatus: m.state,
      // Kafka writes no partitions (null) for Empty and the Complete states.
      transactionPartitions:
        m.topicPartitions.size === 0 ? null : [...m.topicPartitions].map(([topic, ps]) => ({ topic, partitionIds: [...ps].sort((a, b) => a - b) })),
      transactionLastUpdateTimestampMs: BigInt(m.txnLastUpdateTimestamp),
      transactionStartTimestampMs: BigInt(m.txnStartTimestamp),
    },
    VALUE_VERSION,
  );
  return { key, value: Buffer.from(vw.result()) };
}

/** null: a key version this coordinator does not know (skipped while loading). */
export function decodeTxnRecord(key: Buffer, value: Buffer | null): TxnRecord | null {
  const kr = new Reader(key);
  const kv = kr.int16();
  if (kv !== KEY_VERSION) return null;
  const { transactionalId } = TransactionLogKeyCodec.read(kr, kv);
  if (value === null) return { transactionalId, metadata: null };
  const vr = new Reader(value);
  const vv = vr.int16();
  if (vv < 0 || vv > TransactionLogValueCodec.maxVersion) return null;
  const v = TransactionLogValueCodec.read(vr, vv);
  const state = txnStateFromId(v.transactionStatus);
  if (state === undefined) return null;
  const topicPartitions = new Map<string, Set<number>>();
  for (const p of v.transactionPartitions ?? []) {
    let s = topicPartitions.get(p.topic);
    if (!s) topicPartitions.set(p.topic, (s = new Set()));
    for (const id of p.partitionIds) s.add(id);
  }
  return {
    transactionalId,
    metadata: {
      transactionalId,
      producerId: v.producerId,
      lastProducerId: vv >= 1 ? v.previousProducerId : NO_PRODUCER_ID,
      producerEpoch: v.producerEpoch,
      lastProducerEpoch: NO_PRODUCER_EPOCH,
      txnTimeoutMs: v.transactionTimeoutMs,
      state,
      topicPartitions,
      txnStartTimestamp: Number(v.transactionStartTimestampMs),
      txnLastUpdateTimestamp: Number(v.transactionLastUpdateTimestampMs),
    },
  };
}
