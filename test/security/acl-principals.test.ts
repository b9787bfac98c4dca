/**
 * Handlers called directly with a connection's principal and host (testConnection), as TLS or
 * SASL will set them: the decision follows ctx.connection.principal and clientHost, Metadata
 * hides and reports per principal, authorized operations are the principal's.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Writer, Reader, type Input, type MessageCodec } from '../../src/protocol/primitives/index.js';
import { MetadataRequestCodec, MetadataResponseCodec, DescribeGroupsRequestCodec, DescribeGroupsResponseCodec } from '../../src/protocol/messages/index.js';
import type { ApiHandler, RequestContext } from '../../src/server/handlers/types.js';
import { serveRequest } from '../../src/server/request-router.js';
import { metadataHandler } from '../../src/server/handlers/03-metadata.js';
import { describeGroupsHandler } from '../../src/server/handlers/15-describe-groups.js';
import { startTestBroker, type TestBroker } from '../helpers/broker.js';
import { testConnection } from '../helpers/connection-context.js';
import { createTopic } from '../server/handlers/data-plane-helpers.js';
import { userPrincipal } from '../../src/security/principal.js';
import { AclOperation as Op, AclPermissionType as Perm, PatternType, ResourceType as RT } from '../../src/security/authorizer/acl-model.js';
import { ErrorCode } from '../../src/protocol/errors.js';

async function call<Req, Res>(
  b: TestBroker,
  h: ApiHandler,
  reqCodec: MessageCodec<Req>,
  resCodec: MessageCodec<Res>,
  req: Input<Req>,
  version: number,
  who: { user: string; host: string },
): Promise<Res> {
  const w = new Writer(256);
  reqCodec.write(w, req, version);
  const ctx: RequestContext = {
    header: { apiKey: h.apiKey, apiVersion: version, correlationId: 1, clientId: 't' },
    connection: testConnection({ principal: userPrincipal(who.user), clientHost: who.host }),
    services: b.broker.services,
  };
  const writeBody = await serveRequest(h, new Reader(w.result()), ctx);
  const out = new Writer(256);
  writeBody!(out);
  return resCodec.read(new Reader(out.result()), version);
}

const bit = (...ops: Op[]): number => ops.reduce((acc, o) => acc | (1 << o), 0);

test('the principal and host of the connection decide; Metadata and DescribeGroups answer per principal', async () => {
  const b = await startTestBroker({ 'authorizer.class.name': 'kafka.security.authorizer.AclAuthorizer', 'super.users': 'User:admin' });
  try {
    for (const t of ['orders', 'payments']) await createTopic(b, t);
    const a = b.broker.services.authorizer!;
    assert.deepEqual(
      await a.create([
        {
          pattern: { resourceType: RT.TOPIC, name: 'orders', patternType: PatternType.LITERAL },
          entry: { principal: 'User:bob', host: '10.0.0.5', operation: Op.WRITE, permissionType: Perm.ALLOW },
        },
        {
          pattern: { resourceType: RT.TOPIC, name: 'pay', patternType: PatternType.PREFIXED },
          entry: { principal: 'User:alice', host: '*', operation: Op.ALL, permissionType: Perm.ALLOW },
        },
        {
          pattern: { resourceType: RT.GROUP, name: 'billing', patternType: PatternType.LITERAL },
          entry: { principal: 'User:alice', host: '*', operation: Op.READ, permissionType: Perm.ALLOW },
        },
      ]),
      [undefined, undefined, undefined],
    );
    const all = async (user: string, host = '10.0.0.5') =>
      (
        await call(b, metadataHandler, MetadataRequestCodec, MetadataResponseCodec, { topics: null, includeTopicAuthorizedOperations: true }, 12, {
          user,
          host,
        })
      ).topics;
    assert.deepEqual(
      (await all('bob')).map((t) => t.name),
      ['orders'],
    );
    assert.equal((await all('bob')).find((t) => t.name === 'orders')!.topicAuthorizedOperations, bit(Op.WRITE, Op.DESCRIBE), 'WRITE, and DESCRIBE implied');
    assert.deepEqual(
      (await all('bob', '10.0.0.6')).map((t) => t.name),
      [],
      'the ACL is for host 10.0.0.5 only',
    );
    assert.deepEqual(
      (await all('alice')).map((t) => t.name),
      ['payments'],
    );
    assert.equal(
      (await all('alice'))[0]!.topicAuthorizedOperations,
      bit(Op.READ, Op.WRITE, Op.CREATE, Op.DELETE, Op.ALTER, Op.DESCRIBE, Op.DESCRIBE_CONFIGS, Op.ALTER_CONFIGS),
    );
    assert.deepEqual((await all('admin')).map((t) => t.name).sort(), ['orders', 'payments'], 'super user');
    const named = await call(
      b,
      metadataHandler,
      MetadataRequestCodec,
      MetadataResponseCodec,
      { topics: [{ name: 'payments' }, { name: 'nope' }], allowAutoTopicCreation: true },
      12,
      { user: 'bob', host: '10.0.0.5' },
    );
    assert.deepEqual(
      named.topics.map((t) => t.errorCode),
      [ErrorCode.TOPIC_AUTHORIZATION_FAILED, ErrorCode.TOPIC_AUTHORIZATION_FAILED],
    );
    const cluster = await call(b, metadataHandler, MetadataRequestCodec, MetadataResponseCodec, { topics: [], includeClusterAuthorizedOperations: true }, 10, {
      user: 'alice',
      host: 'h',
    });
    assert.equal(cluster.clusterAuthorizedOperations, 0);
    const groups = await call(
      b,
      describeGroupsHandler,
      DescribeGroupsRequestCodec,
      DescribeGroupsResponseCodec,
      { groups: ['billing', 'other'], includeAuthorizedOperations: true },
      5,
      { user: 'alice', host: 'h' },
    );
    // billing is described (here NOT_COORDINATOR: no __consumer_offsets yet), other refused.
    assert.notEqual(groups.groups[0]!.errorCode, ErrorCode.GROUP_AUTHORIZATION_FAILED);
    assert.equal(groups.groups[1]!.errorCode, ErrorCode.GROUP_AUTHORIZATION_FAILED);
    assert.equal(groups.groups[0]!.authorizedOperations, bit(Op.READ, Op.DESCRIBE));
  } finally {
    await b.stop();
  }
});
