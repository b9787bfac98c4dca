/**
 * Typed failure reasons for record batches, so the broker can map them to Kafka error codes
 * without parsing messages. Kafka itself reports structural damage (bad size, CRC) as
 * CORRUPT_MESSAGE (2) and semantic problems (counts, offsets, control records from clients)
 * as INVALID_RECORD (87).
 */

export type RecordsErrorReason =
  | 'truncated' // buffer ends before the size the batch declares
  | 'bad_length' // declared length smaller than the fixed overhead
  | 'bad_magic' // magic byte not 0, 1 or 2 (or not the one expected)
  | 'crc_mismatch'
  | 'bad_compression' // compression id 5..7
  | 'decompression_failed'
  | 'bad_record' // a record's internal lengths are inconsistent
  | 'record_count_mismatch' // header count differs from records actually present
  | 'bad_record_count' // header count <= 0 where records are required
  | 'offset_range_mismatch' // lastOffsetDelta + 1 differs from the record count
  | 'inner_offset_mismatch' // offset deltas not 0..n-1 inside a compressed batch
  | 'control_batch_from_client' // clients may not write control batches
  | 'invalid_sequence' // idempotent batch (producerId >= 0) with a negative base sequence
  | 'decompressed_too_large'; // the records inflate past the cap (a compression bomb, or simply too big)

export type KafkaRecordsErrorCode = 'CORRUPT_MESSAGE' | 'INVALID_RECORD' | 'MESSAGE_TOO_LARGE';

const CORRUPT: ReadonlySet<RecordsErrorReason> = new Set<RecordsErrorReason>([
  'truncated',
  'bad_length',
  'bad_magic',
  'crc_mismatch',
  'bad_compression',
  'decompression_failed',
  'bad_record',
]);

export function kafkaErrorFor(reason: RecordsErrorReason): KafkaRecordsErrorCode {
  if (reason === 'decompressed_too_large') return 'MESSAGE_TOO_LARGE';
  return CORRUPT.has(reason) ? 'CORRUPT_MESSAGE' : 'INVALID_RECORD';
}

/** Numeric Kafka error codes for the names above. */
export const KAFKA_ERROR_CODE: Readonly<{ [K in KafkaRecordsErrorCode]: number }> = {
  CORRUPT_MESSAGE: 2,
  MESSAGE_TOO_LARGE: 10,
  INVALID_RECORD: 87,
};

export interface BatchValidationError {
  reason: RecordsErrorReason;
  kafkaError: KafkaRecordsErrorCode;
  message: string;
}

export function validationError(reason: RecordsErrorReason, message: string): BatchValidationError {
  return { reason, kafkaError: kafkaErrorFor(reason), message };
}

export class RecordsError extends Error {
  override name = 'RecordsError';
  readonly kafkaError: KafkaRecordsErrorCode;
  constructor(
    readonly reason: RecordsErrorReason,
    message: string,
  ) {
    super(message);
    this.kafkaError = kafkaErrorFor(reason);
  }
  static from(err: BatchValidationError): RecordsError {
    return new RecordsError(err.reason, err.message);
  }
}
