/**
 * The /config/changes listener against a real Apache ZooKeeper: existing notifications newer
 * than the last processed on start, new ones through the re-armed watch, in order, a failing
 * handler skipped, a session expiry survived (changes made while the watch was gone are
 * delivered by the new session's pass), and a lost connection that gets its session back (the
 * client re-sets the watch, which fires for what changed meanwhile). The listener's sessions go
 * through a relay the tests cut (test/helpers/zookeeper.ts), so expiry does not depend on races.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { requirePeer } from '../../helpers/peers.js';
import { ZOOKEEPER_JAR, ZkRelay, expireSession, startZooKeeper, type ZooKeeperServer } from '../../helpers/zookeeper.js';
import { ZkSession } from '../../../src/metadata/zk/zk-session.js';
import { KafkaZkClient } from '../../../src/metadata/zk/kafka-zk-client.js';
import { ConfigChangeListener } from '../../../src/metadata/zk/zk-config-changes.js';
import { waitFor } from '../../helpers/wait-for.js';

let zk: ZooKeeperServer | undefined;
/** Between the listeners' sessions and the server, so a test can cut their connections. */
let relay: ZkRelay | undefined;
const sessions: ZkSession[] = [];
const listeners: ConfigChangeListener[] = [];

async function open(chroot: string, via: 'direct' | 'relay' = 'direct', sessionTimeoutMs = 4000): Promise<KafkaZkClient> {
  const connect = via === 'relay' ? relay!.connect : zk!.connect;
  const s = await ZkSession.open({ connect: connect + chroot, sessionTimeoutMs, connectionTimeoutMs: 10_000 });
  sessions.push(s);
  await s.ensurePath('/config/changes'); // a broker's start-up makes sure it exists
  return new KafkaZkClient(s);
}

before(async () => {
  if (!existsSync(ZOOKEEPER_JAR)) return;
  zk = await startZooKeeper();
  relay = await ZkRelay.start(zk);
});

after(async () => {
  for (const l of listeners) l.close();
  for (const s of sessions) await s.close();
  await relay?.close();
  await zk?.stop();
});

const until = (what: string, cond: () => boolean, timeoutMs = 20_000) => waitFor(what, timeoutMs, cond);

function listen(c: KafkaZkClient, seen: string[], extra: { lastProcessed?: number; fail?: string; purgeAfterMs?: number } = {}): ConfigChangeListener {
  const l = new ConfigChangeListener({
    zk: c,
    session: c.session,
    lastProcessed: extra.lastProcessed,
    purgeAfterMs: extra.purgeAfterMs,
    onChange: (type, name) => {
      seen.push(`${type}/${name}`);
      if (name === extra.fail) throw new Error('handler failure');
    },
  });
  listeners.push(l);
  return l;
}

test('existing notifications newer than the last processed, then new ones in order through the re-armed watch', async (t) => {
  if (!requirePeer(t, 'zookeeper')) return;
  const writer = await open('/cc1');
  await writer.setEntityConfigs('topics', 'a', { 'retention.ms': '1' }); // 0
  await writer.setEntityConfigs('brokers', '<default>', { 'log.retention.ms': '1' }); // 1

  const all: string[] = [];
  const fromStart = listen(await open('/cc1'), all);
  await fromStart.start();
  assert.deepEqual(all, ['topics/a', 'brokers/<default>'], 'a starting broker processes every existing notification');
  assert.equal(fromStart.lastProcessed, 1);

  const newer: string[] = [];
  const resumed = listen(await open('/cc1'), newer, { lastProcessed: 0, fail: 'b' });
  await resumed.start();
  assert.deepEqual(newer, ['brokers/<default>']);

  await writer.setEntityConfigs('topics', 'b', {}); // the handler of `resumed` throws on this one
  await writer.setEntityConfigs('topics', 'c', {});
  await writer.setEntityConfigs('topics', 'd', {});
  await until('three new notifications', () => all.length === 5 && newer.length === 4);
  assert.deepEqual(all.slice(2), ['topics/b', 'topics/c', 'topics/d']);
  assert.deepEqual(newer.slice(1), ['topics/b', 'topics/c', 'topics/d'], 'a failing handler does not stop the next notifications');
  assert.equal(resumed.lastProcessed, 4);

  // A closed listener hears nothing more.
  fromStart.close();
  await writer.setEntityConfigs('topics', 'e', {});
  await until('the live listener', () => newer.length === 5);
  assert.equal(all.length, 5);
});

