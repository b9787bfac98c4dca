/**
 * The ZooKeeper consumer (Kafka 0.8's ZookeeperConsumerConnector) against a one-broker cluster on
 * a real ZooKeeper: its ids registration and owner claims as Kafka wrote them, commits to and
 * resumption from the offsets znodes, auto.offset.reset, two members splitting a topic without
 * ever owning one partition together, the offsets.storage=kafka migration with dual commit, and
 * a ZooKeeper session expiry under a running consumer. One cluster for the file.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { Cluster } from '../../helpers/cluster.js';
import { requirePeer } from '../../helpers/peers.js';
import { ZkRelay, expireSession, type ZooKeeperServer } from '../../helpers/zookeeper.js';
import { Admin, Producer } from '../../../src/client/index.js';
import { fetchCommittedOffsets } from '../../../src/client/group/offsets.js';
import { ZookeeperConsumer, type ZookeeperConsumerOptions } from '../../../src/client/zk-consumer/index.js';
import { ConsumerRegistrationZNode } from '../../../src/metadata/zk/zk-consumer-znodes.js';

let c: Cluster | undefined;
let admin: Admin | undefined;
let producer: Producer | undefined;
const open: ZookeeperConsumer[] = [];

before(async () => {
  if (!Cluster.available()) return;
  c = await Cluster.start({ brokers: 1, props: { 'offsets.topic.replication.factor': '1' } });
  admin = new Admin({ bootstrapServers: c.bootstrap() });
  producer = new Producer({ bootstrapServers: c.bootstrap(), lingerMs: 0 });
});
after(async () => {
  for (const z of open) await z.close().catch(() => undefined);
  await producer?.close();
  await admin?.close();
  await c?.stop();
});

async function topic(name: string, partitions: number): Promise<void> {
  const res = await admin!.createTopics([{ name, numPartitions: partitions, replicationFactor: 1 }]);
  assert.equal(res.get(name), null);
  await c!.waitFor(`${name}'s leaders`, 30_000, async () => {
    const md = await admin!.cluster.refreshMetadata([name]);
    const t = md.topics.get(name);
    return t !== undefined && t.errorCode === 0 && t.partitions.length === partitions && t.partitions.every((p) => p.leader >= 0);
  });
}

/** `n` records per partition, values `<prefix>-<partition>-<i>`. */
async function produce(name: string, partitions: number, n: number, prefix: string): Promise<string[]> {
  const sent: string[] = [];
  for (let p = 0; p < partitions; p++) {
    for (let i = 0; i < n; i++) {
      const v = `${prefix}-${p}-${i}`;
      await producer!.send({ topic: name, partition: p, value: Buffer.from(v) });
      sent.push(v);
    }
  }
  return sent;
}

async function consumer(group: string, extra: Partial<ZookeeperConsumerOptions> = {}): Promise<ZookeeperConsumer> {
  const z = await ZookeeperConsumer.connect({
    zookeeperConnect: c!.zkConnect,
    groupId: group,
    rebalanceBackoffMs: 300,
    zookeeperSessionTimeoutMs: 6000,
    ...extra,
  });
  open.push(z);
  return z;
}

/** Polls until `want` values were seen (or fails after 60 s); returns all values seen. */
async function consume(z: ZookeeperConsumer, want: number): Promise<string[]> {
  const got: string[] = [];
  const deadline = Date.now() + 60_000;
  while (got.length < want) {
    if (Date.now() > deadline) throw new Error(`got ${got.length} of ${want} records: ${got.join(',')}`);
    for (const r of await z.poll(500)) got.push(r.value!.toString());
  }
  return got;
}

async function zkData(path: string): Promise<string | undefined> {
  return (await (await c!.zk()).getIfExists(path))?.data.toString('utf8');
}

