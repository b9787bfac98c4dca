/**
 * The seed's first half on a three-broker cluster: `kafka-console-consumer.sh --zookeeper` keeps
 * its group under /consumers as zkCli shows it (ls /consumers → [console-consumer-N], the group's
 * [ids, offsets, owners], offsets/bigdata → [0, 1], get → the next offset to read); kill -9, more
 * records, a restart in the same group resumes from the ZooKeeper offsets with nothing skipped and
 * nothing read twice; a second member splits the partitions (one owner each); a ZooKeeper session
 * expiry under the running consumer ends in a new registration and a rebalance; and the seed's
 * `--topic __consumer_offsets --zookeeper ... --formatter ...OffsetsMessageFormatter` reads the
 * commits of a --bootstrap-server group, in both forms also with the shipped
 * config/consumer.properties (its group.id is the reader's group). The tests run in order on one cluster.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Cluster } from '../helpers/cluster.js';
import { requirePeer } from '../helpers/peers.js';
import { ZkRelay, type ZooKeeperServer } from '../helpers/zookeeper.js';
import { closeDeadSession } from '../helpers/zk-dead-session.js';
import { Producer } from '../../src/client/index.js';
import { LineCollector, exited, runCli, spawnCli } from '../cli/helpers.js';
import { kafkaTopics, waitForTopic } from './cluster-clients.js';

const OFFSET_LINE = /^\[([^,]+),bigdata,([01])\]::\[OffsetMetadata\[(\d+),NO_METADATA\],CommitTime (\d+),ExpirationTime (\d+)\]$/;
const FAST_COMMIT = ['--consumer-property', 'auto.commit.interval.ms=500'];

let c: Cluster | undefined;
let tmp: string | undefined;
let producer: Producer | undefined;
const children: ReturnType<typeof spawnCli>[] = [];
let group = '';
/** The restarted consumer reaches ZooKeeper through this, so the test can cut it off. */
let relay: ZkRelay | undefined;
/** Every value produced to bigdata so far, per partition, in order. */
const produced: string[][] = [[], []];

before(async () => {
  if (Cluster.available()) c = await Cluster.start();
  tmp = await mkdtemp(join(tmpdir(), 'fjord-zk-consumer-seed-'));
});
after(async () => {
  for (const ch of children) if (ch.exitCode === null && ch.signalCode === null) ch.kill('SIGKILL');
  await producer?.close();
  await relay?.close();
  await c?.stop();
  if (tmp) await rm(tmp, { recursive: true, force: true });
});

async function produce(perPartition: number, prefix: string): Promise<string[]> {
  producer ??= new Producer({ bootstrapServers: c!.bootstrap(), lingerMs: 0 });
  const out: string[] = [];
  for (const p of [0, 1]) {
    for (let i = 0; i < perPartition; i++) {
      const v = `${prefix}-${p}-${produced[p]!.length}`;
      await producer.send({ topic: 'bigdata', partition: p, value: Buffer.from(v) });
      produced[p]!.push(v);
      out.push(v);
    }
  }
  return out;
}

function startConsumer(args: string[]): { child: ReturnType<typeof spawnCli>; lines: LineCollector; stderr: () => string } {
  const child = spawnCli('kafka-console-consumer', args);
  children.push(child);
  let err = '';
  child.stderr.on('data', (d: Buffer) => (err += d.toString()));
  return { child, lines: new LineCollector(child), stderr: () => err };
}

const zkData = async (path: string): Promise<string | undefined> => (await (await c!.zk()).getIfExists(path))?.data.toString('utf8');
const offsetsAre = async (a: number, b: number): Promise<boolean> =>
  (await zkData(`/consumers/${group}/offsets/bigdata/0`)) === String(a) && (await zkData(`/consumers/${group}/offsets/bigdata/1`)) === String(b);

