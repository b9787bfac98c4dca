/**
 * Every handler's ACL check, table-driven over the wire as User:ANONYMOUS (PLAINTEXT): with an
 * authorizer and no ACL each request gets Kafka's authorization code; once ANONYMOUS is allowed
 * on the topic, group, transactional id and cluster, none does. The deny-all sweep is derived
 * from the handler table: every API served (and the cluster-mode ones), at every version, is
 * refused, or answers when its handler declares it needs no authorization.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestBroker, type TestBroker } from '../helpers/broker.js';
import { RawClient } from '../helpers/raw-client.js';
import { createTopic } from '../server/handlers/data-plane-helpers.js';
import { API_SPECS } from '../../src/protocol/messages/index.js';
import { ErrorCode } from '../../src/protocol/errors.js';
import { ANY_FILTER, AclOperation, AclPermissionType, PatternType, ResourceType } from '../../src/security/authorizer/acl-model.js';
import { Reader, Writer, ZERO_UUID } from '../../src/protocol/primitives/index.js';
import { ZK_BROKER_HANDLERS } from '../../src/server/handlers/index.js';
import type { ApiHandler, RequestContext } from '../../src/server/handlers/types.js';
import { serveRequest } from '../../src/server/request-router.js';
import { testConnection } from '../helpers/connection-context.js';

const T = ErrorCode.TOPIC_AUTHORIZATION_FAILED;
const G = ErrorCode.GROUP_AUTHORIZATION_FAILED;
const C = ErrorCode.CLUSTER_AUTHORIZATION_FAILED;
const X = ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED;
const AUTH_CODES = new Set<number>([T, G, C, X]);

/* eslint-disable @typescript-eslint/no-explicit-any */
type Row = { name: string; api: number; v: number; body: Record<string, unknown>; code: (r: any) => number; denied: number };
const tp = [{ name: 'orders', partitions: [{ partitionIndex: 0, committedOffset: 0n }] }];
const ROWS: Row[] = [
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
    name: 'DescribeCluster authorized operations',
    api: 60,
    v: 1,
    body: { includeClusterAuthorizedOperations: true, endpointType: 1 },
    code: (r) => (r.clusterAuthorizedOperations === 0 ? C : 0),
    denied: C,
  },
];

async function runRow(c: RawClient, row: Row): Promise<number> {
  const spec = API_SPECS[row.api]!;
  let res: unknown;
  try {
    res = await c.request(row.api, spec.request, spec.response, row.v, row.body as never);
  } catch (err) {
    throw new Error(`${row.name}: ${String(err)}`);
  }
  return row.code(res);
}

