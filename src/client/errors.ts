/**
 * Errors the client raises. Broker answers become `KafkaError` (the protocol's own class, with
 * Kafka's code and name); transport problems become `ConnectionError`, which is always
 * retriable: the caller refreshes metadata and tries another connection.
 */
import { KafkaError, errorName, isRetriable } from '../protocol/errors.js';

export { KafkaError, errorName, isRetriable };

export class ConnectionError extends Error {
  override name = 'ConnectionError';
  readonly retriable = true;
}

export class TimeoutError extends Error {
  override name = 'TimeoutError';
  readonly retriable = true;
}

/** The broker does not serve any version of an API this client can speak. */
export class UnsupportedApiError extends Error {
  override name = 'UnsupportedApiError';
}

/** Throws a KafkaError for a non-zero code; `what` says which topic/partition/group it was about. */
export function throwIfError(code: number, what?: string, message?: string | null): void {
  if (code === 0) return;
  const name = errorName(code);
  throw new KafkaError(code, message ? `${name}: ${message}` : what ? `${name} (${what})` : name);
}

/** Whether an error is worth retrying after a metadata refresh / backoff. */
export function isRetriableError(err: unknown): boolean {
  if (err instanceof KafkaError) return isRetriable(err.code);
  return err instanceof ConnectionError || err instanceof TimeoutError;
}
