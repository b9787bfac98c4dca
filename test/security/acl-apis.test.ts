import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestBroker } from '../helpers/broker.js';
import { RawClient } from '../helpers/raw-client.js';
import {
  CreateAclsRequestCodec,
  CreateAclsResponseCodec,
  DescribeAclsRequestCodec,
  DescribeAclsResponseCodec,
  DeleteAclsRequestCodec,
  DeleteAclsResponseCodec,
} from '../../src/protocol/messages/index.js';
import { ErrorCode } from '../../src/protocol/errors.js';
import { buildBrokerConfig } from '../../src/server/config/index.js';

test("authorizer.class.name: Kafka's two class names or empty; anything else refused at start-up in one line", () => {
  for (const ok of ['', 'kafka.security.authorizer.AclAuthorizer', 'org.apache.kafka.metadata.authorizer.StandardAuthorizer']) {
    assert.equal(buildBrokerConfig(new Map([['authorizer.class.name', ok]])).values.get('authorizer.class.name'), ok);
  }
  assert.throws(
    () => buildBrokerConfig(new Map([['authorizer.class.name', 'com.example.MyAuthorizer']])),
    /Invalid value com\.example\.MyAuthorizer for configuration authorizer\.class\.name: String must be one of: "" \(empty\), kafka\.security\.authorizer\.AclAuthorizer, org\.apache\.kafka\.metadata\.authorizer\.StandardAuthorizer/,
  );
  const cfg = buildBrokerConfig(new Map([['super.users', 'User:a;User:b']]));
  assert.equal(cfg.values.get('super.users'), 'User:a;User:b');
  assert.equal(cfg.values.get('allow.everyone.if.no.acl.found'), false);
});

const AUTHZ = { 'authorizer.class.name': 'kafka.security.authorizer.AclAuthorizer' };
const creation = (name: string, op: number, patternType = 3, principal = 'User:bob') => ({
  resourceType: 2,
  resourceName: name,
  resourcePatternType: patternType,
  principal,
  host: '*',
  operation: op,
  permissionType: 3,
});
const anyFilter = {
  resourceTypeFilter: 1,
  resourceNameFilter: null,
  patternTypeFilter: 1,
  principalFilter: null,
  hostFilter: null,
  operation: 1,
  permissionType: 1,
};

test('ACL APIs answer SECURITY_DISABLED without an authorizer', async () => {
  const b = await startTestBroker();
  const c = await RawClient.connect(b.port);
  try {
    const d = await c.request(29, DescribeAclsRequestCodec, DescribeAclsResponseCodec, 2, anyFilter);
    assert.equal(d.errorCode, ErrorCode.SECURITY_DISABLED);
    const cr = await c.request(30, CreateAclsRequestCodec, CreateAclsResponseCodec, 2, { creations: [creation('orders', 4)] });
    assert.equal(cr.results[0]!.errorCode, ErrorCode.SECURITY_DISABLED);
    const dl = await c.request(31, DeleteAclsRequestCodec, DeleteAclsResponseCodec, 2, { filters: [anyFilter] });
    assert.equal(dl.filterResults[0]!.errorCode, ErrorCode.SECURITY_DISABLED);
  } finally {
    c.close();
    await b.stop();
  }
});

test('ACL APIs need ALTER/DESCRIBE on the cluster', async () => {
  const b = await startTestBroker(AUTHZ);
  const c = await RawClient.connect(b.port);
  try {
    const d = await c.request(29, DescribeAclsRequestCodec, DescribeAclsResponseCodec, 3, anyFilter);
    assert.equal(d.errorCode, ErrorCode.CLUSTER_AUTHORIZATION_FAILED);
    const cr = await c.request(30, CreateAclsRequestCodec, CreateAclsResponseCodec, 3, { creations: [creation('orders', 4)] });
    assert.equal(cr.results[0]!.errorCode, ErrorCode.CLUSTER_AUTHORIZATION_FAILED);
    const dl = await c.request(31, DeleteAclsRequestCodec, DeleteAclsResponseCodec, 3, { filters: [anyFilter] });
    assert.equal(dl.filterResults[0]!.errorCode, ErrorCode.CLUSTER_AUTHORIZATION_FAILED);
  } finally {
    c.close();
    await b.stop();
  }
});