async function grantAll(b: TestBroker): Promise<void> {
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

test("every handler checks Kafka's ACL and answers Kafka's code; allowed once granted", async () => {
  const b = await startTestBroker({ 'authorizer.class.name': 'org.apache.kafka.metadata.authorizer.StandardAuthorizer' });
  await createTopic(b, 'orders');
  await createTopic(b, 'gone');
  const c = await RawClient.connect(b.port);
  try {
    const got: string[] = [];
    for (const row of ROWS) got.push(`${row.name}: ${await runRow(c, row)}`);
    assert.deepEqual(
      got,
      ROWS.map((r) => `${r.name}: ${r.denied}`),
    );
    assert.ok(b.broker.services.metadata.topic('auto1') === undefined, 'no auto-creation without CREATE');
    await grantAll(b);
    const after: string[] = [];
    for (const row of ROWS) {
      const code = await runRow(c, row);
      if (AUTH_CODES.has(code)) after.push(`${row.name}: ${code}`);
    }
    assert.deepEqual(after, [], 'no authorization failure once allowed');
  } finally {
    c.close();
    await b.stop();
  }
});

test('super.users are allowed everything; no authorizer means no checks', async () => {
  const cases: Record<string, string>[] = [
    { 'authorizer.class.name': 'kafka.security.authorizer.AclAuthorizer', 'super.users': 'User:admin;User:ANONYMOUS' },
    {},
  ];
  for (const props of cases) {
    const b = await startTestBroker(props);
    await createTopic(b, 'orders');
    await createTopic(b, 'gone');
    const c = await RawClient.connect(b.port);
    try {
      const failed: string[] = [];
      for (const row of ROWS) {
        const code = await runRow(c, row);
        if (AUTH_CODES.has(code)) failed.push(`${row.name}: ${code}`);
      }
      assert.deepEqual(failed, [], JSON.stringify(props));
    } finally {
      c.close();
      await b.stop();
    }
  }
});

/**
 * Requests for the APIs the table above has no row for, used by the derived sweep below: the ACL
 * APIs, the listings (filtered, so refused as "nothing listed"), ControlledShutdown, and the APIs
 * that need no authorization (`denied: NONE`: they answer).
 */
const NONE = ErrorCode.NONE;
const MORE_ROWS: Row[] = [
  {
    name: 'DescribeAcls',
    api: 29,
    v: 3,
    body: { resourceTypeFilter: 1, resourceNameFilter: null, patternTypeFilter: 1, principalFilter: null, hostFilter: null, operation: 1, permissionType: 1 },
    code: (r) => r.errorCode,
    denied: C,
  },
  {
    name: 'CreateAcls',
    api: 30,
    v: 3,
    body: {
      creations: [{ resourceType: 2, resourceName: 'orders', resourcePatternType: 3, principal: 'User:bob', host: '*', operation: 3, permissionType: 3 }],
    },
    code: (r) => r.results[0].errorCode,
    denied: C,
  },
  {
    name: 'DeleteAcls',
    api: 31,
    v: 3,
    body: {
      filters: [
        { resourceTypeFilter: 1, resourceNameFilter: null, patternTypeFilter: 1, principalFilter: null, hostFilter: null, operation: 1, permissionType: 1 },
      ],
    },
    code: (r) => r.filterResults[0].errorCode,
    denied: C,
  },
  {
    name: 'OffsetFetch named topics (v0-v1 answer per partition)',
    api: 9,
    v: 1,
    body: { groupId: 'g', topics: [{ name: 'orders', partitionIndexes: [0] }] },
    code: (r) => r.topics[0].partitions[0].errorCode,
    denied: G,
  },
  {
    name: 'OffsetFetch batched (v8+)',
    api: 9,
    v: 8,
    body: { groups: [{ groupId: 'g', memberId: null, memberEpoch: -1, topics: null }] },
    code: (r) => r.groups[0].errorCode,
    denied: G,
  },
  {
    name: 'DeleteTopics by state (v6)',
    api: 20,
    v: 6,
    body: { topics: [{ name: 'gone', topicId: ZERO_UUID }], timeoutMs: 5000 },
    code: (r) => r.responses[0].errorCode,
    denied: T,
  },
  // Before v3 the response has no error code: a refusal lists no dirs (there is one dir once allowed).
  { name: 'DescribeLogDirs v0-v2 (no dirs)', api: 35, v: 2, body: { topics: null }, code: (r) => (r.results.length === 0 ? C : 0), denied: C },
  { name: 'ControlledShutdown', api: 7, v: 3, body: { brokerId: 0, brokerEpoch: -1n }, code: (r) => r.errorCode, denied: C },
  // A group g and a transaction t1 exist (seedGroupAndTransaction): the listings leave them out.
  { name: 'ListGroups (none listed)', api: 16, v: 4, body: { statesFilter: [] }, code: (r) => (r.groups.length === 0 ? G : 0), denied: G },
  {
    name: 'ListTransactions (none listed)',
    api: 66,
    v: 1,
    body: { stateFilters: [], producerIdFilters: [], durationFilter: -1n },
    code: (r) => (r.transactionStates.length === 0 ? X : 0),
    denied: X,
  },
  { name: 'ApiVersions', api: 18, v: 3, body: { clientSoftwareName: 'acl-test', clientSoftwareVersion: '1' }, code: (r) => r.errorCode, denied: NONE },
  { name: 'SaslHandshake after authentication', api: 17, v: 1, body: { mechanism: 'PLAIN' }, code: (r) => r.errorCode, denied: ErrorCode.ILLEGAL_SASL_STATE },
  {
    name: 'SaslAuthenticate after authentication',
    api: 36,
    v: 2,
    body: { authBytes: Buffer.from('x') },
    code: (r) => r.errorCode,
    denied: ErrorCode.ILLEGAL_SASL_STATE,
  },
];

/** The cluster-mode APIs (controller to broker, reassignments), run in-process: refused before their handler runs. */
const ZK_ROWS: Row[] = [
  { name: 'LeaderAndIsr', api: 4, v: 7, body: {}, code: (r) => r.errorCode, denied: C },
  { name: 'StopReplica', api: 5, v: 4, body: {}, code: (r) => r.errorCode, denied: C },
  { name: 'UpdateMetadata', api: 6, v: 8, body: {}, code: (r) => r.errorCode, denied: C },
  {
    name: 'AlterPartitionReassignments',
    api: 45,
    v: 0,
    body: { topics: [{ name: 'orders', partitions: [{ partitionIndex: 0, replicas: [0] }] }] },
    code: (r) => r.errorCode,
    denied: C,
  },
  { name: 'ListPartitionReassignments', api: 46, v: 0, body: { topics: null }, code: (r) => r.errorCode, denied: C },
];

/** Any authorization failure code anywhere in a response (top level, per resource, per partition). */
function hasAuthFailure(value: unknown, key = ''): boolean {
  if (typeof value === 'number') return /errorcode$/i.test(key) && AUTH_CODES.has(value);
  if (Array.isArray(value)) return value.some((v) => hasAuthFailure(v, key));
  if (value !== null && typeof value === 'object' && !Buffer.isBuffer(value)) {
    return Object.entries(value).some(([k, v]) => hasAuthFailure(v, k));
  }
  return false;
}

/** Refused: an authorization code in the response, or the row's own reading of a refusal (a listing left empty, no operations). */
function refused(row: Row, res: unknown): boolean {
  if (hasAuthFailure(res)) return true;
  try {
    return AUTH_CODES.has(row.code(res));
  } catch {
    return false; // the row's field is not in this version
  }
}

/** Sends until the answer's code (read by `code`) is NONE: a coordinator still loading answers a retriable code. */
async function untilNone<T>(what: string, send: () => Promise<T>, code: (r: T) => number): Promise<T> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const r = await send();
    if (code(r) === ErrorCode.NONE) return r;
    if (Date.now() > deadline) throw new Error(`${what}: ${code(r)}`);
    await new Promise((res) => setTimeout(res, 50)); // poll, bounded
  }
}

