/**
 * The tools for pre-0.9 (ZooKeeper) consumer groups against a two-broker cluster:
 * kafka-consumer-groups.sh --zookeeper (Kafka 0.11's ZooKeeper mode: --list, --describe with the
 * leaders' log end offsets and the owners, --delete refused while consumers are registered, and
 * --reset-offsets), Kafka's ExportZkOffsets/ImportZkOffsets through bin/kafka-run-class.sh, and
 * moving a group between ZooKeeper and __consumer_offsets with --export / --from-file.
 * The groups are written into ZooKeeper as Kafka 0.8's ZookeeperConsumerConnector laid them out.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Cluster } from '../helpers/cluster.js';
import { requirePeer } from '../helpers/peers.js';
import { runCli, type CliResult } from '../cli/helpers.js';
import { kafkaTopics, waitForTopic } from './cluster-clients.js';
import { Admin, Producer } from '../../src/client/index.js';
import type { ZkSession } from '../../src/metadata/zk/zk-session.js';

let c: Cluster | undefined;
let dir: string;
const NOTE = 'Note: This will only show information about consumers that use ZooKeeper (not those using the Java consumer API).';

before(async () => {
  if (!Cluster.available()) return;
  dir = await mkdtemp(join(tmpdir(), 'fjord-zkgroups-'));
  c = await Cluster.start({ brokers: 2, props: { 'offsets.topic.replication.factor': '1' } });
  const created = await kafkaTopics('--create', '--topic', 'bigdata', '--zookeeper', c.zkConnect, '--partitions', '2', '--replication-factor', '1');
  assert.equal(created.code, 0, created.stderr);
  await waitForTopic(c, 'bigdata');
  const producer = new Producer({ bootstrapServers: c.bootstrap(), acks: 1 });
  try {
    // Log end offsets 3 (partition 0) and 5 (partition 1).
    for (let i = 0; i < 8; i++) await producer.send({ topic: 'bigdata', partition: i < 3 ? 0 : 1, key: null, value: `v${i}` });
    await producer.flush();
  } finally {
    await producer.close();
  }
  const zk = await c.zk();
  // active: a registered consumer owning partition 0; offsets for both partitions.
  await offset(zk, 'active', 0, 1n);
  await offset(zk, 'active', 1, 5n);
  await zk.ensurePath('/consumers/active/ids');
  await zk.create(
    '/consumers/active/ids/active_host-1482765213478-5a1b2c3d',
    JSON.stringify({ version: 1, subscription: { bigdata: 1 }, pattern: 'static', timestamp: '1482765213478' }),
    'ephemeral',
  );
  await zk.ensurePath('/consumers/active/owners/bigdata');
  await zk.create('/consumers/active/owners/bigdata/0', 'active_host-1482765213478-5a1b2c3d-0', 'ephemeral');
  // crowded: two registered consumers, one owning partition 1, one owning nothing; no offset for partition 0.
  await offset(zk, 'crowded', 1, 4n);
  await zk.ensurePath('/consumers/crowded/ids');
  for (const id of ['crowded_a-1-aaaa', 'crowded_b-1-bbbb']) {
    await zk.create(
      `/consumers/crowded/ids/${id}`,
      JSON.stringify({ version: 1, subscription: { bigdata: 1 }, pattern: 'static', timestamp: '1' }),
      'ephemeral',
    );
  }
  await zk.ensurePath('/consumers/crowded/owners/bigdata');
  await zk.create('/consumers/crowded/owners/bigdata/1', 'crowded_a-1-aaaa-0', 'ephemeral');
  // idle: offsets only (its consumers are gone).
  await offset(zk, 'idle', 0, 2n);
  await offset(zk, 'idle', 1, 4n);
});
after(async () => {
  await c?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

async function offset(zk: ZkSession, group: string, p: number, o: bigint): Promise<void> {
  await zk.ensurePath(`/consumers/${group}/offsets/bigdata`);
  const path = `/consumers/${group}/offsets/bigdata/${p}`;
  if (await zk.exists(path)) await zk.set(path, String(o));
  else await zk.create(path, String(o));
}

async function znode(path: string): Promise<string | undefined> {
  return (await (await c!.zk()).getIfExists(path))?.data.toString();
}

const groups = (...args: string[]): Promise<CliResult> => runCli('kafka-consumer-groups', args, { timeoutMs: 60_000 });
const zkGroups = (...args: string[]): Promise<CliResult> => groups('--zookeeper', c!.zkConnect, ...args);

/** A table's rows as whitespace-split cells, header first (the leading blank line dropped). */
const table = (out: string): string[][] =>
  out
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => l.trim().split(/\s+/));

