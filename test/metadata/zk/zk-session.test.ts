/**
 * ZkSession's connection handling against a real Apache ZooKeeper reached through a relay the
 * test controls (test/helpers/zookeeper.ts): a connection attempt whose handshake is never
 * answered (ZooKeeper 3.8 leaks such a connection when a client connects while it starts) is
 * abandoned after the connect timeout and tried again, so the session comes back instead of
 * the client waiting forever while the server expires the session.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { requirePeer } from '../../helpers/peers.js';
import { ZOOKEEPER_JAR, ZkRelay, startZooKeeper, type ZooKeeperServer } from '../../helpers/zookeeper.js';
import { ZkSession } from '../../../src/metadata/zk/zk-session.js';
import { waitFor } from '../../helpers/wait-for.js';

let zk: ZooKeeperServer | undefined;
let relay: ZkRelay | undefined;
const sessions: ZkSession[] = [];

before(async () => {
  if (!existsSync(ZOOKEEPER_JAR)) return;
  zk = await startZooKeeper();
  relay = await ZkRelay.start(zk);
});

after(async () => {
  for (const s of sessions) await s.close();
  await relay?.close();
  await zk?.stop();
});

const until = (what: string, cond: () => boolean, timeoutMs: number) => waitFor(what, timeoutMs, cond);

test('a handshake the server never answers is abandoned after the connect timeout and the client connects again', async (t) => {
  if (!requirePeer(t, 'zookeeper')) return;
  // 4 s: the stuck attempt's connect timeout (session timeout / 1 host) is what every run waits
  // out. A loaded machine may lose the session meanwhile: the client then opens a new one, which
  // the test accepts as well (below).
  const sessionTimeoutMs = 4000;
  const s = await ZkSession.open({ connect: relay!.connect, sessionTimeoutMs, connectionTimeoutMs: 10_000 });
  sessions.push(s);
  await s.create('/handshake', 'v1');
  let disconnected = false;
  s.once('disconnected', () => (disconnected = true));
  relay!.mute(); // the client's next attempt is accepted and never answered
  await until('the client to lose its connection', () => disconnected, 20_000);
  let back = false;
  s.once('connected', () => (back = true)); // the same session
  s.once('newSession', () => (back = true)); // or a new one, if the server expired it meanwhile
  relay!.restore(); // later attempts reach the server; the silent one stays silent
  const started = Date.now();
  // The stuck attempt gets the connect timeout (session timeout / 1 host), then the client tries
  // again; before, it waited on that connection forever.
  await until('the client to connect again', () => back, sessionTimeoutMs * 3);
  t.diagnostic(`connected again ${Date.now() - started} ms after the relay was restored`);
  assert.equal((await s.get('/handshake')).data.toString(), 'v1');
});