test('kafka-console-consumer --zookeeper: zkCli shows the group, its ids/offsets/owners and the next offset to read', async (t) => {
  if (!requirePeer(t, 'zookeeper')) return;
  const r = await kafkaTopics('--create', '--topic', 'bigdata', '--zookeeper', c!.zkConnect, '--partitions', '2', '--replication-factor', '2');
  assert.equal(r.code, 0, r.stderr);
  const topic = await waitForTopic(c!, 'bigdata');
  assert.notEqual(topic.partitions[0]!.leader, topic.partitions[1]!.leader, 'the two partitions lead on different brokers: reads go to each leader');
  for (const b of c!.brokers) {
    await c!.waitFor(`broker ${b.id} knowing bigdata's leaders`, 30_000, async () => {
      const p = new Producer({ bootstrapServers: b.bootstrap });
      try {
        const md = await p.cluster.refreshMetadata(['bigdata']);
        return md.topics.get('bigdata')?.partitions.every((x) => x.leader >= 0) === true;
      } finally {
        await p.close();
      }
    });
  }
  const first = await produce(3, 'hello');

  const { lines } = startConsumer(['--zookeeper', c!.zkConnect, '--topic', 'bigdata', '--from-beginning', ...FAST_COMMIT]);
  await lines.waitFor((l) => l.length >= first.length, 60_000, `${first.length} records`);
  assert.deepEqual([...lines.lines].sort(), [...first].sort());

  const groups = await c!.zkCliLs('/consumers');
  assert.equal(groups.length, 1, `one group: [${groups.join(', ')}]`);
  assert.match(groups[0]!, /^console-consumer-\d{1,5}$/);
  group = groups[0]!;
  assert.deepEqual(await c!.zkCliLs(`/consumers/${group}`), ['ids', 'offsets', 'owners']);
  await c!.waitFor('commits of both partitions', 30_000, () => offsetsAre(3, 3));
  assert.deepEqual(await c!.zkCliLs(`/consumers/${group}/offsets`), ['bigdata']);
  assert.deepEqual(await c!.zkCliLs(`/consumers/${group}/offsets/bigdata`), ['0', '1']);
  assert.equal(await c!.zkCliGet(`/consumers/${group}/offsets/bigdata/0`), '3');
  const ids = await c!.zkCliLs(`/consumers/${group}/ids`);
  assert.equal(ids.length, 1);
  assert.match(ids[0]!, new RegExp(`^${group}_[^-]+(-[^-]+)*-\\d{13}-[0-9a-f]{8}$`));
  const reg = JSON.parse((await zkData(`/consumers/${group}/ids/${ids[0]}`))!) as Record<string, unknown>;
  assert.deepEqual({ ...reg, timestamp: undefined }, { version: 1, subscription: { bigdata: 1 }, pattern: 'static', timestamp: undefined });
  assert.deepEqual(await c!.zkCliLs(`/consumers/${group}/owners/bigdata`), ['0', '1']);
  for (const p of [0, 1]) assert.equal(await zkData(`/consumers/${group}/owners/bigdata/${p}`), `${ids[0]}-0`);
});