/**
 * While everything is allowed: a group g with a committed offset and an ongoing transaction t1,
 * listed by ListGroups and ListTransactions; then every ACL is removed (deny-all again), so a
 * listing that did not filter would show them.
 */
async function seedGroupAndTransaction(b: TestBroker, c: RawClient): Promise<void> {
  await grantAll(b);
  const call = <T>(api: number, v: number, body: Record<string, unknown>): Promise<T> =>
    c.request(api, API_SPECS[api]!.request, API_SPECS[api]!.response, v, body as never) as Promise<T>;
  type Coordinators = { coordinators: { errorCode: number }[] };
  await untilNone(
    'group coordinator',
    () => call<Coordinators>(10, 4, { keyType: 0, coordinatorKeys: ['g'] }),
    (r) => r.coordinators[0]!.errorCode,
  );
  await untilNone(
    'commit',
    () => runRow(c, ROWS.find((x) => x.name === 'OffsetCommit')!),
    (code) => code,
  );
  await untilNone(
    'txn coordinator',
    () => call<Coordinators>(10, 4, { keyType: 1, coordinatorKeys: ['t1'] }),
    (r) => r.coordinators[0]!.errorCode,
  );
  type Init = { errorCode: number; producerId: bigint; producerEpoch: number };
  const init = await untilNone(
    'init',
    () => call<Init>(22, 4, { transactionalId: 't1', transactionTimeoutMs: 60000, producerId: -1n, producerEpoch: -1 }),
    (r) => r.errorCode,
  );
  type Added = { resultsByTopicV3AndBelow: { resultsByPartition: { partitionErrorCode: number }[] }[] };
  await untilNone(
    'add partition',
    () =>
      call<Added>(24, 3, {
        v3AndBelowTransactionalId: 't1',
        v3AndBelowProducerId: init.producerId,
        v3AndBelowProducerEpoch: init.producerEpoch,
        v3AndBelowTopics: [{ name: 'orders', partitions: [0] }],
      }),
    (r) => r.resultsByTopicV3AndBelow[0]!.resultsByPartition[0]!.partitionErrorCode,
  );
  const groups = await call<{ groups: { groupId: string }[] }>(16, 4, { statesFilter: [] });
  assert.deepEqual(
    groups.groups.map((g) => g.groupId),
    ['g'],
  );
  const txns = await call<{ transactionStates: { transactionalId: string }[] }>(66, 1, { stateFilters: [], producerIdFilters: [], durationFilter: -1n });
  assert.deepEqual(
    txns.transactionStates.map((t) => t.transactionalId),
    ['t1'],
  );
  const removed = await b.broker.services.authorizer!.delete([ANY_FILTER]);
  assert.equal(removed[0]!.deleted.length, 4);
}