test('registers /consumers/<g>/ids/<id> as Kafka 0.8, claims every partition, commits the next offset to read, and a new member resumes there', async (t) => {
  if (!requirePeer(t, 'zookeeper')) return;
  await topic('zk-a', 3);
  const first = await produce('zk-a', 3, 4, 'one');
  const z = await consumer('ga', { autoOffsetReset: 'smallest' });
  assert.match(z.consumerId, /^ga_[^_]+-\d{13}-[0-9a-f]{8}$/);
  await z.subscribe(['zk-a']);
  const zk = await c!.zk();
  const reg = await zk.get(`/consumers/ga/ids/${z.consumerId}`);
  assert.notEqual(reg.stat.ephemeralOwner, '0', 'the ids node is ephemeral');
  const json = JSON.parse(reg.data.toString()) as Record<string, unknown>;
  assert.deepEqual(Object.keys(json).sort(), ['pattern', 'subscription', 'timestamp', 'version']);
  assert.deepEqual(ConsumerRegistrationZNode.decode(reg.data), { subscription: { 'zk-a': 1 }, pattern: 'static', timestampMs: Number(json.timestamp) });
  assert.deepEqual((await zk.children('/consumers/ga/owners/zk-a')).sort(), ['0', '1', '2']);
  for (const p of [0, 1, 2]) assert.equal(await zkData(`/consumers/ga/owners/zk-a/${p}`), `${z.consumerId}-0`);

  assert.deepEqual((await consume(z, first.length)).sort(), first.sort());
  await z.commitOffsets();
  for (const p of [0, 1, 2]) assert.equal(await zkData(`/consumers/ga/offsets/zk-a/${p}`), '4');
  await z.close();
  assert.equal(await zkData(`/consumers/ga/ids/${z.consumerId}`), undefined, 'close leaves the group');
  assert.deepEqual(await zk.children('/consumers/ga/owners/zk-a'), [], 'close releases the partitions');

  const second = await produce('zk-a', 3, 2, 'two');
  const again = await consumer('ga', { autoOffsetReset: 'smallest', autoCommitIntervalMs: 200 });
  await again.subscribe(['zk-a']);
  assert.deepEqual((await consume(again, second.length)).sort(), second.sort(), 'resumes from the stored offsets: nothing again, nothing skipped');
  assert.deepEqual(await again.poll(300), []);
  // auto.commit.interval.ms writes the new positions.
  await c!.waitFor('auto-commit of offset 6', 20_000, async () => (await zkData('/consumers/ga/offsets/zk-a/0')) === '6');
  await again.close();
});

test('auto.offset.reset: largest (default) skips what is there, smallest reads it; a stored offset out of range is reset', async (t) => {
  if (!requirePeer(t, 'zookeeper')) return;
  await topic('zk-r', 1);
  await produce('zk-r', 1, 3, 'old');
  const latest = await consumer('gr-largest');
  await latest.subscribe(['zk-r']);
  assert.deepEqual(await latest.poll(500), []);
  await latest.commitOffsets();
  assert.equal(await zkData('/consumers/gr-largest/offsets/zk-r/0'), '3');
  await latest.close();

  const zk = await c!.zk();
  await zk.ensurePath('/consumers/gr-range/offsets/zk-r');
  await zk.create('/consumers/gr-range/offsets/zk-r/0', '1000');
  const reset = await consumer('gr-range', { autoOffsetReset: 'smallest' });
  await reset.subscribe(['zk-r']);
  assert.deepEqual((await consume(reset, 3)).sort(), ['old-0-0', 'old-0-1', 'old-0-2']);
  await reset.close();
  assert.equal(await zkData('/consumers/gr-range/offsets/zk-r/0'), '3');
});

