/**
 * The table of the ACL tests (acl-handlers, acl-deny-all): one request per row, as User:ANONYMOUS
 * over the wire, with the authorization code Kafka answers when it is denied, and the helpers
 * that send a row and grant everything the rows name.
 */
import assert from 'node:assert/strict';
import type { TestBroker } from '../helpers/broker.js';
import type { RawClient } from '../helpers/raw-client.js';
import { API_SPECS } from '../../src/protocol/messages/index.js';
import { ErrorCode } from '../../src/protocol/errors.js';
import { AclOperation, AclPermissionType, PatternType, ResourceType } from '../../src/security/authorizer/acl-model.js';

export const T = ErrorCode.TOPIC_AUTHORIZATION_FAILED;
export const G = ErrorCode.GROUP_AUTHORIZATION_FAILED;
export const C = ErrorCode.CLUSTER_AUTHORIZATION_FAILED;
export const X = ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED;
/** The delegation token APIs refuse a connection that is not authenticated (PLAINTEXT, as these rows run) whatever the ACLs. */
export const TK = ErrorCode.DELEGATION_TOKEN_REQUEST_NOT_ALLOWED;
export const AUTH_CODES = new Set<number>([T, G, C, X, TK]);

export type Row = { name: string; api: number; v: number; body: Record<string, unknown>; code: (r: any) => number; denied: number };
const tp = [{ name: 'orders', partitions: [{ partitionIndex: 0, committedOffset: 0n }] }];
export const ROWS: Row[] = [
  {
    name: 'Produce',
    api: 0,
    v: 9,
    body: { acks: -1, timeoutMs: 5000, topicData: [{ name: 'orders', partitionData: [{ index: 0, records: null }] }] },
    code: (r) => r.responses[0].partitionResponses[0].errorCode,
    denied: T,
  },
  {
    name: 'Produce transactional',
    api: 0,
    v: 9,
    body: { transactionalId: 't1', acks: -1, timeoutMs: 5000, topicData: [{ name: 'orders', partitionData: [{ index: 0, records: null }] }] },
    code: (r) => r.responses[0].partitionResponses[0].errorCode,
    denied: X,
  },
  {
    name: 'Fetch',
    api: 1,
    v: 12,
    body: {
      replicaId: -1,
      maxWaitMs: 0,
      minBytes: 0,
      maxBytes: 1000,
      topics: [{ topic: 'orders', partitions: [{ partition: 0, fetchOffset: 0n, partitionMaxBytes: 1000 }] }],
    },
    code: (r) => r.responses[0].partitions[0].errorCode,
    denied: T,
  },
  {
    name: 'Fetch as follower',
    api: 1,
    v: 12,
    body: {
      replicaId: 7,
      maxWaitMs: 0,
      minBytes: 0,
      maxBytes: 1000,
      topics: [{ topic: 'orders', partitions: [{ partition: 0, fetchOffset: 0n, partitionMaxBytes: 1000 }] }],
    },
    code: (r) => r.responses[0].partitions[0].errorCode,
    denied: T,
  },
  {
    name: 'OffsetForLeaderEpoch',
    api: 23,
    v: 4,
    body: { replicaId: -1, topics: [{ topic: 'orders', partitions: [{ partition: 0, currentLeaderEpoch: -1, leaderEpoch: 0 }] }] },
    code: (r) => r.topics[0].partitions[0].errorCode,
    denied: T,
  },
  {
    name: 'OffsetForLeaderEpoch as follower',
    api: 23,
    v: 4,
    body: { replicaId: 1, topics: [{ topic: 'orders', partitions: [{ partition: 0, currentLeaderEpoch: -1, leaderEpoch: 0 }] }] },
    code: (r) => r.topics[0].partitions[0].errorCode,
    denied: C,
  },
  {
    name: 'ListOffsets',
    api: 2,
    v: 7,
    body: { replicaId: -1, topics: [{ name: 'orders', partitions: [{ partitionIndex: 0, timestamp: -1n }] }] },
    code: (r) => r.topics[0].partitions[0].errorCode,
    denied: T,
  },
  {
    name: 'Metadata named',
    api: 3,
    v: 12,
    body: { topics: [{ name: 'orders' }], allowAutoTopicCreation: false },
    code: (r) => r.topics[0].errorCode,
    denied: T,
  },
  { name: 'Metadata all (hidden)', api: 3, v: 12, body: { topics: null }, code: (r) => (r.topics.some((t: any) => t.name === 'orders') ? 0 : T), denied: T },
  { name: 'DescribeTopicPartitions named', api: 75, v: 0, body: { topics: [{ name: 'orders' }] }, code: (r) => r.topics[0].errorCode, denied: T },
  {
    name: 'DescribeTopicPartitions all (hidden)',
    api: 75,
    v: 0,
    body: { topics: [] },
    code: (r) => (r.topics.some((t: any) => t.name === 'orders') ? 0 : T),
    denied: T,
  },
  {
    name: 'Metadata auto-create',
    api: 3,
    v: 12,
    body: { topics: [{ name: 'auto1' }], allowAutoTopicCreation: true },
    code: (r) => r.topics[0].errorCode,
    denied: T,
  },
  {
    name: 'CreateTopics',
    api: 19,
    v: 7,
    body: { topics: [{ name: 'newt', numPartitions: 1, replicationFactor: 1, assignments: [], configs: [] }], timeoutMs: 5000 },
    code: (r) => r.topics[0].errorCode,
    denied: T,
  },
  { name: 'DeleteTopics', api: 20, v: 5, body: { topicNames: ['gone'], timeoutMs: 5000 }, code: (r) => r.responses[0].errorCode, denied: T },
  {
    name: 'CreatePartitions',
    api: 37,
    v: 3,
    body: { topics: [{ name: 'orders', count: 2, assignments: null }], timeoutMs: 5000 },
    code: (r) => r.results[0].errorCode,
    denied: T,
  },
  {
    name: 'DescribeConfigs topic',
    api: 32,
    v: 4,
    body: { resources: [{ resourceType: 2, resourceName: 'orders', configurationKeys: null }] },
    code: (r) => r.results[0].errorCode,
    denied: T,
  },
  {
    name: 'DescribeConfigs broker',
    api: 32,
    v: 4,
    body: { resources: [{ resourceType: 4, resourceName: '0', configurationKeys: null }] },
    code: (r) => r.results[0].errorCode,
    denied: C,
  },
  {
    name: 'DescribeConfigs group',
    api: 32,
    v: 4,
    body: { resources: [{ resourceType: 32, resourceName: 'g', configurationKeys: null }] },
    code: (r) => r.results[0].errorCode,
    denied: G,
  },
  {
    name: 'IncrementalAlterConfigs group',
    api: 44,
    v: 1,
    body: {
      resources: [{ resourceType: 32, resourceName: 'g', configs: [{ name: 'consumer.heartbeat.interval.ms', configOperation: 0, value: '5000' }] }],
      validateOnly: true,
    },
    code: (r) => r.responses[0].errorCode,
    denied: G,
  },
  {
    name: 'AlterConfigs topic',
    api: 33,
    v: 2,
    body: { resources: [{ resourceType: 2, resourceName: 'orders', configs: [{ name: 'retention.ms', value: '100000' }] }] },
    code: (r) => r.responses[0].errorCode,
    denied: T,
  },
  {
    name: 'IncrementalAlterConfigs broker',
    api: 44,
    v: 1,
    body: {
      resources: [{ resourceType: 4, resourceName: '0', configs: [{ name: 'log.cleaner.threads', configOperation: 0, value: '1' }] }],
      validateOnly: true,
    },
    code: (r) => r.responses[0].errorCode,
    denied: C,
  },
  {
    name: 'DeleteRecords',
    api: 21,
    v: 2,
    body: { topics: [{ name: 'orders', partitions: [{ partitionIndex: 0, offset: 0n }] }], timeoutMs: 5000 },
    code: (r) => r.topics[0].partitions[0].errorCode,
    denied: T,
  },
  { name: 'FindCoordinator group', api: 10, v: 4, body: { keyType: 0, coordinatorKeys: ['g'] }, code: (r) => r.coordinators[0].errorCode, denied: G },
  { name: 'FindCoordinator txn', api: 10, v: 4, body: { keyType: 1, coordinatorKeys: ['t1'] }, code: (r) => r.coordinators[0].errorCode, denied: X },
  {
    name: 'JoinGroup',
    api: 11,
    v: 9,
    body: {
      groupId: 'g',
      sessionTimeoutMs: 10000,
      rebalanceTimeoutMs: 10000,
      memberId: '',
      protocolType: 'consumer',
      protocols: [{ name: 'range', metadata: Buffer.alloc(0) }],
      reason: null,
    },
    code: (r) => r.errorCode,
    denied: G,
  },
  { name: 'SyncGroup', api: 14, v: 5, body: { groupId: 'g', generationId: 1, memberId: 'm', assignments: [] }, code: (r) => r.errorCode, denied: G },
  { name: 'Heartbeat', api: 12, v: 4, body: { groupId: 'g', generationId: 1, memberId: 'm' }, code: (r) => r.errorCode, denied: G },
  { name: 'LeaveGroup', api: 13, v: 5, body: { groupId: 'g', members: [{ memberId: 'm' }] }, code: (r) => r.errorCode, denied: G },
  {
    name: 'OffsetCommit',
    api: 8,
    v: 8,
    body: { groupId: 'g', generationIdOrMemberEpoch: -1, memberId: '', topics: tp },
    code: (r) => r.topics[0].partitions[0].errorCode,
    denied: G,
  },
  { name: 'OffsetFetch', api: 9, v: 7, body: { groupId: 'g', topics: null }, code: (r) => r.errorCode, denied: G },
  { name: 'DescribeGroups', api: 15, v: 5, body: { groups: ['g'], includeAuthorizedOperations: true }, code: (r) => r.groups[0].errorCode, denied: G },
  { name: 'DeleteGroups', api: 42, v: 2, body: { groupsNames: ['g'] }, code: (r) => r.results[0].errorCode, denied: G },
  { name: 'DescribeClientQuotas', api: 48, v: 1, body: { components: [], strict: false }, code: (r) => r.errorCode, denied: C },
  {
    name: 'AlterClientQuotas',
    api: 49,
    v: 1,
    body: {
      entries: [{ entity: [{ entityType: 'client-id', entityName: 'app' }], ops: [{ key: 'producer_byte_rate', value: 1024, remove: false }] }],
      validateOnly: true,
    },
    code: (r) => r.entries[0].errorCode,
    denied: C,
  },
  { name: 'DescribeUserScramCredentials', api: 50, v: 0, body: { users: null }, code: (r) => r.errorCode, denied: C },
  {
    name: 'AlterUserScramCredentials',
    api: 51,
    v: 0,
    body: { deletions: [{ name: 'alice', mechanism: 1 }], upsertions: [] },
    code: (r) => (r.results[0].errorCode === C ? C : 0),
    denied: C,
  },
  {
    name: 'OffsetDelete',
    api: 47,
    v: 0,
    body: { groupId: 'g', topics: [{ name: 'orders', partitions: [{ partitionIndex: 0 }] }] },
    code: (r) => r.errorCode,
    denied: G,
  },
  {
    name: 'InitProducerId transactional',
    api: 22,
    v: 4,
    body: { transactionalId: 't1', transactionTimeoutMs: 60000, producerId: -1n, producerEpoch: -1 },
    code: (r) => r.errorCode,
    denied: X,
  },
  {
    name: 'InitProducerId idempotent',
    api: 22,
    v: 4,
    body: { transactionalId: null, transactionTimeoutMs: 60000, producerId: -1n, producerEpoch: -1 },
    code: (r) => r.errorCode,
    denied: C,
  },
  {
    name: 'AddPartitionsToTxn v3',
    api: 24,
    v: 3,
    body: { v3AndBelowTransactionalId: 't1', v3AndBelowProducerId: 1n, v3AndBelowProducerEpoch: 0, v3AndBelowTopics: [{ name: 'orders', partitions: [0] }] },
    code: (r) => r.resultsByTopicV3AndBelow[0].resultsByPartition[0].partitionErrorCode,
    denied: X,
  },
  {
    name: 'AddPartitionsToTxn v4 (brokers)',
    api: 24,
    v: 4,
    body: { transactions: [{ transactionalId: 't1', producerId: 1n, producerEpoch: 0, verifyOnly: true, topics: [{ name: 'orders', partitions: [0] }] }] },
    code: (r) => r.errorCode,
    denied: C,
  },
  {
    name: 'AddOffsetsToTxn',
    api: 25,
    v: 3,
    body: { transactionalId: 't1', producerId: 1n, producerEpoch: 0, groupId: 'g' },
    code: (r) => r.errorCode,
    denied: X,
  },
  { name: 'EndTxn', api: 26, v: 3, body: { transactionalId: 't1', producerId: 1n, producerEpoch: 0, committed: true }, code: (r) => r.errorCode, denied: X },
  {
    name: 'TxnOffsetCommit',
    api: 28,
    v: 3,
    body: { transactionalId: 't1', groupId: 'g', producerId: 1n, producerEpoch: 0, generationId: -1, memberId: '', groupInstanceId: null, topics: tp },
    code: (r) => r.topics[0].partitions[0].errorCode,
    denied: X,
  },
  {
    name: 'WriteTxnMarkers',
    api: 27,
    v: 1,
    body: {
      markers: [{ producerId: 1n, producerEpoch: 0, transactionResult: true, topics: [{ name: 'orders', partitionIndexes: [0] }], coordinatorEpoch: 0 }],
    },
    code: (r) => r.markers[0].topics[0].partitions[0].errorCode,
    denied: C,
  },
  {
    name: 'DescribeProducers',
    api: 61,
    v: 0,
    body: { topics: [{ name: 'orders', partitionIndexes: [0] }] },
    code: (r) => r.topics[0].partitions[0].errorCode,
    denied: T,
  },
  { name: 'DescribeTransactions', api: 65, v: 0, body: { transactionalIds: ['t1'] }, code: (r) => r.transactionStates[0].errorCode, denied: X },
  { name: 'DescribeLogDirs', api: 35, v: 4, body: { topics: null }, code: (r) => r.errorCode, denied: C },
  {
    name: 'ElectLeaders',
    api: 43,
    v: 2,
    body: { electionType: 0, topicPartitions: [{ topic: 'orders', partitions: [0] }], timeoutMs: 1000 },
    code: (r) => r.errorCode,
    denied: C,
  },
  {
    name: 'UpdateFeatures',
    api: 57,
    v: 1,
    body: { timeoutMs: 1000, featureUpdates: [{ feature: 'transaction.version', maxVersionLevel: 2, upgradeType: 1 }], validateOnly: true },
    code: (r) => (r.errorCode !== 0 ? r.errorCode : r.results[0].errorCode),
    denied: C,
  },
  {
    name: 'DescribeCluster authorized operations',
    api: 60,
    v: 1,
    body: { includeClusterAuthorizedOperations: true, endpointType: 1 },
    code: (r) => (r.clusterAuthorizedOperations === 0 ? C : 0),
    denied: C,
  },
];

