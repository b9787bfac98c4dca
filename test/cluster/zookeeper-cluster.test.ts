/**
 * Cluster mode's first step against a real Apache ZooKeeper: three broker processes register at
 * /brokers/ids, one of them is elected controller and reported by Metadata/DescribeCluster,
 * SIGKILLing it makes another one controller with a larger epoch, a duplicate broker.id and a
 * log dir from another cluster are refused, a chroot works, and a clean shutdown deregisters.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import kafkajs from 'kafkajs';
import { requirePeer } from '../helpers/peers.js';
import { existsSync } from 'node:fs';
import { ZOOKEEPER_JAR, startZooKeeper, zkGet, zkLs, type ZooKeeperServer } from '../helpers/zookeeper.js';
import { BrokerProcess, freePort } from '../interop/groups/crash-helpers.js';
import { ZkSession } from '../../src/metadata/zk/zk-session.js';
import { Broker } from '../../src/server/broker.js';
import { buildBrokerConfig } from '../../src/server/config/index.js';
import { silentLogger } from '../../src/server/logger.js';
import { run } from '../helpers/run.js';

const SESSION_TIMEOUT_MS = 6000;

let zk: ZooKeeperServer | undefined;
let observer: ZkSession | undefined;
const brokers: BrokerProcess[] = [];
const dirs: string[] = [];

async function tempDir(): Promise<string> {
  const d = await mkdtemp(join(tmpdir(), 'fjord-zk-broker-'));
  dirs.push(d);
  return d;
}

function zkProps(id: number, connect: string): Record<string, string> {
  return { 'broker.id': String(id), 'zookeeper.connect': connect, 'zookeeper.session.timeout.ms': String(SESSION_TIMEOUT_MS) };
}

/** An in-process broker in ZooKeeper mode; start failures are returned, not thrown. */
async function inProcessBroker(props: Record<string, string>, dir?: string): Promise<{ broker: Broker; error: Error | undefined }> {
  const raw = new Map(Object.entries({ listeners: 'PLAINTEXT://127.0.0.1:0', 'log.dirs': dir ?? (await tempDir()), ...props }));
  const broker = new Broker(buildBrokerConfig(raw), silentLogger());
  try {
    await broker.start();
    return { broker, error: undefined };
  } catch (err) {
    await broker.stop().catch(() => undefined);
    return { broker, error: err as Error };
  }
}

async function until<T>(what: string, timeoutMs: number, probe: () => Promise<T | undefined>): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await probe();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100)); // poll interval, bounded by the deadline
  }
}

async function readController(): Promise<{ brokerid: number; epoch: number } | undefined> {
  const ctl = await observer!.getIfExists('/controller');
  const epoch = await observer!.getIfExists('/controller_epoch');
  if (!ctl || !epoch) return undefined;
  return { brokerid: (JSON.parse(ctl.data.toString()) as { brokerid: number }).brokerid, epoch: Number(epoch.data.toString()) };
}

async function controllerSeenBy(port: number): Promise<number> {
  const kafka = new kafkajs.Kafka({ brokers: [`127.0.0.1:${port}`], clientId: 'fjord-zk-test', logLevel: kafkajs.logLevel.NOTHING });
  const admin = kafka.admin();
  await admin.connect();
  try {
    return (await admin.describeCluster()).controller ?? -1;
  } finally {
    await admin.disconnect();
  }
}

before(async () => {
  if (!existsSync(ZOOKEEPER_JAR)) return; // each test then skips (or fails under CI) via requirePeer
  zk = await startZooKeeper();
  observer = await ZkSession.open({ connect: zk.connect, sessionTimeoutMs: 10_000, connectionTimeoutMs: 10_000 });
  for (let id = 0; id < 3; id++) brokers.push(new BrokerProcess(await freePort(), await tempDir(), zkProps(id, zk.connect)));
  await Promise.all(brokers.map((b) => b.start()));
});

after(async () => {
  await Promise.all(brokers.map((b) => b.kill('SIGKILL')));
  await observer?.close();
  await zk?.stop();
  await Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true })));
});

