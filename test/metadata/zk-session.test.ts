/**
 * The ZooKeeper session layer against a real Apache ZooKeeper: versioned writes, ephemeral and
 * sequential nodes, watches, atomic multi, chroot creation, the connection timeout, and the
 * zkCli output parser the cluster tests rely on.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { requirePeer } from '../helpers/peers.js';
import { ZOOKEEPER_JAR, parseZkList, startZooKeeper, type ZooKeeperServer } from '../helpers/zookeeper.js';
import { freePort } from '../interop/groups/crash-helpers.js';
import { ZkSession, isZkError, parseConnectString, type ZkWatchEvent } from '../../src/metadata/zk/zk-session.js';
import { BrokerIdZNode, ClusterIdZNode, ControllerEpochZNode, ControllerZNode } from '../../src/metadata/zk/zk-data.js';

let zk: ZooKeeperServer | undefined;
let s: ZkSession | undefined;

before(async () => {
  if (!existsSync(ZOOKEEPER_JAR)) return; // each test skips (or fails under CI) via requirePeer
  zk = await startZooKeeper();
  s = await ZkSession.open({ connect: zk.connect, sessionTimeoutMs: 6000, connectionTimeoutMs: 10_000 });
});

after(async () => {
  await s?.close();
  await zk?.stop();
});

async function rejects(p: Promise<unknown>, code: Parameters<typeof isZkError>[1]): Promise<void> {
  await assert.rejects(p, (err: unknown) => isZkError(err, code));
}

test("create, get, versioned set and delete, with ZooKeeper's error codes", async (t) => {
  if (!requirePeer(t, 'zookeeper')) return;
  await s!.create('/v', 'a');
  await rejects(s!.create('/v', 'b'), 'NODE_EXISTS');
  const got = await s!.get('/v');
  assert.equal(got.data.toString(), 'a');
  assert.equal(got.stat.version, 0);
  assert.equal(got.stat.ephemeralOwner, '0');
  assert.equal((await s!.set('/v', 'b', 0)).version, 1);
  await rejects(s!.set('/v', 'c', 0), 'BAD_VERSION');
  assert.equal((await s!.get('/v')).data.toString(), 'b');
  await rejects(s!.get('/missing'), 'NO_NODE');
  assert.equal(await s!.getIfExists('/missing'), undefined);
  await s!.create('/v/child');
  await rejects(s!.delete('/v'), 'NOT_EMPTY');
  await rejects(s!.delete('/v/child', 5), 'BAD_VERSION');
  await s!.delete('/v/child', 0);
  await s!.delete('/v');
  assert.equal(await s!.exists('/v'), null);
});

test('ephemeral nodes belong to the session; sequential nodes get 10-digit suffixes', async (t) => {
  if (!requirePeer(t, 'zookeeper')) return;
  const other = await ZkSession.open({ connect: zk!.connect, sessionTimeoutMs: 6000, connectionTimeoutMs: 10_000 });
  await s!.ensurePath('/seq/deep');
  const a = await other.create('/seq/e', 'x', 'ephemeral');
  assert.equal(a, '/seq/e');
  assert.equal((await s!.exists('/seq/e'))!.ephemeralOwner, other.sessionId());
  await rejects(other.create('/seq/e/child'), 'NO_CHILDREN_FOR_EPHEMERALS');
  const n1 = await s!.create('/seq/config_change_', 'x', 'persistent_sequential');
  const n2 = await s!.create('/seq/config_change_', 'x', 'persistent_sequential');
  assert.match(n1, /^\/seq\/config_change_\d{10}$/);
  assert.ok(n2 > n1);
  await other.close();
  // Closing the session removes its ephemeral node at once.
  assert.equal(await s!.exists('/seq/e'), null);
});

test('watches fire once per change: data, children, creation and deletion', async (t) => {
  if (!requirePeer(t, 'zookeeper')) return;
  const events: ZkWatchEvent[] = [];
  let wake: () => void = () => undefined;
  const watcher = (e: ZkWatchEvent): void => {
    events.push(e);
    wake();
  };
  const next = (): Promise<ZkWatchEvent> =>
    events.length > 0
      ? Promise.resolve(events.shift()!)
      : new Promise((resolve, reject) => {
          const timer = setTimeout(() => reject(new Error('no watch event within 10 s')), 10_000);
          wake = () => {
            clearTimeout(timer);
            resolve(events.shift()!);
          };
        });
  assert.equal(await s!.exists('/w', watcher), null);
  await s!.create('/w', '1');
  assert.deepEqual(await next(), { type: 'created', path: '/w' });
  await s!.get('/w', watcher);
  await s!.set('/w', '2');
  assert.deepEqual(await next(), { type: 'dataChanged', path: '/w' });
  assert.deepEqual(await s!.children('/w', watcher), []);
  await s!.create('/w/c');
  assert.deepEqual(await next(), { type: 'childrenChanged', path: '/w' });
  await s!.exists('/w/c', watcher);
  await s!.delete('/w/c');
  assert.deepEqual(await next(), { type: 'deleted', path: '/w/c' });
});

test('multi applies all operations or none', async (t) => {
  if (!requirePeer(t, 'zookeeper')) return;
  await s!.create('/m', '0');
  await s!.multi([
    { op: 'check', path: '/m', version: 0 },
    { op: 'set', path: '/m', data: '1', version: 0 },
    { op: 'create', path: '/m/a', data: 'x' },
  ]);
  assert.equal((await s!.get('/m')).data.toString(), '1');
  // The check fails (version is now 1): the create must not have happened.
  await assert.rejects(
    s!.multi([
      { op: 'create', path: '/m/b' },
      { op: 'check', path: '/m', version: 0 },
    ]),
    (err: unknown) => isZkError(err, 'BAD_VERSION') && err.path === '/m',
  );
  assert.equal(await s!.exists('/m/b'), null);
  await s!.multi([
    { op: 'delete', path: '/m/a' },
    { op: 'delete', path: '/m', version: 1 },
  ]);
  assert.equal(await s!.exists('/m'), null);
});

test('a chroot in the connect string is created when missing and confines every path', async (t) => {
  if (!requirePeer(t, 'zookeeper')) return;
  assert.deepEqual(parseConnectString('a:1,b:2/x/y/'), { hosts: 'a:1,b:2', chroot: '/x/y' });
  assert.deepEqual(parseConnectString('a:1'), { hosts: 'a:1', chroot: '' });
  const c = await ZkSession.open({ connect: `${zk!.connect}/app/one`, sessionTimeoutMs: 6000, connectionTimeoutMs: 10_000 });
  try {
    await c.create('/inside', 'x');
    assert.deepEqual(await c.children('/'), ['inside']);
    assert.equal((await s!.get('/app/one/inside')).data.toString(), 'x');
  } finally {
    await c.close();
  }
});

test('no server: the connection timeout ends the wait with one clear line', async (t) => {
  if (!requirePeer(t, 'zookeeper')) return;
  const port = await freePort(); // nothing listens there
  const started = Date.now();
  await assert.rejects(
    ZkSession.open({ connect: `127.0.0.1:${port}`, sessionTimeoutMs: 6000, connectionTimeoutMs: 1500 }),
    (err: unknown) => isZkError(err, 'CONNECTION_TIMEOUT') && /within 1500 ms \(zookeeper\.connection\.timeout\.ms\)$/.test((err as Error).message),
  );
  assert.ok(Date.now() - started < 10_000);
});

test("znode JSON round-trips in Kafka's shapes", () => {
  const reg = {
    id: 3,
    endpoints: [{ listenerName: 'PLAINTEXT', securityProtocol: 'PLAINTEXT', host: 'h', port: 9092 }],
    rack: 'r1',
    timestampMs: 1700000000000,
  };
  const json = JSON.parse(BrokerIdZNode.encode(reg).toString()) as Record<string, unknown>;
  assert.deepEqual(json, {
    features: {},
    listener_security_protocol_map: { PLAINTEXT: 'PLAINTEXT' },
    endpoints: ['PLAINTEXT://h:9092'],
    jmx_port: -1,
    port: 9092,
    host: 'h',
    version: 5,
    timestamp: '1700000000000',
    rack: 'r1',
  });
  assert.deepEqual(BrokerIdZNode.decode(3, BrokerIdZNode.encode(reg)), reg);
  assert.equal(ClusterIdZNode.decode(ClusterIdZNode.encode('abc')), 'abc');
  assert.equal(ClusterIdZNode.encode('abc').toString(), '{"version":"1","id":"abc"}');
  assert.equal(ControllerZNode.decode(ControllerZNode.encode(2, 5)), 2);
  assert.equal(ControllerZNode.decode(Buffer.from('7')), 7);
  assert.equal(ControllerEpochZNode.decode(ControllerEpochZNode.encode(12)), 12);
  assert.throws(() => ClusterIdZNode.decode(Buffer.from('nope')), /malformed \/cluster\/id znode/);
});

test("parseZkList reads zkCli's [a, b] lines", () => {
  assert.deepEqual(parseZkList('Connecting to x\n\nWATCHER::\n[0, 1, 2]\n'), ['0', '1', '2']);
  assert.deepEqual(parseZkList('[]\n'), []);
  assert.throws(() => parseZkList('Node does not exist: /x\n'), /no \[\.\.\] list/);
});