test("--zookeeper --list prints the groups under /consumers after Kafka's note on stderr", async (t) => {
  if (!requirePeer(t, 'zookeeper')) return;
  const r = await zkGroups('--list');
  assert.equal(r.code, 0, r.stderr);
  assert.deepEqual(
    r.stdout.split('\n').filter((l) => l !== ''),
    ['active', 'crowded', 'idle'],
  );
  assert.equal(r.stderr, `${NOTE}\n\n`);
});

test("--zookeeper --describe: Kafka 0.11's columns, offsets from ZooKeeper, log end offsets from the leaders, owners without their thread suffix", async (t) => {
  if (!requirePeer(t, 'zookeeper')) return;
  const r = await zkGroups('--describe', '--group', 'active');
  assert.equal(r.code, 0, r.stderr);
  const lines = r.stdout.split('\n');
  assert.equal(lines[0], '', 'a blank line before the header, as Kafka');
  assert.equal(
    lines[1],
    `${'TOPIC'.padEnd(30)} ${'PARTITION'.padEnd(10)} ${'CURRENT-OFFSET'.padEnd(15)} ${'LOG-END-OFFSET'.padEnd(15)} ${'LAG'.padEnd(10)} ${'CONSUMER-ID'.padEnd(50)}`,
  );
  assert.deepEqual(table(r.stdout).slice(1), [
    ['bigdata', '0', '1', '3', '2', 'active_host-1482765213478-5a1b2c3d'],
    ['bigdata', '1', '5', '5', '0', '-'],
  ]);

  // Every partition of the topic, '-' where nothing is stored; a consumer owning nothing gets a row of its own.
  const crowded = await zkGroups('--describe', '--group', 'crowded');
  assert.equal(crowded.code, 0, crowded.stderr);
  assert.deepEqual(table(crowded.stdout).slice(1), [
    ['bigdata', '0', '-', '3', '-', '-'],
    ['bigdata', '1', '4', '5', '1', 'crowded_a-1-aaaa'],
    ['-', '-', '-', '-', '-', 'crowded_b-1-bbbb'],
  ]);

  const missing = await zkGroups('--describe', '--group', 'no-such-group');
  assert.equal(missing.code, 1);
  assert.equal(missing.stdout.trim(), "Error: The consumer group 'no-such-group' does not exist.");
});

test('--zookeeper --reset-offsets: dry run by default, --execute writes the znodes, refused while consumers are registered', async (t) => {
  if (!requirePeer(t, 'zookeeper')) return;
  const dry = await zkGroups('--reset-offsets', '--group', 'idle', '--topic', 'bigdata', '--to-earliest');
  assert.equal(dry.code, 0, dry.stderr);
  assert.match(dry.stdout, /^WARN: No action will be performed as the --execute option is missing/);
  assert.deepEqual(table(dry.stdout).slice(-2), [
    ['idle', 'bigdata', '0', '0'],
    ['idle', 'bigdata', '1', '0'],
  ]);
  assert.equal(await znode('/consumers/idle/offsets/bigdata/0'), '2', 'a dry run writes nothing');

  const run = async (...args: string[]): Promise<[string | undefined, string | undefined]> => {
    const r = await zkGroups('--reset-offsets', '--group', 'idle', '--execute', ...args);
    assert.equal(r.code, 0, `${args.join(' ')}: ${r.stderr}`);
    return [await znode('/consumers/idle/offsets/bigdata/0'), await znode('/consumers/idle/offsets/bigdata/1')];
  };
  assert.deepEqual(await run('--topic', 'bigdata', '--to-latest'), ['3', '5']);
  assert.deepEqual(await run('--all-topics', '--shift-by', '-2'), ['1', '3']);
  assert.deepEqual(await run('--topic', 'bigdata:1', '--to-offset', '4'), ['1', '4']);
  assert.deepEqual(await run('--topic', 'bigdata', '--to-datetime', '2000-01-01T00:00:00.000'), ['0', '0']);
  const csv = join(dir, 'plan.csv');
  await writeFile(csv, 'bigdata,0,2\nbigdata,1,1\n');
  assert.deepEqual(await run('--from-file', csv), ['2', '1']);

  const refused = await zkGroups('--reset-offsets', '--group', 'active', '--topic', 'bigdata', '--to-earliest', '--execute');
  assert.equal(refused.code, 1);
  assert.match(refused.stderr, /group 'active' is inactive, but 1 consumer\(s\) are registered/);
  assert.equal(refused.stderr.split('\n').filter((l) => l !== '').length, 2, `the note and one line: ${refused.stderr}`);
  assert.equal(await znode('/consumers/active/offsets/bigdata/0'), '1');
});