async function sendInProcess(b: TestBroker, h: ApiHandler, row: Row, version: number): Promise<unknown> {
  const spec = API_SPECS[row.api]!;
  const w = new Writer(256);
  spec.request.write(w, row.body as never, version);
  const ctx: RequestContext = {
    header: { apiKey: h.apiKey, apiVersion: version, correlationId: 1, clientId: 't' },
    connection: testConnection(),
    services: b.broker.services,
  };
  const writeBody = await serveRequest(h, new Reader(w.result()), ctx);
  const out = new Writer(256);
  writeBody!(out);
  return spec.response.read(new Reader(out.result()), version);
}

test('deny-all, derived from the handler table: every served API at every version is refused unless it declares it needs no authorization', async () => {
  const b = await startTestBroker({ 'authorizer.class.name': 'org.apache.kafka.metadata.authorizer.StandardAuthorizer' });
  await createTopic(b, 'orders');
  await createTopic(b, 'gone');
  const c = await RawClient.connect(b.port);
  try {
    await seedGroupAndTransaction(b, c);
    // Fetch v13+ names topics by id.
    const ordersId = b.broker.services.metadata.topic('orders')!.topicId;
    const byId: Row = {
      name: 'Fetch by topic id (v13+)',
      api: 1,
      v: 13,
      body: {
        replicaId: -1,
        maxWaitMs: 0,
        minBytes: 0,
        maxBytes: 1000,
        topics: [{ topic: '', topicId: ordersId, partitions: [{ partition: 0, fetchOffset: 0n, partitionMaxBytes: 1000 }] }],
      },
      code: (r) => r.responses[0].partitions[0].errorCode,
      denied: T,
    };
    const rows = [...ROWS, ...MORE_ROWS, byId];
    const served = [...b.broker.services.handlers.values()];
    const wrong: string[] = [];
    const sweep = async (h: ApiHandler, hRows: Row[], send: (row: Row, v: number) => Promise<unknown>): Promise<void> => {
      if (hRows.length === 0) {
        wrong.push(`${h.name} (${h.apiKey}): no request in the deny-all table`);
        return;
      }
      const needsNone = 'none' in h.authorization;
      for (let v = h.minVersion; v <= h.maxVersion; v++) {
        const outcomes: boolean[] = [];
        for (const row of hRows) outcomes.push(refused(row, await send(row, v)));
        // Some request of the API is refused at this version (a row may be for the other versions' shape).
        if (needsNone ? outcomes.some((o) => o) : !outcomes.some((o) => o)) wrong.push(`${h.name} v${v}: ${needsNone ? 'refused' : 'answered'}`);
      }
    };
    for (const h of served) {
      await sweep(
        h,
        rows.filter((r) => r.api === h.apiKey),
        (row, v) => c.request(row.api, API_SPECS[row.api]!.request, API_SPECS[row.api]!.response, v, row.body as never),
      );
    }
    assert.ok(served.length >= 46, `${served.length} APIs served`);
    // Needing no authorization is the exception, declared in the handler and named here.
    assert.deepEqual(
      served
        .filter((h) => 'none' in h.authorization)
        .map((h) => h.name)
        .sort(),
      ['ApiVersions', 'SaslAuthenticate', 'SaslHandshake'],
    );
    for (const h of ZK_BROKER_HANDLERS) {
      assert.ok(!served.includes(h), `${h.name} is not served in embedded mode`);
      await sweep(
        h,
        ZK_ROWS.filter((r) => r.api === h.apiKey),
        (row, v) => sendInProcess(b, h, row, v),
      );
    }
    assert.deepEqual(wrong, []);
    // And each request of the added rows answers as its row says (the table above checks its own).
    const got: string[] = [];
    for (const row of [...MORE_ROWS, byId]) got.push(`${row.name}: ${await runRow(c, row)}`);
    for (const row of ZK_ROWS) got.push(`${row.name}: ${row.code(await sendInProcess(b, ZK_BROKER_HANDLERS.find((h) => h.apiKey === row.api)!, row, row.v))}`);
    assert.deepEqual(
      got,
      [...MORE_ROWS, byId, ...ZK_ROWS].map((r) => `${r.name}: ${r.denied}`),
    );
  } finally {
    c.close();
    await b.stop();
  }
});

