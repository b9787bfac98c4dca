/**
 * The deny-all sweep, derived from the handler table: every API the broker serves (and the
 * cluster-mode ones, in process), at every version it serves, is refused under an authorizer with
 * no ACL, or answers when its handler declares it needs no authorization; a served API without a
 * row fails. The rows are acl-rows.ts's plus those below.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestBroker, type TestBroker } from '../helpers/broker.js';
import { RawClient } from '../helpers/raw-client.js';
import { createTopic } from '../server/handlers/data-plane-helpers.js';
import { API_SPECS } from '../../src/protocol/messages/index.js';
import { ErrorCode } from '../../src/protocol/errors.js';
import { ANY_FILTER } from '../../src/security/authorizer/acl-model.js';
import { Reader, Writer, ZERO_UUID } from '../../src/protocol/primitives/index.js';
import { ZK_BROKER_HANDLERS } from '../../src/server/handlers/index.js';
import type { ApiHandler, RequestContext } from '../../src/server/handlers/types.js';
import { serveRequest } from '../../src/server/request-router.js';
import { testConnection } from '../helpers/connection-context.js';
import { AUTH_CODES, C, G, ROWS, T, TOKEN_ROWS, X, grantAll, runRow, type Row } from './acl-rows.js';

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
  // KIP-714: no authorization for a client's own telemetry (a zero instance id pushed is INVALID_REQUEST); listing needs DESCRIBE on the cluster.
  { name: 'GetTelemetrySubscriptions', api: 71, v: 0, body: { clientInstanceId: ZERO_UUID }, code: (r) => r.errorCode, denied: NONE },
  {
    name: 'PushTelemetry',
    api: 72,
    v: 0,
    body: { clientInstanceId: ZERO_UUID, subscriptionId: 0 },
    code: (r) => r.errorCode,
    denied: ErrorCode.INVALID_REQUEST,
  },
  { name: 'ListClientMetricsResources', api: 74, v: 0, body: {}, code: (r) => r.errorCode, denied: C },
  { name: 'SaslHandshake after authentication', api: 17, v: 1, body: { mechanism: 'PLAIN' }, code: (r) => r.errorCode, denied: ErrorCode.ILLEGAL_SASL_STATE },
  {
    name: 'SaslAuthenticate after authentication',
    api: 36,
    v: 2,
    body: { authBytes: Buffer.from('x') },
    code: (r) => r.errorCode,
    denied: ErrorCode.ILLEGAL_SASL_STATE,
  },
  {
    name: 'ConsumerGroupHeartbeat',
    api: 68,
    v: 1,
    body: { groupId: 'g', memberId: 'm', memberEpoch: 0, rebalanceTimeoutMs: 30000, subscribedTopicNames: ['orders'], topicPartitions: [] },
    code: (r) => r.errorCode,
    denied: G,
  },
  { name: 'ConsumerGroupDescribe', api: 69, v: 0, body: { groupIds: ['g'], includeAuthorizedOperations: true }, code: (r) => r.groups[0].errorCode, denied: G },
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
    const rows = [...ROWS, ...MORE_ROWS, ...TOKEN_ROWS, byId];
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
      ['ApiVersions', 'GetTelemetrySubscriptions', 'PushTelemetry', 'SaslAuthenticate', 'SaslHandshake'],
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
    for (const row of [...MORE_ROWS, ...TOKEN_ROWS, byId]) got.push(`${row.name}: ${await runRow(c, row)}`);
    for (const row of ZK_ROWS) got.push(`${row.name}: ${row.code(await sendInProcess(b, ZK_BROKER_HANDLERS.find((h) => h.apiKey === row.api)!, row, row.v))}`);
    assert.deepEqual(
      got,
      [...MORE_ROWS, ...TOKEN_ROWS, byId, ...ZK_ROWS].map((r) => `${r.name}: ${r.denied}`),
    );
  } finally {
    c.close();
    await b.stop();
  }
});
