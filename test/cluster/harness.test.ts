/**
 * The cluster harness itself (test/helpers/cluster.ts), on what cluster mode already does:
 * three brokers register, zkCli lists them as the seed shows, kill -9 of the controller elects
 * another with a larger epoch, a killed broker comes back as itself, killAndExpire ends the dead
 * broker's session at once (the password computed from its id is the one ZooKeeper gave), SIGSTOP past the session
 * timeout drops its registration until SIGCONT, ZooKeeper restarts on its port with its data,
 * and SIGTERM stops a broker cleanly.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { existsSync } from 'node:fs';
import zookeeper from 'node-zookeeper-client';
import { Cluster, NATURAL_EXPIRY, SESSION_TIMEOUT_MS } from '../helpers/cluster.js';
import { requirePeer } from '../helpers/peers.js';
import { zkSessionPassword } from '../helpers/zk-dead-session.js';

let c: Cluster | undefined;

before(async () => {
  if (Cluster.available()) c = await Cluster.start();
});
after(() => c?.stop());

test('three brokers register: zkCli ls /brokers/ids prints [0, 1, 2]', async (t) => {
  if (!requirePeer(t, 'zookeeper')) return;
  const out = await c!.zkCli('ls', '/brokers/ids');
  assert.ok(
    out
      .split('\n')
      .map((l) => l.trim())
      .includes('[0, 1, 2]'),
    out,
  );
  assert.deepEqual(await c!.registeredIds(), [0, 1, 2]);
  assert.equal(c!.bootstrap(), c!.brokers.map((b) => `127.0.0.1:${b.port}`).join(','));
  for (const b of c!.brokers) assert.ok(existsSync(b.dir) && existsSync(b.logFile), `broker ${b.id} has its log dir and log file`);
});

test('kill -9 of the controller: another broker is elected, controller_epoch grows; the broker returns as itself', async (t) => {
  if (!requirePeer(t, 'zookeeper')) return;
  const first = await c!.waitForController();
  const victim = c!.broker(first.brokerId);
  const port = victim.port;
  await victim.kill();
  assert.equal(victim.running, false);
  const next = await c!.waitForController((x) => x.brokerId !== first.brokerId && x.epoch > first.epoch);
  t.diagnostic(`controller ${first.brokerId} (epoch ${first.epoch}) -> ${next.brokerId} (epoch ${next.epoch})`);
  assert.equal(Number(await c!.zkCliGet('/controller_epoch')), next.epoch);
  await c!.waitForRegistered([0, 1, 2].filter((id) => id !== first.brokerId));

  await victim.restart();
  assert.equal(victim.port, port);
  await c!.waitForRegistered([0, 1, 2]);
  assert.deepEqual(await c!.controller(), next, 'a returning broker does not take the controller back');
});

test("killAndExpire: the dead controller's registration and /controller go at once (not a session timeout later), a new one is elected; the password ZooKeeper gave is the computed one", async (t) => {
  if (!requirePeer(t, 'zookeeper')) return;
  if (NATURAL_EXPIRY) return t.skip('FJORD_NATURAL_EXPIRY=1: killAndExpire leaves the session to time out');
  for (let i = 0; i < 3; i++) {
    const s = zookeeper.createClient(`127.0.0.1:${c!.zkPort}`, { sessionTimeout: 6000 });
    s.connect();
    await once(s, 'connected');
    try {
      assert.deepEqual(zkSessionPassword(s.getSessionId().readBigInt64BE()), s.getSessionPassword());
    } finally {
      s.close();
    }
  }
  const first = await c!.waitForController();
  const killedAt = Date.now();
  await c!.killAndExpire(first.brokerId);
  const others = [0, 1, 2].filter((id) => id !== first.brokerId);
  assert.deepEqual(await c!.registeredIds(), others, 'the registration is gone when killAndExpire returns');
  const next = await c!.waitForController((x) => x.brokerId !== first.brokerId && x.epoch > first.epoch);
  t.diagnostic(`controller ${first.brokerId} -> ${next.brokerId} ${Date.now() - killedAt} ms after the kill (session ${SESSION_TIMEOUT_MS} ms)`);
  await c!.broker(first.brokerId).start();
  await c!.waitForRegistered([0, 1, 2]);
});

test('SIGSTOP past the session timeout drops the registration; SIGCONT brings it back', async (t) => {
  if (!requirePeer(t, 'zookeeper')) return;
  const ctl = (await c!.waitForController()).brokerId;
  const frozen = c!.brokers.find((b) => b.id !== ctl)!;
  frozen.pause();
  try {
    await c!.waitForRegistered(
      [0, 1, 2].filter((id) => id !== frozen.id),
      SESSION_TIMEOUT_MS * 4,
    );
  } finally {
    frozen.resume();
  }
  await c!.waitForRegistered([0, 1, 2]);
});

test('ZooKeeper restarts on its port with its data; the brokers stay registered', async (t) => {
  if (!requirePeer(t, 'zookeeper')) return;
  const clusterId = (await (await c!.zk()).get('/cluster/id')).data.toString();
  await c!.stopZooKeeper();
  await c!.startZooKeeper();
  assert.equal((await (await c!.zk()).get('/cluster/id')).data.toString(), clusterId);
  await c!.waitForRegistered([0, 1, 2]);
  await c!.waitForController();
});

test('SIGTERM stops a broker cleanly: exit 0, registration gone at once', async (t) => {
  if (!requirePeer(t, 'zookeeper')) return;
  const ctl = (await c!.waitForController()).brokerId;
  const b = c!.brokers.find((x) => x.id !== ctl)!;
  assert.equal(await b.terminate(), 0);
  assert.deepEqual(
    await c!.registeredIds(),
    [0, 1, 2].filter((id) => id !== b.id),
  );
});
