/**
 * The Java class name printed for every error code is the one Kafka's Errors enum maps the code
 * to (Kafka 3.9's clients/src/main/java/org/apache/kafka/common/protocol/Errors.java), so scripts
 * matching on `"exception":"class org.apache.kafka.common.errors.X"` see what Kafka prints.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { javaExceptionName, javaExceptionOf } from '../../src/cli/common/java-names.js';
import { ERRORS_BY_CODE, KafkaError, errorName } from '../../src/protocol/errors.js';

/** [code, Kafka's enum name, Kafka's exception class], every code but NONE. */
const KAFKA_ERRORS: readonly (readonly [number, string, string])[] = [
  [-1, 'UNKNOWN_SERVER_ERROR', 'UnknownServerException'],
  [1, 'OFFSET_OUT_OF_RANGE', 'OffsetOutOfRangeException'],
  [2, 'CORRUPT_MESSAGE', 'CorruptRecordException'],
  [3, 'UNKNOWN_TOPIC_OR_PARTITION', 'UnknownTopicOrPartitionException'],
  [4, 'INVALID_FETCH_SIZE', 'InvalidFetchSizeException'],
  [5, 'LEADER_NOT_AVAILABLE', 'LeaderNotAvailableException'],
  [6, 'NOT_LEADER_OR_FOLLOWER', 'NotLeaderOrFollowerException'],
  [7, 'REQUEST_TIMED_OUT', 'TimeoutException'],
  [8, 'BROKER_NOT_AVAILABLE', 'BrokerNotAvailableException'],
  [9, 'REPLICA_NOT_AVAILABLE', 'ReplicaNotAvailableException'],
  [10, 'MESSAGE_TOO_LARGE', 'RecordTooLargeException'],
  [11, 'STALE_CONTROLLER_EPOCH', 'ControllerMovedException'],
  [12, 'OFFSET_METADATA_TOO_LARGE', 'OffsetMetadataTooLarge'],
  [13, 'NETWORK_EXCEPTION', 'NetworkException'],
  [14, 'COORDINATOR_LOAD_IN_PROGRESS', 'CoordinatorLoadInProgressException'],
  [15, 'COORDINATOR_NOT_AVAILABLE', 'CoordinatorNotAvailableException'],
  [16, 'NOT_COORDINATOR', 'NotCoordinatorException'],
  [17, 'INVALID_TOPIC_EXCEPTION', 'InvalidTopicException'],
  [18, 'RECORD_LIST_TOO_LARGE', 'RecordBatchTooLargeException'],
  [19, 'NOT_ENOUGH_REPLICAS', 'NotEnoughReplicasException'],
  [20, 'NOT_ENOUGH_REPLICAS_AFTER_APPEND', 'NotEnoughReplicasAfterAppendException'],
  [21, 'INVALID_REQUIRED_ACKS', 'InvalidRequiredAcksException'],
  [22, 'ILLEGAL_GENERATION', 'IllegalGenerationException'],
  [23, 'INCONSISTENT_GROUP_PROTOCOL', 'InconsistentGroupProtocolException'],
  [24, 'INVALID_GROUP_ID', 'InvalidGroupIdException'],
  [25, 'UNKNOWN_MEMBER_ID', 'UnknownMemberIdException'],
  [26, 'INVALID_SESSION_TIMEOUT', 'InvalidSessionTimeoutException'],
  [27, 'REBALANCE_IN_PROGRESS', 'RebalanceInProgressException'],
  [28, 'INVALID_COMMIT_OFFSET_SIZE', 'InvalidCommitOffsetSizeException'],
  [29, 'TOPIC_AUTHORIZATION_FAILED', 'TopicAuthorizationException'],
  [30, 'GROUP_AUTHORIZATION_FAILED', 'GroupAuthorizationException'],
  [31, 'CLUSTER_AUTHORIZATION_FAILED', 'ClusterAuthorizationException'],
  [32, 'INVALID_TIMESTAMP', 'InvalidTimestampException'],
  [33, 'UNSUPPORTED_SASL_MECHANISM', 'UnsupportedSaslMechanismException'],
  [34, 'ILLEGAL_SASL_STATE', 'IllegalSaslStateException'],
  [35, 'UNSUPPORTED_VERSION', 'UnsupportedVersionException'],
  [36, 'TOPIC_ALREADY_EXISTS', 'TopicExistsException'],
  [37, 'INVALID_PARTITIONS', 'InvalidPartitionsException'],
  [38, 'INVALID_REPLICATION_FACTOR', 'InvalidReplicationFactorException'],
  [39, 'INVALID_REPLICA_ASSIGNMENT', 'InvalidReplicaAssignmentException'],
  [40, 'INVALID_CONFIG', 'InvalidConfigurationException'],
  [41, 'NOT_CONTROLLER', 'NotControllerException'],
  [42, 'INVALID_REQUEST', 'InvalidRequestException'],
  [43, 'UNSUPPORTED_FOR_MESSAGE_FORMAT', 'UnsupportedForMessageFormatException'],
  [44, 'POLICY_VIOLATION', 'PolicyViolationException'],
  [45, 'OUT_OF_ORDER_SEQUENCE_NUMBER', 'OutOfOrderSequenceException'],
  [46, 'DUPLICATE_SEQUENCE_NUMBER', 'DuplicateSequenceException'],
  [47, 'INVALID_PRODUCER_EPOCH', 'InvalidProducerEpochException'],
  [48, 'INVALID_TXN_STATE', 'InvalidTxnStateException'],
  [49, 'INVALID_PRODUCER_ID_MAPPING', 'InvalidPidMappingException'],
  [50, 'INVALID_TRANSACTION_TIMEOUT', 'InvalidTxnTimeoutException'],
  [51, 'CONCURRENT_TRANSACTIONS', 'ConcurrentTransactionsException'],
  [52, 'TRANSACTION_COORDINATOR_FENCED', 'TransactionCoordinatorFencedException'],
  [53, 'TRANSACTIONAL_ID_AUTHORIZATION_FAILED', 'TransactionalIdAuthorizationException'],
  [54, 'SECURITY_DISABLED', 'SecurityDisabledException'],
  [55, 'OPERATION_NOT_ATTEMPTED', 'OperationNotAttemptedException'],
  [56, 'KAFKA_STORAGE_ERROR', 'KafkaStorageException'],
  [57, 'LOG_DIR_NOT_FOUND', 'LogDirNotFoundException'],
  [58, 'SASL_AUTHENTICATION_FAILED', 'SaslAuthenticationException'],
  [59, 'UNKNOWN_PRODUCER_ID', 'UnknownProducerIdException'],
  [60, 'REASSIGNMENT_IN_PROGRESS', 'ReassignmentInProgressException'],
  [61, 'DELEGATION_TOKEN_AUTH_DISABLED', 'DelegationTokenDisabledException'],
  [62, 'DELEGATION_TOKEN_NOT_FOUND', 'DelegationTokenNotFoundException'],
  [63, 'DELEGATION_TOKEN_OWNER_MISMATCH', 'DelegationTokenOwnerMismatchException'],
  [64, 'DELEGATION_TOKEN_REQUEST_NOT_ALLOWED', 'UnsupportedByAuthenticationException'],
  [65, 'DELEGATION_TOKEN_AUTHORIZATION_FAILED', 'DelegationTokenAuthorizationException'],
  [66, 'DELEGATION_TOKEN_EXPIRED', 'DelegationTokenExpiredException'],
  [67, 'INVALID_PRINCIPAL_TYPE', 'InvalidPrincipalTypeException'],
  [68, 'NON_EMPTY_GROUP', 'GroupNotEmptyException'],
  [69, 'GROUP_ID_NOT_FOUND', 'GroupIdNotFoundException'],
  [70, 'FETCH_SESSION_ID_NOT_FOUND', 'FetchSessionIdNotFoundException'],
  [71, 'INVALID_FETCH_SESSION_EPOCH', 'InvalidFetchSessionEpochException'],
  [72, 'LISTENER_NOT_FOUND', 'ListenerNotFoundException'],
  [73, 'TOPIC_DELETION_DISABLED', 'TopicDeletionDisabledException'],
  [74, 'FENCED_LEADER_EPOCH', 'FencedLeaderEpochException'],
  [75, 'UNKNOWN_LEADER_EPOCH', 'UnknownLeaderEpochException'],
  [76, 'UNSUPPORTED_COMPRESSION_TYPE', 'UnsupportedCompressionTypeException'],
  [77, 'STALE_BROKER_EPOCH', 'StaleBrokerEpochException'],
  [78, 'OFFSET_NOT_AVAILABLE', 'OffsetNotAvailableException'],
  [79, 'MEMBER_ID_REQUIRED', 'MemberIdRequiredException'],
  [80, 'PREFERRED_LEADER_NOT_AVAILABLE', 'PreferredLeaderNotAvailableException'],
  [81, 'GROUP_MAX_SIZE_REACHED', 'GroupMaxSizeReachedException'],
  [82, 'FENCED_INSTANCE_ID', 'FencedInstanceIdException'],
  [83, 'ELIGIBLE_LEADERS_NOT_AVAILABLE', 'EligibleLeadersNotAvailableException'],
  [84, 'ELECTION_NOT_NEEDED', 'ElectionNotNeededException'],
  [85, 'NO_REASSIGNMENT_IN_PROGRESS', 'NoReassignmentInProgressException'],
  [86, 'GROUP_SUBSCRIBED_TO_TOPIC', 'GroupSubscribedToTopicException'],
  [87, 'INVALID_RECORD', 'InvalidRecordException'],
  [88, 'UNSTABLE_OFFSET_COMMIT', 'UnstableOffsetCommitException'],
  [89, 'THROTTLING_QUOTA_EXCEEDED', 'ThrottlingQuotaExceededException'],
  [90, 'PRODUCER_FENCED', 'ProducerFencedException'],
  [91, 'RESOURCE_NOT_FOUND', 'ResourceNotFoundException'],
  [92, 'DUPLICATE_RESOURCE', 'DuplicateResourceException'],
  [93, 'UNACCEPTABLE_CREDENTIAL', 'UnacceptableCredentialException'],
  [94, 'INCONSISTENT_VOTER_SET', 'InconsistentVoterSetException'],
  [95, 'INVALID_UPDATE_VERSION', 'InvalidUpdateVersionException'],
  [96, 'FEATURE_UPDATE_FAILED', 'FeatureUpdateFailedException'],
  [97, 'PRINCIPAL_DESERIALIZATION_FAILURE', 'PrincipalDeserializationException'],
  [98, 'SNAPSHOT_NOT_FOUND', 'SnapshotNotFoundException'],
  [99, 'POSITION_OUT_OF_RANGE', 'PositionOutOfRangeException'],
  [100, 'UNKNOWN_TOPIC_ID', 'UnknownTopicIdException'],
  [101, 'DUPLICATE_BROKER_REGISTRATION', 'DuplicateBrokerRegistrationException'],
  [102, 'BROKER_ID_NOT_REGISTERED', 'BrokerIdNotRegisteredException'],
  [103, 'INCONSISTENT_TOPIC_ID', 'InconsistentTopicIdException'],
  [104, 'INCONSISTENT_CLUSTER_ID', 'InconsistentClusterIdException'],
  [105, 'TRANSACTIONAL_ID_NOT_FOUND', 'TransactionalIdNotFoundException'],
  [106, 'FETCH_SESSION_TOPIC_ID_ERROR', 'FetchSessionTopicIdException'],
  [107, 'INELIGIBLE_REPLICA', 'IneligibleReplicaException'],
  [108, 'NEW_LEADER_ELECTED', 'NewLeaderElectedException'],
  [109, 'OFFSET_MOVED_TO_TIERED_STORAGE', 'OffsetMovedToTieredStorageException'],
  [110, 'FENCED_MEMBER_EPOCH', 'FencedMemberEpochException'],
  [111, 'UNRELEASED_INSTANCE_ID', 'UnreleasedInstanceIdException'],
  [112, 'UNSUPPORTED_ASSIGNOR', 'UnsupportedAssignorException'],
  [113, 'STALE_MEMBER_EPOCH', 'StaleMemberEpochException'],
  [114, 'MISMATCHED_ENDPOINT_TYPE', 'MismatchedEndpointTypeException'],
  [115, 'UNSUPPORTED_ENDPOINT_TYPE', 'UnsupportedEndpointTypeException'],
  [116, 'UNKNOWN_CONTROLLER_ID', 'UnknownControllerIdException'],
  [117, 'UNKNOWN_SUBSCRIPTION_ID', 'UnknownSubscriptionIdException'],
  [118, 'TELEMETRY_TOO_LARGE', 'TelemetryTooLargeException'],
  [119, 'INVALID_REGISTRATION', 'InvalidRegistrationException'],
  [120, 'TRANSACTION_ABORTABLE', 'TransactionAbortableException'],
  [121, 'INVALID_RECORD_STATE', 'InvalidRecordStateException'],
  [122, 'SHARE_SESSION_NOT_FOUND', 'ShareSessionNotFoundException'],
  [123, 'INVALID_SHARE_SESSION_EPOCH', 'InvalidShareSessionEpochException'],
  [124, 'FENCED_STATE_EPOCH', 'FencedStateEpochException'],
  [125, 'INVALID_VOTER_KEY', 'InvalidVoterKeyException'],
  [126, 'DUPLICATE_VOTER', 'DuplicateVoterException'],
  [127, 'VOTER_NOT_FOUND', 'VoterNotFoundException'],
  [128, 'INVALID_REGULAR_EXPRESSION', 'InvalidRegularExpression'],
  [129, 'REBOOTSTRAP_REQUIRED', 'RebootstrapRequiredException'],
];

