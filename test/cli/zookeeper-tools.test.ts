/**
 * kafka-topics.sh and kafka-configs.sh in --zookeeper mode against a real Apache ZooKeeper with
 * fake broker registrations, as the seed runs them (`kafka-topics.sh --create --topic bigdata
 * --zookeeper zkKafka1:2181 --partitions 2 --replication-factor 2` → `Created topic "bigdata".`):
 * the znodes they write (checked with zkCli, as an operator would), their Kafka 1.x output, and
 * one-line errors. kafka-preferred-replica-election.sh --zookeeper writes the election znode the
 * controller watches (no controller runs here, so the znode stays for the test to read).
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { requirePeer } from '../helpers/peers.js';
import { ZOOKEEPER_JAR, startZooKeeper, zkGet, zkLs, type ZooKeeperServer } from '../helpers/zookeeper.js';
import { freePort } from '../interop/groups/crash-helpers.js';
import { ZkSession } from '../../src/metadata/zk/zk-session.js';
import { KafkaZkClient } from '../../src/metadata/zk/kafka-zk-client.js';
import { BrokerIdZNode } from '../../src/metadata/zk/zk-data.js';
import { runCli } from './helpers.js';

let zk: ZooKeeperServer | undefined;
let brokers: ZkSession | undefined;
let dir: string | undefined;

/** Registers brokers the way a broker does (ephemeral /brokers/ids/<id>), under `chroot`. */
async function registerBrokers(chroot: string, ids: number[]): Promise<void> {
  await brokers!.ensurePath(`${chroot}/brokers/ids`);
  for (const id of ids) {
    const reg = {
      id,
      endpoints: [{ listenerName: 'PLAINTEXT', securityProtocol: 'PLAINTEXT', host: '127.0.0.1', port: 19092 + id }],
      rack: null,
      timestampMs: Date.now(),
    };
    await brokers!.create(`${chroot}/brokers/ids/${id}`, BrokerIdZNode.encode(reg), 'ephemeral');
  }
}

before(async () => {
  if (!existsSync(ZOOKEEPER_JAR)) return;
  zk = await startZooKeeper();
  brokers = await ZkSession.open({ connect: zk.connect, sessionTimeoutMs: 10_000, connectionTimeoutMs: 10_000 });
  await registerBrokers('', [0, 1, 2]);
  dir = await mkdtemp(join(tmpdir(), 'fjord-zk-cli-'));
});