test("three brokers register; zkCli lists their ids and Kafka's top-level paths", async (t) => {
  if (!requirePeer(t, 'zookeeper')) return;
  assert.deepEqual(await zkLs(zk!.port, '/brokers/ids'), ['0', '1', '2']);
  assert.deepEqual(await zkLs(zk!.port, '/brokers'), ['ids', 'seqid', 'topics']);
  const root = await zkLs(zk!.port, '/');
  for (const p of [
    'admin',
    'brokers',
    'cluster',
    'config',
    'consumers',
    'controller',
    'controller_epoch',
    'isr_change_notification',
    'latest_producer_id_block',
    'log_dir_event_notification',
    'zookeeper',
  ]) {
    assert.ok(root.includes(p), `ls / lacks ${p}: ${root.join(', ')}`);
  }
  const reg = JSON.parse((await observer!.get('/brokers/ids/1')).data.toString()) as Record<string, unknown>;
  assert.equal(reg.version, 5);
  assert.equal(reg.jmx_port, -1);
  assert.equal(reg.host, '127.0.0.1');
  assert.equal(reg.port, brokers[1]!.port);
  assert.deepEqual(reg.endpoints, [`PLAINTEXT://127.0.0.1:${brokers[1]!.port}`]);
  assert.deepEqual(reg.listener_security_protocol_map, { PLAINTEXT: 'PLAINTEXT' });
  assert.deepEqual(reg.features, {});
  assert.match(String(reg.timestamp), /^\d{13}$/);
  const clusterId = JSON.parse((await observer!.get('/cluster/id')).data.toString()) as { version: string; id: string };
  assert.equal(clusterId.version, '1');
  assert.match(clusterId.id, /^[A-Za-z0-9_-]{22}$/);
});

test('exactly one controller, reported by Metadata from every broker; SIGKILL moves it with a larger epoch', async (t) => {
  if (!requirePeer(t, 'zookeeper')) return;
  const ctlJson = JSON.parse(await zkGet(zk!.port, '/controller')) as { version: number; brokerid: number; timestamp: string };
  assert.equal(ctlJson.version, 1);
  assert.ok([0, 1, 2].includes(ctlJson.brokerid));
  const first = (await readController())!;
  assert.equal(first.brokerid, ctlJson.brokerid);
  assert.ok(first.epoch >= 1);
  for (const b of brokers) assert.equal(await controllerSeenBy(b.port), first.brokerid, `broker on ${b.port}`);

  const started = Date.now();
  await brokers[first.brokerid]!.kill('SIGKILL');
  const next = await until('a new controller', SESSION_TIMEOUT_MS * 4, async () => {
    const c = await readController();
    return c && c.brokerid !== first.brokerid && c.epoch > first.epoch ? c : undefined;
  });
  const tookMs = Date.now() - started;
  t.diagnostic(`controller ${first.brokerid} (epoch ${first.epoch}) -> ${next.brokerid} (epoch ${next.epoch}) in ${tookMs} ms`);
  assert.ok(tookMs < SESSION_TIMEOUT_MS * 4, `failover took ${tookMs} ms`);
  // The killed broker's registration went with its session.
  const live = [0, 1, 2].filter((id) => id !== first.brokerid).map(String);
  assert.deepEqual(await zkLs(zk!.port, '/brokers/ids'), live);
  const survivor = brokers[next.brokerid]!;
  await until('Metadata naming the new controller', 10_000, async () => ((await controllerSeenBy(survivor.port)) === next.brokerid ? true : undefined));
});

test('an expired session: the broker registers again and follows the new controller', async (t) => {
  if (!requirePeer(t, 'zookeeper')) return;
  const before = (await readController())!;
  const frozen = brokers[before.brokerid]!;
  const oldOwner = (await observer!.exists(`/brokers/ids/${before.brokerid}`))!.ephemeralOwner;
  frozen.signal('SIGSTOP'); // past the session timeout, ZooKeeper expires its session
  try {
    const next = await until('the frozen controller to be replaced', SESSION_TIMEOUT_MS * 4, async () => {
      const c = await readController();
      return c && c.brokerid !== before.brokerid && c.epoch > before.epoch ? c : undefined;
    });
    assert.equal(await observer!.exists(`/brokers/ids/${before.brokerid}`), null);
    frozen.signal('SIGCONT');
    const stat = await until(
      'the broker to register again',
      SESSION_TIMEOUT_MS * 4,
      async () => (await observer!.exists(`/brokers/ids/${before.brokerid}`)) ?? undefined,
    );
    assert.notEqual(stat.ephemeralOwner, oldOwner, 'registered under a new session');
    await until('the thawed broker to report the new controller', 15_000, async () =>
      (await controllerSeenBy(frozen.port)) === next.brokerid ? true : undefined,
    );
    assert.deepEqual((await readController())!, next, 'the thawed broker must not take the controller back');
  } finally {
    frozen.signal('SIGCONT');
  }
});

test('a duplicate broker.id is refused with one clear line', async (t) => {
  if (!requirePeer(t, 'zookeeper')) return;
  const ids = (await observer!.children('/brokers/ids')).map(Number);
  const taken = ids[0]!;
  const { error } = await inProcessBroker(zkProps(taken, zk!.connect));
  assert.ok(error, 'the duplicate broker started');
  assert.match(error.message, new RegExp(`^broker\\.id ${taken} is already registered in ZooKeeper at /brokers/ids/${taken} by a live broker`));
  assert.ok(!error.message.includes('\n'));
  // The live broker's registration is untouched.
  assert.ok(await observer!.exists(`/brokers/ids/${taken}`));
});

