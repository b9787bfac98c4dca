/**
 * Kafka's tools print Java exception class names in their JSON (log-dirs errors, verifiable
 * clients' failures); scripts match on them. These build the same names from Kafka error codes,
 * as Kafka's Errors enum maps each code to its exception class.
 */
import { KafkaError, errorName, ERRORS_BY_CODE } from '../../protocol/errors.js';
import { BrokersUnreachableError } from '../../client/index.js';

const ERRORS_PACKAGE = 'org.apache.kafka.common.errors';

/**
 * The codes whose class is not the code's name in CamelCase plus "Exception" (Errors.java names
 * most classes after the code, these after the condition they report).
 */
const IRREGULAR: Readonly<Record<string, string>> = {
  CORRUPT_MESSAGE: 'CorruptRecordException',
  REQUEST_TIMED_OUT: 'TimeoutException',
  MESSAGE_TOO_LARGE: 'RecordTooLargeException',
  STALE_CONTROLLER_EPOCH: 'ControllerMovedException',
  OFFSET_METADATA_TOO_LARGE: 'OffsetMetadataTooLarge',
  RECORD_LIST_TOO_LARGE: 'RecordBatchTooLargeException',
  TOPIC_AUTHORIZATION_FAILED: 'TopicAuthorizationException',
  GROUP_AUTHORIZATION_FAILED: 'GroupAuthorizationException',
  CLUSTER_AUTHORIZATION_FAILED: 'ClusterAuthorizationException',
  TOPIC_ALREADY_EXISTS: 'TopicExistsException',
  INVALID_CONFIG: 'InvalidConfigurationException',
  OUT_OF_ORDER_SEQUENCE_NUMBER: 'OutOfOrderSequenceException',
  DUPLICATE_SEQUENCE_NUMBER: 'DuplicateSequenceException',
  INVALID_PRODUCER_ID_MAPPING: 'InvalidPidMappingException',
  INVALID_TRANSACTION_TIMEOUT: 'InvalidTxnTimeoutException',
  TRANSACTIONAL_ID_AUTHORIZATION_FAILED: 'TransactionalIdAuthorizationException',
  SASL_AUTHENTICATION_FAILED: 'SaslAuthenticationException',
  DELEGATION_TOKEN_AUTH_DISABLED: 'DelegationTokenDisabledException',
  DELEGATION_TOKEN_REQUEST_NOT_ALLOWED: 'UnsupportedByAuthenticationException',
  DELEGATION_TOKEN_AUTHORIZATION_FAILED: 'DelegationTokenAuthorizationException',
  NON_EMPTY_GROUP: 'GroupNotEmptyException',
  PRINCIPAL_DESERIALIZATION_FAILURE: 'PrincipalDeserializationException',
  INVALID_REGULAR_EXPRESSION: 'InvalidRegularExpression',
};

/** Classes outside org.apache.kafka.common.errors. */
const PACKAGE_OF: Readonly<Record<string, string>> = {
  InvalidRecordException: 'org.apache.kafka.common',
};

/** e.g. 3 -> org.apache.kafka.common.errors.UnknownTopicOrPartitionException */
export function javaExceptionName(code: number): string {
  // A code this side does not know is, to Kafka's client, UNKNOWN_SERVER_ERROR.
  const name = ERRORS_BY_CODE.has(code) ? errorName(code) : 'UNKNOWN_SERVER_ERROR';
  const camel = name
    .toLowerCase()
    .split('_')
    .map((w) => w.charAt(0).toUpperCase() + w.slice(1))
    .join('');
  // INVALID_TOPIC_EXCEPTION is InvalidTopicException, KAFKA_STORAGE_ERROR KafkaStorageException.
  const simple = IRREGULAR[name] ?? `${camel.replace(/(Exception|Error)$/, '')}Exception`;
  return `${PACKAGE_OF[simple] ?? ERRORS_PACKAGE}.${simple}`;
}

/** The class name of any failure: Kafka errors by code, the rest as a generic KafkaException. */
export function javaExceptionOf(err: unknown): string {
  if (err instanceof KafkaError) return javaExceptionName(err.code);
  // Kafka's clients give up waiting for a broker with a TimeoutException.
  if (err instanceof BrokersUnreachableError) return `${ERRORS_PACKAGE}.TimeoutException`;
  if (err instanceof Error && /timed? ?out/i.test(err.message)) return `${ERRORS_PACKAGE}.TimeoutException`;
  return 'org.apache.kafka.common.KafkaException';
}