test('bad flags and missing groups: one clear line, non-zero exit', async (t) => {
  if (!requirePeer(t, 'zookeeper')) return;
  for (const [args, message] of [
    [['--zookeeper', c!.zkConnect, '--bootstrap-server', c!.bootstrap(), '--list'], /--zookeeper and --bootstrap-server cannot be used together/],
    [['--zookeeper', c!.zkConnect, '--describe', '--group', 'active', '--members'], /--members is not valid with --zookeeper/],
    [['--zookeeper', c!.zkConnect, '--describe', '--list'], /exactly one of --list/],
    [['--zookeeper', c!.zkConnect, '--describe'], /missing required argument --group/],
    [['--zookeeper', 'not a connect string', '--list'], /--zookeeper expects host:port/],
    [['--zookeeper', c!.zkConnect, '--reset-offsets', '--group', 'nope', '--topic', 'bigdata', '--to-earliest'], /The consumer group 'nope' does not exist/],
    [['--zookeeper', c!.zkConnect, '--reset-offsets', '--group', 'idle', '--to-earliest'], /needs --topic, --all-topics or --from-file/],
    [['--zookeeper', c!.zkConnect, '--describe', '--group', 'a/b'], /contains '\/'/],
  ] as const) {
    const r = await groups(...args);
    assert.equal(r.code, 1, `${args.join(' ')}: ${r.stdout}${r.stderr}`);
    const errLines = r.stderr.split('\n').filter((l) => l !== '' && !l.startsWith('Note: '));
    assert.equal(errLines.length, 1, `${args.join(' ')}: ${r.stderr}`);
    assert.match(errLines[0]!, message);
    assert.doesNotMatch(r.stderr, /\n\s+at /, 'no stack trace');
  }
});

test('moving a group between the stores: --export of the ZooKeeper offsets, --from-file into __consumer_offsets, and back', async (t) => {
  if (!requirePeer(t, 'zookeeper')) return;
  const zk = await c!.zk();
  await offset(zk, 'moving', 0, 2n);
  await offset(zk, 'moving', 1, 3n);
  const exported = await zkGroups('--reset-offsets', '--group', 'moving', '--all-topics', '--to-current', '--export');
  assert.equal(exported.code, 0, exported.stderr);
  assert.equal(exported.stdout, 'bigdata,0,2\nbigdata,1,3\n');
  const csv = join(dir, 'moving.csv');
  await writeFile(csv, exported.stdout);
  const imported = await groups('--bootstrap-server', c!.bootstrap(), '--reset-offsets', '--group', 'moving', '--from-file', csv, '--execute');
  assert.equal(imported.code, 0, imported.stderr);
  const admin = new Admin({ bootstrapServers: c!.bootstrap() });
  try {
    const kafkaStored = await admin.listGroupOffsets('moving');
    assert.deepEqual([kafkaStored.get('bigdata')?.get(0)?.offset, kafkaStored.get('bigdata')?.get(1)?.offset], [2n, 3n]);
    // And back: a Kafka-stored group's offsets into ZooKeeper.
    await admin.alterGroupOffsets('back-to-zk', [
      { topic: 'bigdata', partition: 0, offset: 1n },
      { topic: 'bigdata', partition: 1, offset: 4n },
    ]);
  } finally {
    await admin.close();
  }
  const out = await groups('--bootstrap-server', c!.bootstrap(), '--reset-offsets', '--group', 'back-to-zk', '--all-topics', '--to-current', '--export');
  assert.equal(out.code, 0, out.stderr);
  const back = join(dir, 'back.csv');
  await writeFile(back, out.stdout);
  assert.match(
    (await zkGroups('--reset-offsets', '--group', 'back-to-zk', '--all-topics', '--to-latest', '--execute')).stderr,
    /The consumer group 'back-to-zk' does not exist/,
  );
  const toZk = await zkGroups('--reset-offsets', '--group', 'back-to-zk', '--from-file', back, '--execute');
  assert.equal(toZk.code, 0, toZk.stderr);
  assert.deepEqual([await znode('/consumers/back-to-zk/offsets/bigdata/0'), await znode('/consumers/back-to-zk/offsets/bigdata/1')], ['1', '4']);
});

