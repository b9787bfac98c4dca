/**
 * Typed storage errors. Each carries the Kafka error name the broker maps it to, so the
 * request layer never has to inspect messages or error codes of the underlying I/O.
 */
export type KafkaErrorName =
  | 'CORRUPT_MESSAGE'
  | 'MESSAGE_TOO_LARGE'
  | 'RECORD_LIST_TOO_LARGE'
  | 'KAFKA_STORAGE_ERROR'
  | 'OFFSET_OUT_OF_RANGE'
  | 'NOT_LEADER_OR_FOLLOWER'
  | 'INVALID_RECORD'
  | 'UNKNOWN_SERVER_ERROR';

export abstract class StorageError extends Error {
  abstract readonly kafkaError: KafkaErrorName;
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
  }
}

/** A batch failed validation: bad header, wrong magic, CRC mismatch, truncated bytes. */
export class CorruptRecordError extends StorageError {
  readonly kafkaError = 'CORRUPT_MESSAGE' as const;
}

/** A batch is larger than max.message.bytes (or the append is larger than a segment). */
export class RecordTooLargeError extends StorageError {
  readonly kafkaError = 'MESSAGE_TOO_LARGE' as const;
}

/** Any I/O failure of the log (ENOSPC, EIO, offline directory). Nothing acknowledged is lost. */
export class KafkaStorageError extends StorageError {
  readonly kafkaError = 'KAFKA_STORAGE_ERROR' as const;
}

/**
 * The log was closed (its partition deleted, or the broker stopping) while a request still held
 * it. Not a disk fault: the directory stays online, and the client retries after a metadata
 * refresh, which tells it the partition is gone or led elsewhere.
 */
export class LogClosedError extends StorageError {
  readonly kafkaError = 'NOT_LEADER_OR_FOLLOWER' as const;
}

export class OffsetOutOfRangeError extends StorageError {
  readonly kafkaError = 'OFFSET_OUT_OF_RANGE' as const;
  constructor(
    readonly requestedOffset: number,
    readonly logStartOffset: number,
    readonly logEndOffset: number,
  ) {
    super(`offset ${requestedOffset} is outside [${logStartOffset}, ${logEndOffset}]`);
  }
}

/** A follower append (assignOffsets=false) whose offsets are not beyond the log end. */
export class UnexpectedAppendOffsetError extends StorageError {
  readonly kafkaError = 'UNKNOWN_SERVER_ERROR' as const;
}

/** Another process holds the log directory lock. */
export class LogDirLockedError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'LogDirLockedError';
  }
}

/**
 * A storage call failed with an exception that is not an operating-system I/O error (a bug, or
 * one of Node's argument checks, codes ERR_*): that request fails, the directory stays online.
 */
export class UnexpectedStorageError extends StorageError {
  readonly kafkaError = 'UNKNOWN_SERVER_ERROR' as const;
}

/**
 * True for errors the operating system returned (errno codes: EIO, ENOENT, EBADF...), the only
 * ones that can mean a failing disk; false for JavaScript exceptions and Node's ERR_* checks.
 */
export function isOsError(err: unknown): boolean {
  const code = errnoOf(err);
  return code !== undefined && /^E[A-Z0-9]+$/.test(code);
}

export function errnoOf(err: unknown): string | undefined {
  if (err && typeof err === 'object' && 'code' in err && typeof err.code === 'string') return err.code;
  return undefined;
}