after(async () => {
  await brokers?.close();
  await zk?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

const topics = (...args: string[]) => runCli('kafka-topics', [...args, '--zookeeper', zk!.connect], { timeoutMs: 60_000 });
const configs = (...args: string[]) => runCli('kafka-configs', [...args, '--zookeeper', zk!.connect], { timeoutMs: 60_000 });

function oneLineError(r: { code: number | null; stderr: string }, tool: string, message: string | RegExp): void {
  assert.equal(r.code, 1);
  assert.equal(r.stderr.split('\n').length, 2, `one line: ${r.stderr}`);
  if (typeof message === 'string') assert.equal(r.stderr, `${tool}: ${message}\n`);
  else assert.match(r.stderr, message);
}

test('kafka-topics --zookeeper: create as the seed, list, describe from partition states, alter, delete', { timeout: 240_000 }, async (t) => {
  if (!requirePeer(t, 'zookeeper')) return;
  const created = await topics('--create', '--topic', 'bigdata', '--partitions', '2', '--replication-factor', '2');
  assert.equal(created.stderr, '');
  assert.equal(created.stdout, 'Created topic "bigdata".\n');
  assert.equal(created.code, 0);

  const topicJson = JSON.parse(await zkGet(zk!.port, '/brokers/topics/bigdata')) as { partitions: Record<string, number[]>; topic_id: string; version: number };
  assert.equal(topicJson.version, 3);
  assert.match(topicJson.topic_id, /^[A-Za-z0-9_-]{22}$/);
  assert.deepEqual(Object.keys(topicJson.partitions), ['0', '1']);
  const p0 = topicJson.partitions['0']!;
  const p1 = topicJson.partitions['1']!;
  for (const r of [p0, p1]) {
    assert.equal(new Set(r).size, 2);
    for (const b of r) assert.ok([0, 1, 2].includes(b));
  }
  assert.equal((p0[0]! + 1) % 3, p1[0], 'leaders round robin over the registered brokers');
  assert.equal(await zkGet(zk!.port, '/config/topics/bigdata'), '{"version":1,"config":{}}');
  assert.deepEqual(await zkLs(zk!.port, '/brokers/topics'), ['bigdata']);

  oneLineError(
    await topics('--create', '--topic', 'bigdata', '--partitions', '2', '--replication-factor', '2'),
    'kafka-topics.sh',
    "Topic 'bigdata' already exists.",
  );
  const quiet = await topics('--create', '--if-not-exists', '--topic', 'bigdata', '--partitions', '2', '--replication-factor', '2');
  assert.equal(quiet.code, 0);
  assert.equal(quiet.stdout, '');

  const manual = await topics('--create', '--topic', 'other', '--replica-assignment', '2:0,0:1', '--config', 'retention.ms=1000');
  assert.equal(manual.stdout, 'Created topic "other".\n', manual.stderr);
  const zkc = new KafkaZkClient(brokers!);
  assert.deepEqual(
    [...(await zkc.getTopicAssignment('other'))!.partitions],
    [
      [0, [2, 0]],
      [1, [0, 1]],
    ],
  );
  assert.deepEqual(await zkc.getEntityConfigs('topics', 'other'), { 'retention.ms': '1000' });

  oneLineError(
    await topics('--create', '--topic', 'x', '--partitions', '1', '--replication-factor', '4'),
    'kafka-topics.sh',
    'Replication factor: 4 larger than available brokers: 3.',
  );
  oneLineError(
    await topics('--create', '--topic', 'x', '--partitions', '1', '--replication-factor', '1', '--config', 'nope=1'),
    'kafka-topics.sh',
    'Unknown topic config name: nope',
  );
  oneLineError(await topics('--create', '--topic', 'x', '--partitions', '1'), 'kafka-topics.sh', 'Missing required argument "[replication-factor]"');
  oneLineError(
    await topics('--create', '--topic', 'x', '--replica-assignment', '0:1,2'),
    'kafka-topics.sh',
    'All partitions should have the same number of replicas',
  );
  assert.deepEqual(await zkLs(zk!.port, '/brokers/topics'), ['bigdata', 'other'], 'nothing written by the failed creates');

  // The controller's part, simulated: partition states for bigdata (partition 1 lost its leader).
  await brokers!.create('/controller_epoch', '1');
  const fence = { controllerEpoch: 1, epochZkVersion: 0 };
  await zkc.createPartitionStates(
    'bigdata',
    new Map([
      [0, { leader: p0[0]!, leaderEpoch: 0, isr: p0, controllerEpoch: 1 }],
      [1, { leader: -1, leaderEpoch: 1, isr: [p1[1]!], controllerEpoch: 1 }],
    ]),
    fence,
  );

  const list = await topics('--list');
  assert.equal(list.stdout, 'bigdata\nother\n');
  const desc = await topics('--describe', '--topic', 'bigdata');
  assert.equal(desc.code, 0, desc.stderr);
  assert.equal(
    desc.stdout,
    `Topic:bigdata\tPartitionCount:2\tReplicationFactor:2\tConfigs:\n` +
      `\tTopic: bigdata\tPartition: 0\tLeader: ${p0[0]}\tReplicas: ${p0.join(',')}\tIsr: ${p0.join(',')}\n` +
      `\tTopic: bigdata\tPartition: 1\tLeader: -1\tReplicas: ${p1.join(',')}\tIsr: ${p1[1]}\n`,
  );
  const problem = `\tTopic: bigdata\tPartition: 1\tLeader: -1\tReplicas: ${p1.join(',')}\tIsr: ${p1[1]}\n`;
  assert.equal(
    (await topics('--describe', '--under-replicated-partitions')).stdout,
    problem + '\tTopic: other\tPartition: 0\tLeader: none\tReplicas: 2,0\tIsr: \n\tTopic: other\tPartition: 1\tLeader: none\tReplicas: 0,1\tIsr: \n',
  );
  assert.equal((await topics('--describe', '--unavailable-partitions', '--topic', 'big.*')).stdout, problem);
  assert.equal(
    (await topics('--describe', '--topics-with-overrides')).stdout,
    'Topic:other\tPartitionCount:2\tReplicationFactor:2\tConfigs:retention.ms=1000\n',
  );
  oneLineError(await topics('--describe', '--topic', 'ghost'), 'kafka-topics.sh', "Topic 'ghost' does not exist as expected");

  const alter = await topics('--alter', '--topic', 'bigdata', '--partitions', '4');
  assert.equal(alter.code, 0, alter.stderr);
  assert.equal(
    alter.stdout,
    'WARNING: If partitions are increased for a topic that has a key, the partition logic or ordering of the messages will be affected\nAdding partitions succeeded!\n',
  );
  const grown = (await zkc.getTopicAssignment('bigdata'))!;
  assert.deepEqual([...grown.partitions.keys()], [0, 1, 2, 3]);
  assert.deepEqual(grown.partitions.get(0), p0, 'existing partitions unchanged');
  assert.equal(grown.partitions.get(2)![0], (p0[0]! + 2) % 3, 'new partitions continue the leader round robin');
  assert.equal(grown.zkVersion, 1);
  oneLineError(
    await topics('--alter', '--topic', 'bigdata', '--partitions', '3'),
    'kafka-topics.sh',
    /^kafka-topics\.sh: The number of partitions for a topic can only be increased\. Topic bigdata currently has 4 partitions, 3 would not be an increase\.\n$/,
  );

  const del = await topics('--delete', '--topic', 'other');
  assert.equal(del.stdout, 'Topic other is marked for deletion.\nNote: This will have no impact if delete.topic.enable is not set to true.\n');
  assert.deepEqual(await zkLs(zk!.port, '/admin/delete_topics'), ['other']);
  assert.equal((await topics('--delete', '--topic', 'other')).stdout, 'Topic other is already marked for deletion.\n');
  assert.equal((await topics('--list')).stdout, 'bigdata\nother - marked for deletion\n');
  oneLineError(await topics('--delete', '--topic', 'ghost'), 'kafka-topics.sh', "Topic 'ghost' does not exist as expected");
});

test('kafka-topics --zookeeper: a chroot, no registered brokers, an unreachable ZooKeeper', { timeout: 240_000 }, async (t) => {
  if (!requirePeer(t, 'zookeeper')) return;
  const noBrokers = await runCli(
    'kafka-topics',
    ['--create', '--topic', 'bigdata', '--zookeeper', `${zk!.connect}/empty`, '--partitions', '2', '--replication-factor', '2'],
    { timeoutMs: 60_000 },
  );
  oneLineError(noBrokers, 'kafka-topics.sh', 'Replication factor: 2 larger than available brokers: 0.');

  await registerBrokers('/kafka', [5]);
  const chrooted = await runCli(
    'kafka-topics',
    ['--create', '--topic', 'c', '--zookeeper', `${zk!.connect}/kafka`, '--partitions', '3', '--replication-factor', '1'],
    { timeoutMs: 60_000 },
  );
  assert.equal(chrooted.stdout, 'Created topic "c".\n', chrooted.stderr);
  assert.equal(JSON.parse(await zkGet(zk!.port, '/kafka/brokers/topics/c')).partitions['2'][0], 5);
  assert.ok(!(await zkLs(zk!.port, '/brokers/topics')).includes('c'));

  const props = join(dir!, 'zk.properties');
  await writeFile(props, 'zookeeper.connection.timeout.ms=1500\n');
  const started = Date.now();
  const down = await runCli('kafka-topics', ['--list', '--zookeeper', `127.0.0.1:${await freePort()}`, '--command-config', props], { timeoutMs: 60_000 });
  oneLineError(down, 'kafka-topics.sh', /^kafka-topics\.sh: no ZooKeeper answered at 127\.0\.0\.1:\d+ \(connection refused; tried for \d s\)/);
  assert.ok(Date.now() - started < 30_000, 'gives up after the configured timeout');
  oneLineError(
    await runCli('kafka-topics', ['--list', '--zookeeper', 'no-port']),
    'kafka-topics.sh',
    '--zookeeper expects host:port[,host:port...][/chroot], got "no-port"',
  );
});

test('kafka-configs --zookeeper: alter and describe topic and broker configs, with a change notification each', { timeout: 240_000 }, async (t) => {
  if (!requirePeer(t, 'zookeeper')) return;
  const zkc = new KafkaZkClient(brokers!);
  await zkc.createTopic('cfg', 'id', new Map([[0, [0]]]), {});
  const before = (await zkc.getConfigChangeNames()).length;

  const alter = await configs(
    '--alter',
    '--entity-type',
    'topics',
    '--entity-name',
    'cfg',
    '--add-config',
    'retention.ms=5000,cleanup.policy=[compact,delete]',
  );
  assert.equal(alter.stdout, "Completed Updating config for entity: topic 'cfg'.\n", alter.stderr);
  assert.equal(await zkGet(zk!.port, '/config/topics/cfg'), '{"version":1,"config":{"retention.ms":"5000","cleanup.policy":"compact,delete"}}');
  const names = await zkc.getConfigChangeNames();
  assert.equal(names.length, before + 1);
  assert.equal(await zkGet(zk!.port, `/config/changes/${names.at(-1)}`), '{"version":2,"entity_path":"topics/cfg"}');

  const del = await configs('--alter', '--entity-type', 'topics', '--entity-name', 'cfg', '--delete-config', 'cleanup.policy');
  assert.equal(del.code, 0, del.stderr);
  assert.equal((await configs('--describe', '--entity-type', 'topics', '--entity-name', 'cfg')).stdout, "Configs for topic 'cfg' are retention.ms=5000\n");
  oneLineError(
    await configs('--alter', '--entity-type', 'topics', '--entity-name', 'cfg', '--delete-config', 'nope,retention.ms'),
    'kafka-configs.sh',
    'Invalid config(s): nope',
  );
  oneLineError(
    await configs('--alter', '--entity-type', 'topics', '--entity-name', 'cfg', '--add-config', 'retention.ms=abc'),
    'kafka-configs.sh',
    /retention\.ms/,
  );
  oneLineError(
    await configs('--alter', '--entity-type', 'topics', '--entity-name', 'ghost', '--add-config', 'retention.ms=1'),
    'kafka-configs.sh',
    'Topic "ghost" does not exist.',
  );

  const broker = await configs('--alter', '--entity-type', 'brokers', '--entity-name', '1', '--add-config', 'follower.replication.throttled.rate=1000');
  assert.equal(broker.stdout, "Completed Updating config for entity: brokers '1'.\n", broker.stderr);
  const dflt = await configs('--alter', '--entity-type', 'brokers', '--entity-default', '--add-config', 'log.cleaner.threads=2');
  assert.equal(dflt.stdout, 'Completed Updating config for entity: default brokers.\n', dflt.stderr);
  assert.equal(await zkGet(zk!.port, '/config/brokers/<default>'), '{"version":1,"config":{"log.cleaner.threads":"2"}}');
  assert.equal(
    (await configs('--describe', '--entity-type', 'brokers')).stdout,
    "Configs for brokers '1' are follower.replication.throttled.rate=1000\nConfigs for default brokers are log.cleaner.threads=2\n",
  );
  oneLineError(
    await configs('--alter', '--entity-type', 'brokers', '--entity-name', 'b1', '--add-config', 'a=1'),
    'kafka-configs.sh',
    "Error parsing broker b1. The broker's Entity Name must be a single integer value",
  );
});

test('kafka-preferred-replica-election --zookeeper: writes /admin/preferred_replica_election for the controller, Kafka 2.x lines', {
  timeout: 240_000,
}, async (t) => {
  if (!requirePeer(t, 'zookeeper')) return;
  await new KafkaZkClient(brokers!).createTopic(
    'pref',
    'id',
    new Map([
      [0, [0, 1]],
      [1, [1, 2]],
    ]),
    {},
  );
  const json = join(dir!, 'election.json');
  await writeFile(
    json,
    JSON.stringify({
      partitions: [
        { topic: 'pref', partition: 1 },
        { topic: 'ghost', partition: 0 },
        { topic: 'pref', partition: 0 },
      ],
    }),
  );
  const elect = (...args: string[]) => runCli('kafka-preferred-replica-election', [...args, '--zookeeper', zk!.connect], { timeoutMs: 60_000 });
  const started = await elect('--path-to-json-file', json);
  assert.equal(started.code, 0, started.stderr);
  assert.equal(
    started.stdout,
    [
      'This tool is deprecated. Please use kafka-leader-election tool. Tracking issue: KAFKA-8405',
      'Warning: --zookeeper is deprecated and will be removed in a future version of Kafka.',
      'Use --bootstrap-server instead to specify a broker to connect to.',
      'Created preferred replica election path with pref-0,pref-1',
      'Successfully started preferred replica election for partitions Set(pref-0, pref-1)',
      "Skipping preferred replica leader election for partition ghost-0 since it doesn't exist.",
      '',
    ].join('\n'),
  );
  assert.deepEqual(JSON.parse(await zkGet(zk!.port, '/admin/preferred_replica_election')), {
    version: 1,
    partitions: [
      { topic: 'pref', partition: 0 },
      { topic: 'pref', partition: 1 },
    ],
  });
  // No controller here takes the znode away: a second election is refused while it is there.
  const pending = await elect();
  oneLineError(
    pending,
    'kafka-preferred-replica-election.sh',
    'Preferred replica leader election currently in progress for Set(pref-0, pref-1). Aborting operation',
  );
  await brokers!.delete('/admin/preferred_replica_election');
  await writeFile(
    json,
    JSON.stringify({
      partitions: [
        { topic: 'pref', partition: 0 },
        { topic: 'pref', partition: 0 },
      ],
    }),
  );
  oneLineError(
    await elect('--path-to-json-file', json),
    'kafka-preferred-replica-election.sh',
    'Preferred replica election data contains duplicate partitions: pref-0',
  );
  oneLineError(
    await runCli('kafka-preferred-replica-election', ['--zookeeper', zk!.connect, '--bootstrap-server', '127.0.0.1:1']),
    'kafka-preferred-replica-election.sh',
    "Exactly one of '[bootstrap-server]' or '[zookeeper]' must be provided",
  );
});
