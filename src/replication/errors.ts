/** Maps storage and records failures to Kafka error codes for responses. */
import { ErrorCode, KafkaError } from '../protocol/errors.js';
import { RecordsError } from '../protocol/records/index.js';
import { StorageError } from '../storage/errors.js';

export function errorCodeOf(err: unknown): number {
  if (err instanceof KafkaError) return err.code;
  if (err instanceof StorageError) {
    if (err.kafkaError === 'UNKNOWN_SERVER_ERROR') return ErrorCode.UNKNOWN_SERVER_ERROR;
    return ErrorCode[err.kafkaError];
  }
  if (err instanceof RecordsError) return ErrorCode[err.kafkaError];
  return ErrorCode.UNKNOWN_SERVER_ERROR;
}