test('kill -9, produce more, restart with --group: resumes from the ZooKeeper offsets, every record once', async (t) => {
  if (!requirePeer(t, 'zookeeper') || group === '') return;
  const running = children.at(-1)!;
  running.kill('SIGKILL');
  await exited(running);
  const more = await produce(4, 'more');

  // Kafka's old tool refuses --from-beginning over stored offsets (without --delete-consumer-offsets).
  const refused = await runCli('kafka-console-consumer', ['--zookeeper', c!.zkConnect, '--topic', 'bigdata', '--group', group, '--from-beginning'], {
    timeoutMs: 60_000,
  });
  assert.equal(refused.code, 1);
  assert.equal(
    refused.stderr,
    `kafka-console-consumer.sh: Found previous offset information for this group ${group}. Please use --delete-consumer-offsets to delete previous offsets metadata\n`,
  );

  // The killed member's ephemeral nodes live until its session times out (6 s): the new member
  // retries its claims meanwhile (rebalance.max.retries 4 × rebalance.backoff.ms 2000).
  relay = await ZkRelay.start({ port: c!.zkPort, connect: `127.0.0.1:${c!.zkPort}` } as ZooKeeperServer);
  const { lines, stderr } = startConsumer(['--zookeeper', relay!.connect + c!.chroot, '--topic', 'bigdata', '--group', group, ...FAST_COMMIT]);
  await lines.waitFor((l) => l.length >= more.length, 90_000, `${more.length} records`);
  await c!.waitFor('commits after the restart', 30_000, () => offsetsAre(7, 7));
  assert.deepEqual([...lines.lines].sort(), [...more].sort(), `nothing skipped, nothing twice; stderr: ${stderr()}`);
  const ids = await c!.zkCliLs(`/consumers/${group}/ids`);
  assert.equal(ids.length, 1, 'the killed member is gone with its session');

  // A ZooKeeper session expiry under the running consumer: cut it off from ZooKeeper, the server
  // ends its session (its ids node vanishes; closed at once rather than after the 6 s timeout),
  // then let it reconnect.
  const zk = await c!.zk();
  const oldOwner = (await zk.get(`/consumers/${group}/ids/${ids[0]}`)).stat.ephemeralOwner;
  relay!.cut();
  await closeDeadSession(`127.0.0.1:${c!.zkPort}`, oldOwner);
  await c!.waitFor("the server expiring the consumer's session", 60_000, async () => (await zk.exists(`/consumers/${group}/ids/${ids[0]}`)) === null);
  relay!.restore();
  const renewed = await c!.waitFor('a new registration', 60_000, async () => {
    const got = await zk.getIfExists(`/consumers/${group}/ids/${ids[0]}`);
    return got && got.stat.ephemeralOwner !== oldOwner ? got.stat.ephemeralOwner : undefined;
  });
  await c!.waitFor('both partitions claimed again by the new session', 60_000, async () => {
    for (const p of [0, 1]) {
      const o = await zk.getIfExists(`/consumers/${group}/owners/bigdata/${p}`);
      if (!o || o.stat.ephemeralOwner !== renewed || o.data.toString() !== `${ids[0]}-0`) return false;
    }
    return true;
  });
  const after = await produce(2, 'after');
  await lines.waitFor((l) => l.length >= more.length + after.length, 60_000, 'records after the expiry');
  assert.deepEqual(lines.lines.slice(more.length).sort(), [...after].sort());
});

test('a second member in the group: each owns one partition, the owner nodes name two different members', async (t) => {
  if (!requirePeer(t, 'zookeeper') || group === '') return;
  const second = startConsumer(['--zookeeper', c!.zkConnect, '--topic', 'bigdata', '--group', group, ...FAST_COMMIT]);
  const zk = await c!.zk();
  const owners = await c!.waitFor('one partition each', 60_000, async () => {
    const ids = await zk.children(`/consumers/${group}/ids`);
    if (ids.length !== 2) return undefined;
    const o = await Promise.all([0, 1].map((p) => zkData(`/consumers/${group}/owners/bigdata/${p}`)));
    const sorted = ids.sort().map((id) => `${id}-0`);
    return o.join(',') === sorted.join(',') ? o : undefined;
  });
  assert.notEqual(owners[0], owners[1]);
  const first = children.at(-2)!;
  const firstLines = new LineCollector(first);
  const extra = await produce(3, 'split');
  await c!.waitFor('the split records', 60_000, () => firstLines.lines.length + second.lines.lines.length >= extra.length);
  assert.deepEqual([...firstLines.lines, ...second.lines.lines].sort(), [...extra].sort());
  // Each member printed one partition's records only.
  for (const got of [firstLines.lines, second.lines.lines]) assert.equal(new Set(got.map((v) => v.split('-')[1])).size, 1, got.join(','));
  const live = children.filter((ch) => ch.exitCode === null && ch.signalCode === null);
  for (const ch of live) ch.kill('SIGTERM');
  assert.deepEqual(
    await Promise.all(live.map((ch) => exited(ch))),
    live.map(() => 0),
    'SIGTERM: a clean exit',
  );
  assert.deepEqual(await zk.children(`/consumers/${group}/ids`), [], 'both left the group');
  assert.deepEqual(await zk.children(`/consumers/${group}/owners/bigdata`), [], 'and released their partitions');
});

