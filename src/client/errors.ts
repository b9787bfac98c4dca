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
  /** The socket's error code when the connection could not be opened (ECONNREFUSED, ENOTFOUND, ...). */
  readonly errno: string | undefined;
  constructor(message: string, errno?: string) {
    super(message);
    this.errno = errno;
  }
}

/**
 * No broker ever answered: every bootstrap address refused the connection or did not resolve,
 * for as long as the client was told to keep trying (ClientOptions.unreachable). Not retriable.
 */
export class BrokersUnreachableError extends Error {
  override name = 'BrokersUnreachableError';
  constructor(
    message: string,
    /** The client setting that makes it wait longer (default.api.timeout.ms, max.block.ms). */
    readonly waitLongerSetting: string,
  ) {
    super(message);
  }
}

export class TimeoutError extends Error {
  override name = 'TimeoutError';
  readonly retriable = true;
}

/** The broker does not serve any version of an API this client can speak. */
export class UnsupportedApiError extends Error {
  override name = 'UnsupportedApiError';
}

/** Socket errors that mean nobody is there at all, as a user would say it. */
const NO_ANSWER: Readonly<Record<string, string>> = {
  ECONNREFUSED: 'connection refused',
  ENOTFOUND: 'host not found',
  EAI_AGAIN: 'host not found',
  EAI_NONAME: 'host not found',
  EHOSTUNREACH: 'host unreachable',
  ENETUNREACH: 'network unreachable',
  EADDRNOTAVAIL: 'address not available',
};

/** Why nothing answered at an address, from a socket error's code; undefined when something did. */
export function noAnswerReason(errno: string | undefined): string | undefined {
  return errno === undefined ? undefined : NO_ANSWER[errno];
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
