/**
 * What a produce payload must satisfy before it reaches a log: legacy message sets are
 * up-converted to one v2 batch, v2 batches are validated in place (no per-record objects),
 * and Produce v3+ carries exactly one batch per partition, as Kafka requires.
 */
import { ErrorCode } from '../protocol/errors.js';
import {
  BATCH_LENGTH,
  KAFKA_ERROR_CODE,
  LOG_OVERHEAD,
  MAGIC,
  RecordsError,
  convertLegacyToV2,
  validateBatches,
} from '../protocol/records/index.js';

export interface RecordError {
  batchIndex: number;
  message: string;
}

export type PreparedRecords =
  | { ok: true; batches: Buffer }
  | { ok: false; errorCode: number; message: string; recordErrors: RecordError[] };

function refuse(errorCode: number, message: string): PreparedRecords {
  return { ok: false, errorCode, message, recordErrors: errorCode === ErrorCode.INVALID_RECORD ? [{ batchIndex: 0, message }] : [] };
}

export function prepareProducedRecords(records: Buffer | null, opts: { fromClient: boolean; produceVersion?: number }): PreparedRecords {
  if (records === null || records.length < LOG_OVERHEAD + 5) return refuse(ErrorCode.CORRUPT_MESSAGE, 'empty or truncated record set');
  let batches = records;
  if (records.readInt8(MAGIC) < 2) {
    if (opts.produceVersion !== undefined && opts.produceVersion >= 3)
      return refuse(ErrorCode.INVALID_RECORD, 'Produce v3+ must carry record batches of magic 2');
    try {
      batches = convertLegacyToV2(records);
    } catch (err) {
      const code = err instanceof RecordsError ? KAFKA_ERROR_CODE[err.kafkaError] : ErrorCode.CORRUPT_MESSAGE;
      return refuse(code, (err as Error).message);
    }
    if (batches.length === 0) return refuse(ErrorCode.CORRUPT_MESSAGE, 'message set holds no complete message');
  }
  const invalid = validateBatches(batches, { fromClient: opts.fromClient });
  if (invalid) return refuse(KAFKA_ERROR_CODE[invalid.kafkaError], invalid.message);
  if (opts.fromClient && opts.produceVersion !== undefined && opts.produceVersion >= 3) {
    const first = batches.readInt32BE(BATCH_LENGTH) + LOG_OVERHEAD;
    if (first !== batches.length) return refuse(ErrorCode.INVALID_RECORD, 'Produce v3+ must carry exactly one record batch per partition');
  }
  return { ok: true, batches };
}