test('a log dir from another cluster is refused', async (t) => {
  if (!requirePeer(t, 'zookeeper')) return;
  const dir = await tempDir();
  await writeFile(join(dir, 'meta.properties'), '#\nversion=0\nbroker.id=7\ncluster.id=SomeOtherClusterIdAAAA\n');
  const { error } = await inProcessBroker(zkProps(7, zk!.connect), dir);
  assert.ok(error, 'the broker started on a foreign log dir');
  assert.match(error.message, /does not match the cluster id SomeOtherClusterIdAAAA in .*meta\.properties: this log dir belongs to another cluster/);
  assert.equal(await observer!.exists('/brokers/ids/7'), null);
});

test('clean shutdown removes the registration; SIGTERM of a child process too', async (t) => {
  if (!requirePeer(t, 'zookeeper')) return;
  const { broker, error } = await inProcessBroker(zkProps(9, zk!.connect));
  assert.equal(error, undefined);
  assert.ok(await observer!.exists('/brokers/ids/9'));
  await broker.stop();
  assert.equal(await observer!.exists('/brokers/ids/9'), null, 'registration left behind after stop()');

  const live = (await observer!.children('/brokers/ids')).map(Number);
  const ctl = (await readController())!.brokerid;
  const victim = live.find((id) => id !== ctl)!;
  await brokers[victim]!.kill('SIGTERM');
  assert.equal(await observer!.exists(`/brokers/ids/${victim}`), null);
});

test('a chroot in zookeeper.connect is created and used', async (t) => {
  if (!requirePeer(t, 'zookeeper')) return;
  const { broker, error } = await inProcessBroker(zkProps(5, `${zk!.connect}/fjord/c1`));
  assert.equal(error, undefined);
  try {
    assert.deepEqual(await zkLs(zk!.port, '/fjord/c1/brokers'), ['ids', 'seqid', 'topics']);
    assert.deepEqual(await observer!.children('/fjord/c1/brokers/ids'), ['5']);
    // Alone under its chroot, it is its own cluster's controller.
    const ctl = JSON.parse((await observer!.get('/fjord/c1/controller')).data.toString()) as { brokerid: number };
    assert.equal(ctl.brokerid, 5);
    assert.equal(broker.zookeeper?.membership.isController, true);
    assert.equal(broker.zookeeper?.membership.controllerEpoch, 1);
    assert.equal(broker.services.metadata.controllerId(), 5);
  } finally {
    await broker.stop();
  }
  assert.deepEqual(await observer!.children('/fjord/c1/brokers/ids'), []);
});

test('a broker still stops when its ZooKeeper is gone', async (t) => {
  if (!requirePeer(t, 'zookeeper')) return;
  const lonely = await startZooKeeper();
  let stopped = false;
  try {
    const { broker, error } = await inProcessBroker(zkProps(0, lonely.connect));
    assert.equal(error, undefined);
    await lonely.stop();
    stopped = true;
    const started = Date.now();
    await broker.stop();
    const tookMs = Date.now() - started;
    t.diagnostic(`stop() with ZooKeeper down took ${tookMs} ms`);
    assert.ok(tookMs < 20_000, `stop() took ${tookMs} ms`);
  } finally {
    if (!stopped) await lonely.stop();
  }
});

test('kafka-server-start with an unreachable zookeeper.connect: one line, exit 1', async () => {
  const dir = await tempDir();
  const main = join(import.meta.dirname, '../../src/server/main.ts');
  const config = join(import.meta.dirname, '../../config/server.properties');
  const port = await freePort(); // nothing listens there
  const r = await run(
    process.execPath,
    [
      '--import',
      'tsx',
      main,
      config,
      '--override',
      `zookeeper.connect=127.0.0.1:${port}/fjord`,
      '--override',
      'zookeeper.connection.timeout.ms=1000',
      '--override',
      `log.dirs=${dir}`,
    ],
    { timeoutMs: 60_000 },
  );
  assert.equal(r.code, 1);
  const lines = r.stderr.trimEnd().split('\n');
  assert.equal(lines.length, 1, r.stderr);
  assert.match(
    lines[0]!,
    new RegExp(
      `^Fjord start-up failed: Timed out waiting for a connection to ZooKeeper at 127\\.0\\.0\\.1:${port} within 1000 ms \\(zookeeper\\.connection\\.timeout\\.ms\\)$`,
    ),
  );
});
