/**
 * Whether a local log may still be used, and what a failure on it becomes. Closed (its partition
 * deleted, the broker stopping): later calls fail with LogClosedError, and so do calls that were
 * in flight when its files closed, never a reason to take the directory offline. Offline (its log
 * directory failed): calls fail with KafkaStorageError. Apart from LocalLog so that these rules
 * read in one place, beside the I/O-failure translation they come before (log-io-failures.ts).
 */
import { KafkaStorageError, LogClosedError, type StorageError } from '../errors.js';
import type { LogIoAction, LogIoFailures } from './log-io-failures.js';

export class LogAvailability {
  offline = false;
  closed = false;

  constructor(
    private readonly logName: string,
    private readonly dir: string,
    private readonly ioFailures: LogIoFailures,
  ) {}

  closedError(action: string): LogClosedError {
    return new LogClosedError(`${action} of ${this.logName}: the log is closed (its partition was deleted or the broker is stopping)`);
  }

  /** Throws unless the log is open and online. */
  check(action = 'access'): void {
    if (this.closed) throw this.closedError(action);
    if (this.offline) throw new KafkaStorageError(`log ${this.logName} is in an offline log directory ${this.dir}`);
  }

  /** Translates an I/O failure into the error to throw (LogIoFailures), unless the log was closed under it. */
  failure(action: LogIoAction, err: unknown): StorageError {
    // Files closed under a request (its partition deleted meanwhile) fail with EBADF or ENOENT:
    // that request's problem, not the directory's.
    if (this.closed) return this.closedError(action);
    return this.ioFailures.toStorageError(action, err);
  }

  /** Runs a lookup that needs no lock; a failure because the log closed while it ran is reported as LogClosedError. */
  async lookUp<T>(action: string, find: () => Promise<T>): Promise<T> {
    this.check(action);
    return find().catch((err: unknown) => {
      throw this.closed ? this.closedError(action) : err;
    });
  }
}
