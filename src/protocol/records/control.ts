/**
 * Control batches: transaction markers written by the broker. The record key is
 * [int16 version = 0][int16 type] (ABORT = 0, COMMIT = 1); the value of an end-transaction
 * marker is [int16 version = 0][int32 coordinator epoch].
 */
import { encodeBatch, type RecordBatch } from './batch.js';
import { RecordsError } from './errors.js';
import type { KafkaRecord } from './record.js';

export enum ControlRecordType {
  Abort = 0,
  Commit = 1,
}

export interface ControlRecordKey {
  version: number;
  type: number;
}

export function encodeControlRecordKey(type: ControlRecordType, version = 0): Buffer {
  const key = Buffer.allocUnsafe(4);
  key.writeInt16BE(version, 0);
  key.writeInt16BE(type, 2);
  return key;
}

export function decodeControlRecordKey(key: Buffer | null): ControlRecordKey {
  if (key === null || key.length < 4) throw new RecordsError('bad_record', 'control record key shorter than 4 bytes');
  return { version: key.readInt16BE(0), type: key.readInt16BE(2) };
}

export interface EndTxnMarker {
  type: ControlRecordType;
  coordinatorEpoch: number;
}

export function encodeEndTxnMarkerValue(coordinatorEpoch: number): Buffer {
  const value = Buffer.allocUnsafe(6);
  value.writeInt16BE(0, 0);
  value.writeInt32BE(coordinatorEpoch, 2);
  return value;
}

export interface ControlBatchInput {
  type: ControlRecordType;
  producerId: bigint;
  producerEpoch: number;
  coordinatorEpoch: number;
  timestamp: bigint;
  baseOffset?: bigint;
  partitionLeaderEpoch?: number;
}

/** A transactional control batch holding one end-transaction marker. */
export function encodeControlBatch(input: ControlBatchInput): Buffer {
  const record: KafkaRecord = {
    attributes: 0,
    timestampDelta: 0,
    offsetDelta: 0,
    key: encodeControlRecordKey(input.type),
    value: encodeEndTxnMarkerValue(input.coordinatorEpoch),
    headers: [],
  };
  return encodeBatch({
    records: [record],
    baseOffset: input.baseOffset ?? 0n,
    partitionLeaderEpoch: input.partitionLeaderEpoch ?? -1,
    isControl: true,
    isTransactional: true,
    baseTimestamp: input.timestamp,
    maxTimestamp: input.timestamp,
    producerId: input.producerId,
    producerEpoch: input.producerEpoch,
    baseSequence: -1,
  });
}

/** Reads the marker from a decoded control batch, or null if it is not an end-transaction marker. */
export function endTxnMarkerOf(batch: RecordBatch): EndTxnMarker | null {
  const record = batch.records[0];
  if (!batch.isControl || record === undefined) return null;
  const key = decodeControlRecordKey(record.key);
  if (key.type !== ControlRecordType.Abort && key.type !== ControlRecordType.Commit) return null;
  if (record.value === null || record.value.length < 6) {
    throw new RecordsError('bad_record', 'end-transaction marker value shorter than 6 bytes');
  }
  return { type: key.type, coordinatorEpoch: record.value.readInt32BE(2) };
}