test("two members split the partitions by range; owner nodes never name two owners; the leaver's partitions move over", async (t) => {
  if (!requirePeer(t, 'zookeeper')) return;
  await topic('zk-two', 4);
  const sent = await produce('zk-two', 4, 3, 'x');
  const a = await consumer('g2', { autoOffsetReset: 'smallest', autoCommitIntervalMs: 300 });
  const b = await consumer('g2', { autoOffsetReset: 'smallest', autoCommitIntervalMs: 300 });
  const overlaps: string[] = [];
  const check = (): void => {
    const mine = new Set(a.assignment().map((x) => `${x.topic}-${x.partition}`));
    for (const x of b.assignment()) if (mine.has(`${x.topic}-${x.partition}`)) overlaps.push(`${x.topic}-${x.partition}`);
  };
  a.on('rebalanced', check);
  b.on('rebalanced', check);
  await a.subscribe(['zk-two']);
  await b.subscribe(['zk-two']);
  const seen = new Set<string>();
  const zk = await c!.zk();
  const ids = [a.consumerId, b.consumerId].sort();
  await c!.waitFor('the range assignment in the owner nodes', 30_000, async () => {
    for (const z of [a, b]) for (const r of await z.poll(100)) seen.add(r.value!.toString());
    check();
    const owners = await Promise.all([0, 1, 2, 3].map((p) => zkData(`/consumers/g2/owners/zk-two/${p}`)));
    return (
      owners.join(',') === [`${ids[0]}-0`, `${ids[0]}-0`, `${ids[1]}-0`, `${ids[1]}-0`].join(',') && a.assignment().length === 2 && b.assignment().length === 2
    );
  });
  assert.equal(new Set(await zk.children('/consumers/g2/ids')).size, 2);
  await c!.waitFor('every record', 30_000, async () => {
    for (const z of [a, b]) for (const r of await z.poll(100)) seen.add(r.value!.toString());
    return seen.size === sent.length;
  });
  await a.close();
  await c!.waitFor('b owning all four partitions', 30_000, async () => {
    await b.poll(100);
    return b.assignment().length === 4;
  });
  for (const p of [0, 1, 2, 3]) assert.equal(await zkData(`/consumers/g2/owners/zk-two/${p}`), `${b.consumerId}-0`);
  const more = await produce('zk-two', 4, 1, 'y');
  const got = new Set(await consume(b, more.length));
  for (const v of more) assert.ok(got.has(v), `b reads ${v}`);
  for (const v of got) assert.ok(v.startsWith('y-'), `nothing before the leaver's commits is read again (${v})`);
  assert.deepEqual(overlaps, [], 'no partition ever in both assignments');
  await b.close();
});

test('offsets.storage=kafka: dual commit writes both stores and resumes from the larger; without it only Kafka counts', async (t) => {
  if (!requirePeer(t, 'zookeeper')) return;
  await topic('zk-mig', 1);
  await produce('zk-mig', 1, 10, 'm');
  const zk = await c!.zk();
  // The group's history in ZooKeeper (pre-migration): offset 4.
  await zk.ensurePath('/consumers/gm/offsets/zk-mig');
  await zk.create('/consumers/gm/offsets/zk-mig/0', '4');
  const dual = await consumer('gm', { offsetsStorage: 'kafka', autoCommitEnable: false, maxPollRecords: 1 });
  await dual.subscribe(['zk-mig']);
  assert.equal(dual.position({ topic: 'zk-mig', partition: 0 }), 4n, "nothing in Kafka yet: ZooKeeper's 4");
  assert.deepEqual(await consume(dual, 2), ['m-0-4', 'm-0-5']);
  await dual.commitOffsets();
  assert.equal(await zkData('/consumers/gm/offsets/zk-mig/0'), '6');
  const kafkaOffset = async (): Promise<bigint | undefined> =>
    (await fetchCommittedOffsets(admin!.cluster, 'gm', [{ topic: 'zk-mig', partition: 0 }])).get('zk-mig')?.get(0)?.offset;
  assert.equal(await kafkaOffset(), 6n);
  await dual.close();

  // An old (ZooKeeper) member of the group moved further: the max of both stores wins.
  await zk.set('/consumers/gm/offsets/zk-mig/0', '8');
  const dual2 = await consumer('gm', { offsetsStorage: 'kafka', autoCommitEnable: false, maxPollRecords: 1 });
  await dual2.subscribe(['zk-mig']);
  assert.equal(dual2.position({ topic: 'zk-mig', partition: 0 }), 8n);
  await dual2.close();

  const kafkaOnly = await consumer('gm', { offsetsStorage: 'kafka', dualCommitEnabled: false, autoCommitEnable: false, maxPollRecords: 1 });
  await kafkaOnly.subscribe(['zk-mig']);
  assert.equal(kafkaOnly.position({ topic: 'zk-mig', partition: 0 }), 6n, "dual commit off: Kafka's offset only");
  await consume(kafkaOnly, 1);
  await kafkaOnly.commitOffsets();
  assert.equal(await kafkaOffset(), 7n);
  assert.equal(await zkData('/consumers/gm/offsets/zk-mig/0'), '8', 'ZooKeeper untouched');
  await kafkaOnly.close();
});