test('create, describe and delete at every version; bad bindings and filters get INVALID_REQUEST; ACLs survive a restart', async () => {
  let b = await startTestBroker({ ...AUTHZ, 'super.users': 'User:ANONYMOUS' });
  const dir = b.dir;
  let c = await RawClient.connect(b.port);
  try {
    for (let v = 0; v <= 3; v++) {
      const cr = await c.request(30, CreateAclsRequestCodec, CreateAclsResponseCodec, v, {
        creations: [creation(`t${v}`, 3), creation(`t${v}`, 4), creation('p-', 3, 4), { ...creation('x', 3), resourceType: 4 }],
      });
      assert.deepEqual(cr.results.map((r) => r.errorCode).slice(0, 2), [0, 0], `v${v}`);
      // v0 carries no pattern type: the prefixed creation is a literal one there.
      assert.equal(cr.results[2]!.errorCode, 0);
      assert.equal(cr.results[3]!.errorCode, ErrorCode.INVALID_REQUEST, 'CLUSTER must be named kafka-cluster');
    }
    const all = await c.request(29, DescribeAclsRequestCodec, DescribeAclsResponseCodec, 3, anyFilter);
    assert.equal(all.errorCode, 0);
    const t1 = all.resources.find((r) => r.resourceName === 't1')!;
    assert.deepEqual(t1.acls.map((a) => a.operation).sort(), [3, 4]);
    assert.ok(all.resources.some((r) => r.resourceName === 'p-' && r.patternType === 4));
    const match = await c.request(29, DescribeAclsRequestCodec, DescribeAclsResponseCodec, 1, {
      ...anyFilter,
      resourceTypeFilter: 2,
      resourceNameFilter: 'p-abc',
      patternTypeFilter: 2,
    });
    assert.deepEqual(
      match.resources.map((r) => `${r.resourceName}/${r.patternType}`),
      ['p-/4'],
    );
    const bad = await c.request(29, DescribeAclsRequestCodec, DescribeAclsResponseCodec, 3, { ...anyFilter, operation: 0 });
    assert.equal(bad.errorCode, ErrorCode.INVALID_REQUEST);
    const v0 = await c.request(29, DescribeAclsRequestCodec, DescribeAclsResponseCodec, 0, { ...anyFilter, resourceTypeFilter: 2, resourceNameFilter: 't0' });
    assert.equal(v0.resources.length, 1);
    c.close();
    await b.stop({ keepDir: true });
    b = await startTestBroker({ ...AUTHZ, 'super.users': 'User:ANONYMOUS' }, dir);
    c = await RawClient.connect(b.port);
    const dl = await c.request(31, DeleteAclsRequestCodec, DeleteAclsResponseCodec, 2, {
      filters: [
        { ...anyFilter, resourceTypeFilter: 2, resourceNameFilter: 't2', patternTypeFilter: 3, operation: 3 },
        { ...anyFilter, permissionType: 0 },
      ],
    });
    assert.equal(dl.filterResults[0]!.errorCode, 0);
    assert.deepEqual(
      dl.filterResults[0]!.matchingAcls.map((a) => [a.resourceName, a.operation]),
      [['t2', 3]],
      'survived the restart, then deleted',
    );
    assert.equal(dl.filterResults[1]!.errorCode, ErrorCode.INVALID_REQUEST);
    const after = await c.request(29, DescribeAclsRequestCodec, DescribeAclsResponseCodec, 3, { ...anyFilter, resourceNameFilter: 't2' });
    assert.deepEqual(
      after.resources[0]!.acls.map((a) => a.operation),
      [4],
    );
  } finally {
    c.close();
    await b.stop();
    const { rm } = await import('node:fs/promises');
    await rm(dir, { recursive: true, force: true });
  }
});
