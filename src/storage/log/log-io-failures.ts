/**
 * What a log does when an operation on its files fails. The failure becomes the error the caller
 * sees: KafkaStorageError for what the operating system returned, UnexpectedStorageError for an
 * exception of ours. A fault that can mean a failing disk is reported (the manager takes the
 * directory offline); a full disk or too many open files is not. Every failure is counted in the
 * shared, rate-limited FailureLog, and the first success after failures says so there.
 */
import { KafkaStorageError, UnexpectedStorageError, errnoOf, isOsError, type StorageError } from '../errors.js';
import type { FailureLog } from '../../common/failure-log.js';

const PLURAL = { append: 'appends', read: 'reads', truncate: 'truncations', flush: 'flushes' } as const;

export type LogIoAction = keyof typeof PLURAL;

export class LogIoFailures {
  /**
   * @param logName the partition ("topic-partition"), for messages
   * @param logDir the log directory holding the partition, the key failures are counted under
   * @param onIoError told of failures that may mean a faulty directory
   */
  constructor(
    private readonly logName: string,
    private readonly logDir: string,
    private readonly failures: FailureLog,
    private readonly onIoError: (err: unknown) => void,
  ) {}

  /** Translates a failure of `action` into the error to throw, reporting and logging it. */
  toStorageError(action: LogIoAction, err: unknown): StorageError {
    const name = this.logName;
    // Only what the operating system returned can mean a failing disk; an exception of ours
    // (or a Node argument check) fails the one call, loudly, and the directory keeps serving.
    if (!isOsError(err)) {
      const detail = err instanceof Error ? (err.stack ?? err.message) : String(err);
      this.failures.failed(
        this.logDir,
        `unexpected ${PLURAL[action]} failures`,
        'error',
        () => `${action} of ${name} failed unexpectedly (not an I/O error; the log dir stays online): ${detail}`,
      );
      return new UnexpectedStorageError(`${action} failed for ${name}: ${(err as Error)?.message ?? String(err)}`, { cause: err });
    }
    const code = errnoOf(err);
    const full = code === 'ENOSPC' || code === 'EDQUOT';
    // A full disk or too many open files is the broker's condition, not a faulty directory.
    if (!full && code !== 'EMFILE' && code !== 'ENFILE') this.onIoError(err);
    const message = (err as Error)?.message ?? String(err);
    // Every failure is counted; at most one line per directory and interval is written.
    this.failures.failed(this.logDir, PLURAL[action], full ? 'error' : 'warn', () =>
      full
        ? `${action} of ${name} in log dir ${this.logDir} failed: ${code} (${message}); the disk is full: appends there are refused with KAFKA_STORAGE_ERROR until space is freed, stored data is still served`
        : `${action} of ${name} in log dir ${this.logDir} failed: ${code ?? 'error'} (${message})`,
    );
    return new KafkaStorageError(`${action} failed for ${name}: ${message}`, { cause: err });
  }

  /** `action` succeeded: ends a run of failures in the FailureLog (a cheap check when there is none). */
  succeeded(action: LogIoAction): void {
    if (this.failures.anyFailing) this.failures.succeeded(this.logDir, PLURAL[action]);
  }
}