test("kafka-run-class.sh kafka.tools.ExportZkOffsets / ImportZkOffsets: Kafka's path:offset lines", async (t) => {
  if (!requirePeer(t, 'zookeeper')) return;
  const runClass = (...args: string[]): Promise<CliResult> => runCli('kafka-run-class', args, { timeoutMs: 60_000 });
  const file = join(dir, 'export.txt');
  const exported = await runClass('kafka.tools.ExportZkOffsets', '--zkconnect', c!.zkConnect, '--group', 'active', '--output-file', file);
  assert.equal(exported.code, 0, exported.stderr);
  assert.equal(await readFile(file, 'utf8'), '/consumers/active/offsets/bigdata/0:1\n/consumers/active/offsets/bigdata/1:5\n');

  const all = join(dir, 'all.txt');
  assert.equal((await runClass('kafka.tools.ExportZkOffsets', '--zkconnect', c!.zkConnect, '--output-file', all)).code, 0);
  assert.match(await readFile(all, 'utf8'), /^\/consumers\/active\/offsets\/bigdata\/0:1$/m);
  assert.match(await readFile(all, 'utf8'), /^\/consumers\/idle\/offsets\/bigdata\/0:\d+$/m);

  const input = join(dir, 'import.txt');
  await writeFile(input, '/consumers/imported/offsets/bigdata/0:7\n/consumers/imported/offsets/bigdata/1:8\n');
  const imported = await runClass('kafka.tools.ImportZkOffsets', '--zkconnect', c!.zkConnect, '--input-file', input);
  assert.equal(imported.code, 0, imported.stderr);
  assert.deepEqual([await znode('/consumers/imported/offsets/bigdata/0'), await znode('/consumers/imported/offsets/bigdata/1')], ['7', '8']);

  await writeFile(input, '/consumers/imported/offsets/bigdata/0:not-a-number\n');
  const bad = await runClass('kafka.tools.ImportZkOffsets', '--zkconnect', c!.zkConnect, '--input-file', input);
  assert.equal(bad.code, 1);
  assert.match(bad.stderr, /line 1/);
  assert.equal(await znode('/consumers/imported/offsets/bigdata/0'), '7', 'a bad file changes nothing');
  const unknown = await runClass('kafka.tools.NoSuchTool');
  assert.equal(unknown.code, 1);
  assert.match(unknown.stderr, /kafka\.tools\.NoSuchTool/);
});

test("--zookeeper --delete: refused while consumers are registered, else the group's tree is removed (Kafka's messages)", async (t) => {
  if (!requirePeer(t, 'zookeeper')) return;
  const active = await zkGroups('--delete', '--group', 'active');
  assert.equal(active.code, 1);
  assert.equal(active.stdout.trim(), "Error: Delete for group 'active' failed because its consumers are still active.");
  assert.notEqual(await znode('/consumers/active/offsets/bigdata/0'), undefined);

  const idle = await zkGroups('--delete', '--group', 'idle');
  assert.equal(idle.code, 0, idle.stderr);
  assert.equal(idle.stdout.trim(), "Deleted all consumer group information for group 'idle' in zookeeper.");
  assert.equal(await (await c!.zk()).exists('/consumers/idle'), null);

  const gone = await zkGroups('--delete', '--group', 'idle');
  assert.equal(gone.code, 1);
  assert.equal(gone.stdout.trim(), "Error: Delete for group 'idle' failed because group does not exist.");
});
