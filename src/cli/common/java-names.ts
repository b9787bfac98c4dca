/**
 * Kafka's tools print Java exception class names in their JSON (log-dirs errors, verifiable
 * clients' failures); scripts match on them. These build the same names from Kafka error codes.
 */
import { KafkaError, errorName } from '../../client/index.js';

const IRREGULAR: Readonly<Record<string, string>> = {
  KafkaStorageError: 'KafkaStorageException',
  RequestTimedOut: 'TimeoutException',
  UnknownServerError: 'UnknownServerException',
};

/** e.g. 3 -> org.apache.kafka.common.errors.UnknownTopicOrPartitionException */
export function javaExceptionName(code: number): string {
  const camel = errorName(code)
    .toLowerCase()
    .split('_')
    .map((w) => w.charAt(0).toUpperCase() + w.slice(1))
    .join('');
  return `org.apache.kafka.common.errors.${IRREGULAR[camel] ?? `${camel.replace(/Error$/, '')}Exception`}`;
}

/** The class name of any failure: Kafka errors by code, the rest as a generic KafkaException. */
export function javaExceptionOf(err: unknown): string {
  if (err instanceof KafkaError) return javaExceptionName(err.code);
  if (err instanceof Error && /timed? ?out/i.test(err.message)) return 'org.apache.kafka.common.errors.TimeoutException';
  return 'org.apache.kafka.common.KafkaException';
}