test('a ZooKeeper session expiry under a running consumer: it registers again, rebalances, and goes on reading', async (t) => {
  if (!requirePeer(t, 'zookeeper')) return;
  await topic('zk-exp', 2);
  const server = { port: c!.zkPort, connect: `127.0.0.1:${c!.zkPort}` } as ZooKeeperServer;
  const relay = await ZkRelay.start(server);
  t.after(() => relay.close());
  const z = await consumer('gx', { zookeeperConnect: relay.connect + c!.chroot, autoOffsetReset: 'smallest', autoCommitIntervalMs: 300 });
  await z.subscribe(['zk-exp']);
  const before = await produce('zk-exp', 2, 2, 'b');
  assert.deepEqual((await consume(z, before.length)).sort(), before.sort());
  const zk = await c!.zk();
  const oldSession = (await zk.get(`/consumers/gx/ids/${z.consumerId}`)).stat.ephemeralOwner;
  let rebalancedAfter = false;
  z.once('rebalanced', () => (rebalancedAfter = true));
  await expireSession(z.zk, server, relay);
  const after = await produce('zk-exp', 2, 2, 'a');
  const got = new Set<string>();
  await c!.waitFor('records after the expiry', 60_000, async () => {
    for (const r of await z.poll(200)) got.add(r.value!.toString());
    return after.every((v) => got.has(v));
  });
  assert.ok(rebalancedAfter, 'a rebalance followed the new session');
  const reg = await zk.get(`/consumers/gx/ids/${z.consumerId}`);
  assert.notEqual(reg.stat.ephemeralOwner, oldSession, 'registered again by the new session');
  assert.equal(reg.stat.ephemeralOwner, z.zk.sessionId());
  for (const p of [0, 1]) {
    const owner = await zk.get(`/consumers/gx/owners/zk-exp/${p}`);
    assert.equal(owner.data.toString(), `${z.consumerId}-0`);
    assert.equal(owner.stat.ephemeralOwner, z.zk.sessionId(), 'claimed by the new session');
  }
  for (const v of got) assert.ok(v.startsWith('a-') || v.startsWith('b-'));
  await z.close();
});

test('a partition added to the topic (a /brokers/topics/<t> change) is claimed and read; a topic created after subscribing too', async (t) => {
  if (!requirePeer(t, 'zookeeper')) return;
  await topic('zk-grow', 1);
  const z = await consumer('gg', { autoOffsetReset: 'smallest' });
  await z.subscribe({ 'zk-grow': 1, 'zk-later': 1 });
  assert.deepEqual(
    z.assignment().map((a) => `${a.topic}-${a.partition}`),
    ['zk-grow-0'],
  );
  const res = await admin!.createPartitions([{ name: 'zk-grow', count: 2 }]);
  assert.equal(res.get('zk-grow'), null);
  await c!.waitFor('zk-grow-1 claimed', 30_000, async () => {
    await z.poll(100);
    return z.assignment().some((a) => a.topic === 'zk-grow' && a.partition === 1);
  });
  await topic('zk-later', 1);
  await c!.waitFor('zk-later-0 claimed', 30_000, async () => {
    await z.poll(100);
    return z.assignment().some((a) => a.topic === 'zk-later');
  });
  await c!.waitFor('zk-grow-1 readable', 30_000, async () => {
    const md = await admin!.cluster.refreshMetadata(['zk-grow']);
    return md.topics.get('zk-grow')?.partitions.every((p) => p.leader >= 0) === true;
  });
  await producer!.send({ topic: 'zk-grow', partition: 1, value: Buffer.from('new-partition') });
  await producer!.send({ topic: 'zk-later', partition: 0, value: Buffer.from('new-topic') });
  assert.deepEqual((await consume(z, 2)).sort(), ['new-partition', 'new-topic']);
  assert.equal(await zkData(`/consumers/gg/owners/zk-grow/1`), `${z.consumerId}-0`);
  await z.close();
});

