/**
 * ACLs in ZooKeeper: Kafka's znodes and bodies, change notifications followed by another
 * broker's authorizer, conditional updates from two writers, and kafka-acls.sh writing
 * ZooKeeper directly (--authorizer-properties zookeeper.connect=...).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ZkSession } from '../../src/metadata/zk/zk-session.js';
import { ZkAcls } from '../../src/metadata/zk/zk-acls.js';
import { Authorizer } from '../../src/security/authorizer/authorizer.js';
import { AclOperation as Op, AclPermissionType as Perm, PatternType, ResourceType as RT } from '../../src/security/authorizer/acl-model.js';
import { userPrincipal } from '../../src/security/principal.js';
import { requirePeer } from '../helpers/peers.js';
import { startZooKeeper } from '../helpers/zookeeper.js';
import { runCli } from '../cli/helpers.js';

const allow = (name: string, patternType: PatternType, principal: string, operation: Op) => ({
  pattern: { resourceType: RT.TOPIC, name, patternType },
  entry: { principal, host: '*', operation, permissionType: Perm.ALLOW },
});

async function until(what: string, probe: () => boolean): Promise<void> {
  const deadline = Date.now() + 20_000;
  while (!probe()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20)); // poll, bounded
  }
}

test("ZooKeeper ACLs: Kafka's znodes, notifications, another broker follows; kafka-acls.sh writes ZooKeeper directly", async (t) => {
  if (!requirePeer(t, 'zookeeper')) return;
  const zk = await startZooKeeper();
  const sessions: ZkSession[] = [];
  const authorizers: Authorizer[] = [];
  try {
    const open = async (follow = true): Promise<{ a: Authorizer; s: ZkSession }> => {
      const s = await ZkSession.open({ connect: zk.connect, sessionTimeoutMs: 6000, connectionTimeoutMs: 10_000 });
      sessions.push(s);
      const a = await Authorizer.open({ storage: new ZkAcls(s), superUsers: [], allowEveryoneIfNoAclFound: false, follow });
      authorizers.push(a);
      return { a, s };
    };
    const { a, s } = await open();
    const { a: b } = await open();
    const bob = userPrincipal('bob');
    assert.equal(b.authorize(bob, 'h', Op.READ, RT.TOPIC, 'orders'), false);
    // Two writers on one znode at once: both entries survive (conditional updates, retried).
    const results = await Promise.all([
      a.create([allow('orders', PatternType.LITERAL, 'User:bob', Op.READ)]),
      b.create([allow('orders', PatternType.LITERAL, 'User:carol', Op.WRITE)]),
    ]);
    assert.deepEqual(results, [[undefined], [undefined]]);
    await a.create([allow('team-', PatternType.PREFIXED, 'User:bob', Op.WRITE)]);
    const lit = JSON.parse((await s.get('/kafka-acl/Topic/orders')).data.toString());
    assert.equal(lit.version, 1);
    assert.deepEqual(lit.acls.map((x: { principal: string }) => x.principal).sort(), ['User:bob', 'User:carol']);
    assert.deepEqual(
      lit.acls.find((x: { principal: string }) => x.principal === 'User:bob'),
      { principal: 'User:bob', permissionType: 'Allow', operation: 'Read', host: '*' },
    );
    assert.deepEqual(JSON.parse((await s.get('/kafka-acl-extended/prefixed/Topic/team-')).data.toString()).acls, [
      { principal: 'User:bob', permissionType: 'Allow', operation: 'Write', host: '*' },
    ]);
    const changes = await s.children('/kafka-acl-changes');
    assert.ok(changes.every((c) => /^acl_changes_\d{10}$/.test(c)) && changes.length >= 2);
    assert.equal((await s.get(`/kafka-acl-changes/${changes.sort()[0]}`)).data.toString(), 'Topic:orders');
    const ext = await s.children('/kafka-acl-extended-changes');
    assert.deepEqual(JSON.parse((await s.get(`/kafka-acl-extended-changes/${ext[0]}`)).data.toString()), {
      version: 1,
      resourceType: 'Topic',
      name: 'team-',
      patternType: 'PREFIXED',
    });
    await until('broker b sees both ACLs', () => b.authorize(bob, 'h', Op.READ, RT.TOPIC, 'orders') && b.authorize(bob, 'h', Op.WRITE, RT.TOPIC, 'team-x'));
    await until('broker a sees carol', () => a.authorize(userPrincipal('carol'), 'h', Op.WRITE, RT.TOPIC, 'orders'));

    // kafka-acls.sh straight to ZooKeeper; broker b follows.
    const cli = await runCli('kafka-acls', [
      '--authorizer-properties',
      `zookeeper.connect=${zk.connect}`,
      '--add',
      '--deny-principal',
      'User:bob',
      '--operation',
      'Read',
      '--topic',
      'orders',
    ]);
    assert.equal(cli.code, 0, cli.stderr);
    assert.match(cli.stdout, /Current ACLs for resource `ResourcePattern\(resourceType=TOPIC, name=orders, patternType=LITERAL\)`: \n/);
    assert.match(cli.stdout, /operation=READ, permissionType=DENY/);
    await until('the deny reaches broker b', () => !b.authorize(bob, 'h', Op.READ, RT.TOPIC, 'orders'));
    const removed = await runCli('kafka-acls', ['--authorizer-properties', `zookeeper.connect=${zk.connect}`, '--remove', '--force', '--topic', 'orders']);
    assert.equal(removed.code, 0, removed.stderr);
    assert.equal(await s.exists('/kafka-acl/Topic/orders'), null, 'an empty pattern has no znode');
    await until('the removal reaches broker a', () => !a.authorize(userPrincipal('carol'), 'h', Op.WRITE, RT.TOPIC, 'orders'));
    // A fresh authorizer loads what is there.
    const { a: c } = await open(false);
    assert.equal(c.authorize(bob, 'h', Op.WRITE, RT.TOPIC, 'team-y'), true);
    assert.equal(
      c.describe({
        pattern: { resourceType: RT.ANY, name: null, patternType: PatternType.ANY },
        entry: { principal: null, host: null, operation: Op.ANY, permissionType: Perm.ANY },
      }).length,
      1,
    );
  } finally {
    for (const x of authorizers) x.close();
    for (const x of sessions) await x.close();
    await zk.stop();
  }
});