test("every error code's Java class is Kafka's", () => {
  const wrong: string[] = [];
  for (const [code, name, simple] of KAFKA_ERRORS) {
    const pkg = simple === 'InvalidRecordException' ? 'org.apache.kafka.common' : 'org.apache.kafka.common.errors';
    const got = javaExceptionName(code);
    if (got !== `${pkg}.${simple}`) wrong.push(`${code} ${name}: ${got}, Kafka ${pkg}.${simple}`);
  }
  assert.deepEqual(wrong, []);
});

test("the table above is Fjord's: same codes, same names", () => {
  const fjord = [...ERRORS_BY_CODE.keys()].filter((c) => c !== 0).sort((a, b) => a - b);
  assert.deepEqual(
    fjord,
    KAFKA_ERRORS.map(([c]) => c),
  );
  for (const [code, name] of KAFKA_ERRORS) assert.equal(errorName(code), name, `code ${code}`);
});

test('no class name says Exception twice', () => {
  for (const code of ERRORS_BY_CODE.keys()) assert.doesNotMatch(javaExceptionName(code), /ExceptionException|ErrorException/, `code ${code}`);
});

test('a code Kafka does not know is UnknownServerException, as its client reads it', () => {
  assert.equal(javaExceptionName(9999), 'org.apache.kafka.common.errors.UnknownServerException');
});

test('javaExceptionOf: Kafka errors by code, timeouts, anything else', () => {
  assert.equal(javaExceptionOf(new KafkaError(17, 'bad')), 'org.apache.kafka.common.errors.InvalidTopicException');
  assert.equal(javaExceptionOf(new Error('request timed out after 30000 ms')), 'org.apache.kafka.common.errors.TimeoutException');
  assert.equal(javaExceptionOf(new Error('boom')), 'org.apache.kafka.common.KafkaException');
});