test("--topic __consumer_offsets --zookeeper with the OffsetsMessageFormatter reads a --bootstrap-server group's commits", async (t) => {
  if (!requirePeer(t, 'zookeeper')) return;
  const total = produced[0]!.length + produced[1]!.length;
  const newGroup = await runCli(
    'kafka-console-consumer',
    ['--bootstrap-server', c!.broker(0).bootstrap, '--topic', 'bigdata', '--from-beginning', '--max-messages', String(total), '--group', 'seed-new'],
    { timeoutMs: 90_000 },
  );
  assert.equal(newGroup.code, 0, newGroup.stderr);
  const props = join(tmp!, 'consumer.properties');
  await writeFile(props, 'exclude.internal.topics=false\n');
  const { lines } = startConsumer([
    '--topic',
    '__consumer_offsets',
    '--zookeeper',
    c!.zkConnect,
    '--formatter',
    'kafka.coordinator.group.GroupMetadataManager$OffsetsMessageFormatter',
    '--consumer.config',
    props,
    '--from-beginning',
  ]);
  await lines.waitFor((l) => l.filter((x) => x.startsWith('[seed-new,')).length >= 2, 60_000, "seed-new's commits");
  const mine = lines.lines.map((l) => OFFSET_LINE.exec(l)).filter((x) => x !== null && x[1] === 'seed-new');
  const last = new Map(mine.map((x) => [Number(x![2]), Number(x![3])]));
  assert.deepEqual([last.get(0), last.get(1)], [produced[0]!.length, produced[1]!.length]);
  for (const x of mine) assert.ok(Number(x![5]) > Number(x![4]), 'ExpirationTime after CommitTime');
  const reader = children.at(-1)!;
  reader.kill('SIGTERM');
  assert.equal(await exited(reader), 0);
  // The reader's generated group is removed from ZooKeeper on a clean exit, as Kafka's tool did.
  const left = (await c!.zkCliLs('/consumers')).filter((g) => g !== group);
  assert.deepEqual(left, []);
});

test("the seed's __consumer_offsets command with the shipped config/consumer.properties: --bootstrap-server and --zookeeper read its group.id", async (t) => {
  if (!requirePeer(t, 'zookeeper')) return;
  // As the seed types it, from the repository root (where config/ is).
  const seedCommand = (server: string[]) => [
    '--topic',
    '__consumer_offsets',
    ...server,
    '--formatter',
    'kafka.coordinator.group.GroupMetadataManager$OffsetsMessageFormatter',
    '--consumer.config',
    'config/consumer.properties',
    '--from-beginning',
  ];
  // A group's commit first, as in the seed (it creates __consumer_offsets when this test runs alone).
  const created = await kafkaTopics('--create', '--topic', 'shipped', '--bootstrap-server', c!.bootstrap(), '--partitions', '1', '--replication-factor', '1');
  assert.equal(created.code, 0, created.stderr);
  await waitForTopic(c!, 'shipped');
  const committed = await runCli(
    'kafka-console-consumer',
    ['--bootstrap-server', c!.bootstrap(), '--topic', 'shipped', '--group', 'shipped-seed', '--timeout-ms', '1000'],
    {
      timeoutMs: 90_000,
    },
  );
  assert.equal(committed.code, 0, committed.stderr);
  // The file's bootstrap.servers (localhost:9092) gives way to the flag; its group.id is the
  // reader's group, whose own auto-commits (every 5 s) it then reads back.
  const ownCommit = /^\[test-consumer-group,__consumer_offsets,\d+\]::\[OffsetMetadata\[\d+,NO_METADATA\],CommitTime \d+,ExpirationTime \d+\]$/;
  const viaBroker = startConsumer(seedCommand(['--bootstrap-server', c!.broker(0).bootstrap]));
  await viaBroker.lines.waitFor((l) => l.some((x) => ownCommit.test(x)), 60_000, `test-consumer-group's commits (stderr: ${viaBroker.stderr()})`);
  viaBroker.child.kill('SIGTERM');
  assert.equal(await exited(viaBroker.child), 0, viaBroker.stderr());

  // The old consumer takes the same file: its group is test-consumer-group in ZooKeeper, and the
  // formatter prints the commits the --bootstrap-server reader made.
  const viaZk = startConsumer(seedCommand(['--zookeeper', c!.zkConnect]));
  await viaZk.lines.waitFor((l) => l.some((x) => ownCommit.test(x)), 60_000, `the commits in __consumer_offsets (stderr: ${viaZk.stderr()})`);
  assert.equal((await (await c!.zk()).children('/consumers/test-consumer-group/ids')).length, 1, "a member of the file's group");
  viaZk.child.kill('SIGTERM');
  assert.equal(await exited(viaZk.child), 0, viaZk.stderr());
  assert.ok(await (await c!.zk()).exists('/consumers/test-consumer-group/offsets/__consumer_offsets'), "a group that was given is kept, as Kafka's tool did");
});
