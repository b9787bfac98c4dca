/**
 * Client entities (users, client ids, users' client ids): Kafka's sanitized entity paths, the
 * embedded file surviving a reopen, and ZooKeeper's /config/users and /config/clients read back
 * by a second broker's view after the change notification.
 */
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ClientEntityConfigs, entityPath, parseEntityPath, sanitizeEntityName } from '../../src/metadata/client-entity-configs.js';
import { EmbeddedClientEntities } from '../../src/metadata/embedded/embedded-client-entities.js';
import { ZkClientEntities } from '../../src/metadata/zk/zk-client-entities.js';
import { ZkSession } from '../../src/metadata/zk/zk-session.js';
import { KafkaZkClient } from '../../src/metadata/zk/kafka-zk-client.js';
import { ConfigChangeListener } from '../../src/metadata/zk/zk-config-changes.js';
import { requirePeer } from '../helpers/peers.js';
import { startZooKeeper } from '../helpers/zookeeper.js';

const dirs: string[] = [];
after(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

test("entity paths are Kafka's, with names sanitized and <default> for defaults", () => {
  assert.equal(entityPath({ user: 'alice' }), 'users/alice');
  assert.equal(entityPath({ user: null }), 'users/<default>');
  assert.equal(entityPath({ clientId: 'app 1' }), 'clients/app%201');
  assert.equal(entityPath({ user: 'CN=bob,O=x', clientId: null }), 'users/CN%3Dbob%2CO%3Dx/clients/<default>');
  assert.equal(sanitizeEntityName('a*b'), 'a%2Ab');
  for (const e of [{ user: 'CN=bob' }, { clientId: null }, { user: null, clientId: 'c/d' }, { user: 'ü', clientId: 'x' }]) {
    assert.deepEqual(parseEntityPath(entityPath(e)), e);
  }
  assert.equal(parseEntityPath('topics/x'), undefined);
  assert.equal(parseEntityPath('users/a/clients'), undefined);
  assert.throws(() => entityPath({}));
});

test('embedded entities persist across a reopen, and an empty set removes the entity', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'fjord-entities-'));
  dirs.push(dir);
  const a = await ClientEntityConfigs.open(new EmbeddedClientEntities(dir));
  const changed: string[] = [];
  a.onChange((p) => changed.push(p));
  await Promise.all([
    a.set('users/alice', { producer_byte_rate: '1024' }),
    a.set('users/bob/clients/app', { consumer_byte_rate: '2048' }),
    a.set('clients/<default>', { request_percentage: '50' }),
  ]);
  await a.set('users/alice', {});
  assert.deepEqual(changed.sort(), ['clients/<default>', 'users/alice', 'users/alice', 'users/bob/clients/app']);
  await assert.rejects(a.set('topics/x', { a: '1' }));
  const b = await ClientEntityConfigs.open(new EmbeddedClientEntities(dir));
  assert.deepEqual(Object.fromEntries(b.entries()), {
    'users/bob/clients/app': { consumer_byte_rate: '2048' },
    'clients/<default>': { request_percentage: '50' },
  });
  assert.deepEqual(b.get('users/alice'), {});
});

test('ZooKeeper entities: written where Kafka writes them, seen by another broker after the notification', async (t) => {
  if (!requirePeer(t, 'zookeeper')) return;
  const zk = await startZooKeeper();
  const sessions: ZkSession[] = [];
  const listeners: ConfigChangeListener[] = [];
  try {
    const open = async (): Promise<KafkaZkClient> => {
      const s = await ZkSession.open({ connect: `${zk.connect}/fjord`, sessionTimeoutMs: 6000, connectionTimeoutMs: 10_000 });
      sessions.push(s);
      await s.ensurePath('/config/changes');
      return new KafkaZkClient(s);
    };
    const zkA = await open();
    const zkB = await open();
    const a = await ClientEntityConfigs.open(new ZkClientEntities(zkA));
    const b = await ClientEntityConfigs.open(new ZkClientEntities(zkB));
    const seen: string[] = [];
    b.onChange((p) => seen.push(p));
    const l = new ConfigChangeListener({
      zk: zkB,
      session: zkB.session,
      onChange: (type, name) => (type === 'users' || type === 'clients' ? b.reload(`${type}/${name}`) : undefined),
    });
    listeners.push(l);
    await l.start();
    await a.set('users/alice', { 'SCRAM-SHA-256': 'salt=c2FsdA==,stored_key=a2V5,server_key=c2tleQ==,iterations=8192' });
    await a.set('users/CN%3Dbob/clients/app', { producer_byte_rate: '1048576' });
    const raw = await zkA.session.get('/config/users/CN%3Dbob/clients/app');
    assert.deepEqual(JSON.parse(raw.data.toString()), { version: 1, config: { producer_byte_rate: '1048576' } });
    const deadline = Date.now() + 20_000;
    while (seen.length < 2 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20)); // poll, bounded
    assert.deepEqual(seen, ['users/alice', 'users/CN%3Dbob/clients/app']);
    assert.equal(b.get('users/CN%3Dbob/clients/app').producer_byte_rate, '1048576');
    // A third view loads everything from scratch.
    const c = await ClientEntityConfigs.open(new ZkClientEntities(await open()));
    assert.deepEqual([...c.entries().keys()].sort(), ['users/CN%3Dbob/clients/app', 'users/alice']);
  } finally {
    for (const l of listeners) l.close();
    for (const s of sessions) await s.close();
    await zk.stop();
  }
});