test('ListGroups shows only the groups the principal may describe (all of them with DESCRIBE on the cluster)', async () => {
  const b = await startTestBroker({ 'authorizer.class.name': 'kafka.security.authorizer.AclAuthorizer' });
  await createTopic(b, 'orders');
  const c = await RawClient.connect(b.port);
  try {
    const allow = (resourceType: ResourceType, name: string, operation: AclOperation) => ({
      pattern: { resourceType, name, patternType: PatternType.LITERAL },
      entry: { principal: 'User:ANONYMOUS', host: '*', operation, permissionType: AclPermissionType.ALLOW },
    });
    await b.broker.services.authorizer!.create([
      allow(ResourceType.TOPIC, 'orders', AclOperation.READ),
      allow(ResourceType.GROUP, 'g', AclOperation.ALL),
      allow(ResourceType.GROUP, 'h', AclOperation.READ),
    ]);
    const find = API_SPECS[10]!;
    for (const group of ['g', 'h']) {
      const deadline = Date.now() + 30_000;
      for (;;) {
        const r = (await c.request(10, find.request, find.response, 4, { keyType: 0, coordinatorKeys: [group] } as never)) as {
          coordinators: { errorCode: number }[];
        };
        if (r.coordinators[0]!.errorCode === 0) break;
        if (Date.now() > deadline) throw new Error('no coordinator');
        await new Promise((res) => setTimeout(res, 50)); // poll, bounded
      }
      const commitRow = ROWS.find((x) => x.name === 'OffsetCommit')!;
      const commit = await runRow(c, { ...commitRow, body: { ...commitRow.body, groupId: group } });
      assert.equal(commit, 0, `commit to ${group}`);
    }
    const listRow = { body: { statesFilter: [] } };
    const spec = API_SPECS[16]!;
    const listed = (await c.request(16, spec.request, spec.response, 4, listRow.body as never)) as { groups: { groupId: string }[] };
    assert.deepEqual(listed.groups.map((g) => g.groupId).sort(), ['g', 'h'], 'READ implies DESCRIBE: both');
    await b.broker.services.authorizer!.create([
      {
        pattern: { resourceType: ResourceType.GROUP, name: 'h', patternType: PatternType.LITERAL },
        entry: { principal: 'User:ANONYMOUS', host: '*', operation: AclOperation.DESCRIBE, permissionType: AclPermissionType.DENY },
      },
    ]);
    const after = (await c.request(16, spec.request, spec.response, 4, listRow.body as never)) as { groups: { groupId: string }[] };
    assert.deepEqual(
      after.groups.map((g) => g.groupId),
      ['g'],
      'a DESCRIBE deny hides h',
    );
    await b.broker.services.authorizer!.create([allow(ResourceType.CLUSTER, 'kafka-cluster', AclOperation.DESCRIBE)]);
    const all = (await c.request(16, spec.request, spec.response, 4, listRow.body as never)) as { groups: { groupId: string }[] };
    assert.deepEqual(all.groups.map((g) => g.groupId).sort(), ['g', 'h'], 'DESCRIBE on the cluster lists every group');
  } finally {
    c.close();
    await b.stop();
  }
});

test("CreateTopics answers the new topic's configs only with DESCRIBE_CONFIGS on it", async () => {
  const b = await startTestBroker({ 'authorizer.class.name': 'kafka.security.authorizer.AclAuthorizer' });
  const c = await RawClient.connect(b.port);
  try {
    const grant = (name: string, operation: AclOperation) => ({
      pattern: { resourceType: ResourceType.TOPIC, name, patternType: PatternType.PREFIXED },
      entry: { principal: 'User:ANONYMOUS', host: '*', operation, permissionType: AclPermissionType.ALLOW },
    });
    await b.broker.services.authorizer!.create([
      grant('blind-', AclOperation.CREATE),
      grant('seen-', AclOperation.CREATE),
      grant('seen-', AclOperation.DESCRIBE_CONFIGS),
    ]);
    const spec = API_SPECS[19]!;
    const res = (await c.request(19, spec.request, spec.response, 7, {
      topics: ['blind-1', 'seen-1'].map((name) => ({ name, numPartitions: 1, replicationFactor: 1, assignments: [], configs: [] })),
      timeoutMs: 5000,
    } as never)) as { topics: { name: string; errorCode: number; topicConfigErrorCode: number; configs: unknown[] }[] };
    assert.deepEqual(
      res.topics.map((t) => [t.name, t.errorCode, t.topicConfigErrorCode, t.configs.length > 0]),
      [
        ['blind-1', 0, ErrorCode.TOPIC_AUTHORIZATION_FAILED, false],
        ['seen-1', 0, 0, true],
      ],
    );
  } finally {
    c.close();
    await b.stop();
  }
});
