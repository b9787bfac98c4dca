/**
 * Every handler's ACL check, table-driven over the wire as User:ANONYMOUS (PLAINTEXT): with an
 * authorizer and no ACL each request gets Kafka's authorization code; once ANONYMOUS is allowed
 * on the topic, group, transactional id and cluster, none does (the rows: acl-rows.ts). The
 * deny-all sweep derived from the handler table is acl-deny-all.test.ts.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestBroker } from '../helpers/broker.js';
import { RawClient } from '../helpers/raw-client.js';
import { createTopic } from '../server/handlers/data-plane-helpers.js';
import { API_SPECS } from '../../src/protocol/messages/index.js';
import { ErrorCode } from '../../src/protocol/errors.js';
import { AclOperation, AclPermissionType, PatternType, ResourceType } from '../../src/security/authorizer/acl-model.js';
import { AUTH_CODES, ROWS, grantAll, runRow } from './acl-rows.js';

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