/** The delegation token APIs (38-41), refused as User:ANONYMOUS over PLAINTEXT before any ACL is asked. */
export const TOKEN_ROWS: Row[] = [
  { name: 'CreateDelegationToken', api: 38, v: 3, body: { renewers: [], maxLifetimeMs: -1n }, code: (r) => r.errorCode, denied: TK },
  { name: 'RenewDelegationToken', api: 39, v: 2, body: { hmac: Buffer.from('x'), renewPeriodMs: -1n }, code: (r) => r.errorCode, denied: TK },
  { name: 'ExpireDelegationToken', api: 40, v: 2, body: { hmac: Buffer.from('x'), expiryTimePeriodMs: -1n }, code: (r) => r.errorCode, denied: TK },
  { name: 'DescribeDelegationToken', api: 41, v: 3, body: { owners: null }, code: (r) => r.errorCode, denied: TK },
];

export async function runRow(c: RawClient, row: Row): Promise<number> {
  const spec = API_SPECS[row.api]!;
  let res: unknown;
  try {
    res = await c.request(row.api, spec.request, spec.response, row.v, row.body as never);
  } catch (err) {
    throw new Error(`${row.name}: ${String(err)}`);
  }
  return row.code(res);
}

export async function grantAll(b: TestBroker): Promise<void> {
  const allow = (resourceType: ResourceType, name: string) => ({
    pattern: { resourceType, name, patternType: PatternType.LITERAL },
    entry: { principal: 'User:ANONYMOUS', host: '*', operation: AclOperation.ALL, permissionType: AclPermissionType.ALLOW },
  });
  const errors = await b.broker.services.authorizer!.create([
    allow(ResourceType.TOPIC, '*'),
    allow(ResourceType.GROUP, 'g'),
    allow(ResourceType.TRANSACTIONAL_ID, 't1'),
    allow(ResourceType.CLUSTER, 'kafka-cluster'),
  ]);
  assert.deepEqual(errors, [undefined, undefined, undefined, undefined]);
}