test('a partition still owned by someone else: the claim is retried rebalance.max.retries times, then fails without taking it; it succeeds once the owner lets go', async (t) => {
  if (!requirePeer(t, 'zookeeper')) return;
  await topic('zk-held', 2);
  const zk = await c!.zk();
  await zk.ensurePath('/consumers/gh/owners/zk-held');
  await zk.create('/consumers/gh/owners/zk-held/1', 'gh_other-1-00000000-0', 'ephemeral');
  const z = await consumer('gh', { rebalanceMaxRetries: 3, rebalanceBackoffMs: 200 });
  const started = Date.now();
  await assert.rejects(z.subscribe(['zk-held']), { name: 'ConsumerRebalanceFailedError', message: `${z.consumerId} can't rebalance after 3 retries` });
  assert.ok(Date.now() - started >= 3 * 200, 'backed off between attempts');
  assert.equal(await zkData('/consumers/gh/owners/zk-held/1'), 'gh_other-1-00000000-0', "the other owner's node is untouched");
  assert.equal(await zkData('/consumers/gh/owners/zk-held/0'), undefined, 'what it claimed in the failed attempt is given back');
  await z.close();

  const patient = await consumer('gh', { rebalanceMaxRetries: 50, rebalanceBackoffMs: 200 });
  const subscribing = patient.subscribe(['zk-held']);
  await c!.waitFor(
    'a retried claim',
    10_000,
    async () => (await zk.exists('/consumers/gh/ids')) !== null && (await zk.children('/consumers/gh/ids')).length === 1,
  );
  await zk.delete('/consumers/gh/owners/zk-held/1');
  await subscribing;
  assert.deepEqual(
    patient
      .assignment()
      .map((a) => a.partition)
      .sort(),
    [0, 1],
  );
  await patient.close();
});

test('a rebalance commits the positions before releasing: the member taking a partition over reads nothing again', async (t) => {
  if (!requirePeer(t, 'zookeeper')) return;
  await topic('zk-hand', 2);
  const sent = await produce('zk-hand', 2, 3, 'h');
  // auto.commit.interval.ms is the default 60 s: only the rebalance's commit can save a's place.
  const a = await consumer('gho', { autoOffsetReset: 'smallest' });
  await a.subscribe(['zk-hand']);
  assert.deepEqual((await consume(a, sent.length)).sort(), sent.sort());
  assert.equal(await zkData('/consumers/gho/offsets/zk-hand/0'), undefined, 'nothing committed yet');
  const b = await consumer('gho', { autoOffsetReset: 'smallest' });
  await b.subscribe(['zk-hand']);
  await c!.waitFor('one partition each', 30_000, async () => {
    await a.poll(100);
    return a.assignment().length === 1 && b.assignment().length === 1;
  });
  for (const p of [0, 1]) assert.equal(await zkData(`/consumers/gho/offsets/zk-hand/${p}`), '3');
  const taken = b.assignment()[0]!;
  assert.equal(b.position(taken), 3n);
  assert.deepEqual(await b.poll(500), [], 'b reads nothing a already handed out');
  await b.close();
  await a.close();
});
