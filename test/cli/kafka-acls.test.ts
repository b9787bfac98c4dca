import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestBroker } from '../helpers/broker.js';
import { runCli } from './helpers.js';

const TOPIC_ORDERS = 'ResourcePattern(resourceType=TOPIC, name=orders, patternType=LITERAL)';

test("kafka-acls.sh: add, list, conveniences, remove, with AclCommand's output and errors", async () => {
  const b = await startTestBroker({ 'authorizer.class.name': 'kafka.security.authorizer.AclAuthorizer', 'super.users': 'User:ANONYMOUS' });
  const bs = ['--bootstrap-server', b.bootstrap];
  try {
    const add = await runCli('kafka-acls', [
      ...bs,
      '--add',
      '--allow-principal',
      'User:bob',
      '--operation',
      'Read',
      '--operation',
      'Write',
      '--topic',
      'orders',
    ]);
    assert.equal(add.stderr, '');
    assert.equal(add.code, 0);
    const block =
      ' \n \t(principal=User:bob, host=*, operation=READ, permissionType=ALLOW)\n\t(principal=User:bob, host=*, operation=WRITE, permissionType=ALLOW) \n\n';
    assert.equal(add.stdout, `Adding ACLs for resource \`${TOPIC_ORDERS}\`:${block}Current ACLs for resource \`${TOPIC_ORDERS}\`:${block}`);

    const prod = await runCli('kafka-acls', [
      ...bs,
      '--add',
      '--allow-principal',
      'User:alice',
      '--producer',
      '--topic',
      'team-',
      '--resource-pattern-type',
      'prefixed',
      '--transactional-id',
      'tx',
      '--idempotent',
    ]);
    assert.equal(prod.code, 0, prod.stderr);
    assert.match(
      prod.stdout,
      /Adding ACLs for resource `ResourcePattern\(resourceType=TOPIC, name=team-, patternType=PREFIXED\)`: \n \t\(principal=User:alice, host=\*, operation=WRITE, permissionType=ALLOW\)\n\t\(principal=User:alice, host=\*, operation=DESCRIBE, permissionType=ALLOW\)\n\t\(principal=User:alice, host=\*, operation=CREATE, permissionType=ALLOW\) \n/,
    );
    assert.match(prod.stdout, /resourceType=TRANSACTIONAL_ID, name=tx, patternType=PREFIXED/);
    assert.match(
      prod.stdout,
      /resourceType=CLUSTER, name=kafka-cluster, patternType=LITERAL\)`: \n \t\(principal=User:alice, host=\*, operation=IDEMPOTENT_WRITE, permissionType=ALLOW\)/,
    );

    const cons = await runCli('kafka-acls', [
      ...bs,
      '--add',
      '--allow-principal',
      'User:bob',
      '--deny-principal',
      'User:eve',
      '--deny-host',
      '10.0.0.9',
      '--consumer',
      '--topic',
      'orders',
      '--group',
      'g1',
    ]);
    assert.equal(cons.code, 0, cons.stderr);
    assert.match(cons.stdout, /\(principal=User:eve, host=10\.0\.0\.9, operation=READ, permissionType=DENY\)/);

    const list = await runCli('kafka-acls', [...bs, '--list', '--topic', 'orders']);
    assert.equal(list.code, 0, list.stderr);
    assert.match(list.stdout, new RegExp(`^Current ACLs for resource \`${TOPIC_ORDERS.replace(/[()]/g, '\\$&')}\`: \n`));
    assert.equal(list.stdout.match(/\(principal=/g)?.length, 5, list.stdout);

    const byPrincipal = await runCli('kafka-acls', [...bs, '--list', '--principal', 'User:alice']);
    assert.match(byPrincipal.stdout, /^ACLs for principal `User:alice`\n/);
    assert.doesNotMatch(byPrincipal.stdout, /User:bob/);
    const match = await runCli('kafka-acls', [...bs, '--list', '--topic', 'team-blue', '--resource-pattern-type', 'match']);
    assert.match(match.stdout, /name=team-, patternType=PREFIXED/);

    const rm = await runCli('kafka-acls', [...bs, '--remove', '--force', '--allow-principal', 'User:bob', '--operation', 'Write', '--topic', 'orders']);
    assert.equal(rm.code, 0, rm.stderr);
    assert.doesNotMatch(rm.stdout, /operation=WRITE/);
    assert.match(rm.stdout, /operation=READ, permissionType=ALLOW/);
    const no = await runCli('kafka-acls', [...bs, '--remove', '--topic', 'orders'], { input: 'n\n' });
    assert.match(
      no.stdout,
      /Are you sure you want to delete all ACLs for resource filter `ResourcePatternFilter\(resourceType=TOPIC, name=orders, patternType=LITERAL\)`\? \(y\/n\)/,
    );
    assert.match(no.stdout, /operation=READ/, 'answered n: kept');
    const yes = await runCli('kafka-acls', [...bs, '--remove', '--topic', 'orders'], { input: 'y\n' });
    assert.equal(yes.code, 0);
    const after = await runCli('kafka-acls', [...bs, '--list', '--topic', 'orders']);
    assert.equal(after.stdout, '');

    const bad = await runCli('kafka-acls', [...bs, '--add', '--allow-principal', 'User:bob', '--operation', 'Read', '--cluster']);
    assert.equal(bad.code, 1);
    assert.equal(
      bad.stderr.trim(),
      'kafka-acls.sh: ResourceType CLUSTER only supports operations Create, ClusterAction, DescribeConfigs, AlterConfigs, IdempotentWrite, Alter, Describe, All',
    );
    const badP = await runCli('kafka-acls', [...bs, '--add', '--allow-principal', 'bob', '--topic', 'x']);
    assert.equal(badP.code, 1);
    assert.match(badP.stderr, /^kafka-acls\.sh: Could not parse principal/);
    const two = await runCli('kafka-acls', [...bs, '--add', '--list']);
    assert.equal(two.code, 1);
    assert.equal(two.stderr.split('\n').filter(Boolean).length, 1);
  } finally {
    await b.stop();
  }
});

test('kafka-acls.sh without an authorizer on the broker: one clear line', async () => {
  const b = await startTestBroker();
  try {
    const r = await runCli('kafka-acls', ['--bootstrap-server', b.bootstrap, '--list']);
    assert.equal(r.code, 1);
    assert.match(r.stderr, /^kafka-acls\.sh: .*(SECURITY_DISABLED|No Authorizer is configured)/);
    assert.equal(r.stderr.trim().split('\n').length, 1);
  } finally {
    await b.stop();
  }
});