test('a session expiry drops the watch; the new session re-reads and delivers what was missed', async (t) => {
  if (!requirePeer(t, 'zookeeper')) return;
  const writer = await open('/cc2');
  const c = await open('/cc2', 'relay');
  const seen: string[] = [];
  await listen(c, seen).start();
  await writer.setEntityConfigs('topics', 'before', {});
  await until('the first change', () => seen.length === 1);

  let renewed = false;
  c.session.once('newSession', () => (renewed = true));
  const oldId = c.session.sessionId();
  await expireSession(c.session, zk!, relay!);
  await writer.setEntityConfigs('topics', 'during', {});
  await until('a new session after the expiry', () => renewed, 60_000);
  assert.notEqual(c.session.sessionId(), oldId);
  // The session's stats (kafka_server_sessionexpirelistener_*): one expiry, connected again.
  assert.equal(c.session.stats.expires, 1);
  assert.equal(c.session.stats.state, 'CONNECTED');
  assert.ok(c.session.stats.connects >= 2);
  await until('the change made while the session was gone', () => seen.includes('topics/during'));
  await writer.setEntityConfigs('topics', 'after', {});
  await until('a change after the new session', () => seen.includes('topics/after'));
  assert.deepEqual(seen, ['topics/before', 'topics/during', 'topics/after']);
});

test('a connection lost and re-established on the same session keeps the watch: a change made meanwhile is delivered', async (t) => {
  if (!requirePeer(t, 'zookeeper')) return;
  const writer = await open('/cc4');
  const c = await open('/cc4', 'relay', 30_000); // a loaded machine must not expire it while cut
  const seen: string[] = [];
  await listen(c, seen).start();
  await writer.setEntityConfigs('topics', 'before', {});
  await until('the first change', () => seen.length === 1);

  let disconnected = false;
  let reconnected = false;
  let renewed = false;
  c.session.once('disconnected', () => (disconnected = true));
  c.session.once('newSession', () => (renewed = true));
  const id = c.session.sessionId();
  relay!.cut();
  await until('the listener to lose its connection', () => disconnected);
  assert.equal(c.session.stats.state, 'CONNECTING');
  assert.ok(c.session.stats.disconnects >= 1);
  await writer.setEntityConfigs('topics', 'during', {});
  c.session.once('connected', () => (reconnected = true));
  relay!.restore();
  await until('the same session to reconnect', () => reconnected, 30_000);
  await until('the change made while disconnected (the client re-sets its watch)', () => seen.includes('topics/during'));
  assert.equal(c.session.sessionId(), id);
  assert.equal(renewed, false, 'the session survived: no new session');
  assert.equal(c.session.stats.state, 'CONNECTED');
  assert.equal(c.session.stats.expires, 0);
  assert.ok(c.session.stats.requests > 0 && c.session.stats.requestTotalMs > 0, 'requests are counted and timed');
  await writer.setEntityConfigs('topics', 'after', {});
  await until('a change after the reconnection', () => seen.includes('topics/after'));
  assert.deepEqual(seen, ['topics/before', 'topics/during', 'topics/after']);
});

test('old notifications are purged after a pass (Kafka keeps them 15 minutes); young ones stay', async (t) => {
  if (!requirePeer(t, 'zookeeper')) return;
  const writer = await open('/cc3');
  await writer.setEntityConfigs('topics', 'a', {});
  await writer.setEntityConfigs('topics', 'b', {});
  const seen: string[] = [];
  await listen(await open('/cc3'), seen).start(); // default: 15 min, nothing is that old
  assert.equal((await writer.getConfigChangeNames()).length, 2);

  const eager: string[] = [];
  const purging = listen(await open('/cc3'), eager, { purgeAfterMs: 0 });
  await purging.start();
  assert.deepEqual(eager, ['topics/a', 'topics/b'], 'processed before being purged');
  assert.deepEqual(await writer.getConfigChangeNames(), []);
  purging.close();
  await writer.setEntityConfigs('topics', 'c', {});
  await until('the next one', () => seen.length === 3);
  assert.equal(await writer.purgeConfigChanges(60_000), 0, 'a young notification is kept');
  assert.equal(await writer.purgeConfigChanges(0), 1);
});
