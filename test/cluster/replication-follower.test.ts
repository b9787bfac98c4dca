/**
 * Issue 12, follower side on a real two-broker cluster (ZooKeeper, brokers as child processes):
 * records produced to a partition's leader appear byte for byte in the follower's log directory,
 * segment files equal, and kafka-dump-log.sh prints the same batches (offsets, leader epochs,
 * CRCs) for both. Then the leader is killed: the follower becomes leader with the records.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { Cluster } from '../helpers/cluster.js';
import { requirePeer } from '../helpers/peers.js';
import { Producer } from '../../src/client/index.js';
import { runCli } from '../cli/helpers.js';
import { kafkaTopics, waitForTopic, zkTopic } from './cluster-clients.js';

let c: Cluster | undefined;
before(async () => {
  if (Cluster.available()) c = await Cluster.start({ brokers: 2, props: { 'replica.fetch.wait.max.ms': '200', 'replica.fetch.backoff.ms': '200' } });
});
after(() => c?.stop());

function segments(dir: string): string[] {
  return existsSync(dir)
    ? readdirSync(dir)
        .filter((n) => n.endsWith('.log'))
        .sort()
    : [];
}

/** kafka-dump-log.sh (the project's, through tsx). */
function dumpLog(file: string): ReturnType<typeof runCli> {
  return runCli('kafka-dump-log', ['--files', file], { timeoutMs: 60_000 });
}

test("produce to the leader appears byte for byte in the follower's log directory", async (t) => {
  if (!requirePeer(t, 'zookeeper')) return;
  const cluster = c!;
  const created = await kafkaTopics('--create', '--topic', 'replicated', '--zookeeper', cluster.zkConnect, '--partitions', '2', '--replication-factor', '2');
  assert.equal(created.code, 0, created.stderr);
  const topic = await waitForTopic(cluster, 'replicated');
  const producer = new Producer({ bootstrapServers: cluster.bootstrap(), acks: 1, compression: 'lz4', lingerMs: 5 });
  try {
    for (let i = 0; i < 2000; i++) await producer.send({ topic: 'replicated', partition: i % 2, key: `k${i}`, value: `value-${i}-${'y'.repeat(i % 50)}` });
    await producer.flush();
  } finally {
    await producer.close();
  }
  for (const p of topic.partitions) {
    const leaderDir = join(cluster.broker(p.leader).dir, `replicated-${p.partition}`);
    const followerId = p.replicas.find((r) => r !== p.leader)!;
    const followerDir = join(cluster.broker(followerId).dir, `replicated-${p.partition}`);
    const leaderBytes = (): Buffer => Buffer.concat(segments(leaderDir).map((s) => readFileSync(join(leaderDir, s))));
    await cluster.waitFor(`partition ${p.partition} copied to broker ${followerId}`, 60_000, () => {
      const l = leaderBytes();
      const f = Buffer.concat(segments(followerDir).map((s) => readFileSync(join(followerDir, s))));
      return l.length > 0 && f.equals(l);
    });
    assert.deepEqual(segments(followerDir), segments(leaderDir), 'same segment files');
    const seg = segments(leaderDir)[0]!;
    const [dl, df] = [await dumpLog(join(leaderDir, seg)), await dumpLog(join(followerDir, seg))];
    assert.equal(dl.code, 0, dl.stderr);
    // Same batches (offsets, epochs, CRCs...); only the file name in the header differs.
    const body = (s: string): string =>
      s
        .split('\n')
        .filter((l) => !l.startsWith('Dumping'))
        .join('\n');
    assert.ok(body(dl.stdout).includes('baseOffset: 0'), dl.stdout.slice(0, 400));
    assert.equal(body(df.stdout), body(dl.stdout));
    t.diagnostic(`partition ${p.partition}: ${leaderBytes().length} bytes identical on brokers ${p.leader} and ${followerId}`);
  }
});

test("the follower's copy survives the leader: kill -9 it, the follower leads with every record", async (t) => {
  if (!requirePeer(t, 'zookeeper')) return;
  const cluster = c!;
  const before = (await zkTopic(cluster, 'replicated'))!;
  const p0 = before.partitions[0]!;
  const dead = p0.leader;
  const survivor = p0.replicas.find((r) => r !== dead)!;
  const leaderDir = join(cluster.broker(dead).dir, 'replicated-0');
  const expected = Buffer.concat(segments(leaderDir).map((s) => readFileSync(join(leaderDir, s))));
  await cluster.killAndExpire(dead); // its session closed at once, not after the timeout
  await cluster.waitFor('the survivor leads partition 0', 60_000, async () => (await zkTopic(cluster, 'replicated'))?.partitions[0]?.leader === survivor);
  const dir = join(cluster.broker(survivor).dir, 'replicated-0');
  const got = Buffer.concat(segments(dir).map((s) => readFileSync(join(dir, s))));
  assert.ok(got.subarray(0, expected.length).equals(expected), "the new leader holds the old leader's batches");
  // It comes back as a follower of the new leader and copies what was written since.
  await cluster.broker(dead).restart();
  await cluster.waitForRegistered();
  const producer = new Producer({ bootstrapServers: cluster.bootstrap(), acks: 1, lingerMs: 5 });
  try {
    for (let i = 0; i < 300; i++) await producer.send({ topic: 'replicated', partition: 0, key: `after${i}`, value: `after-restart-${i}` });
    await producer.flush();
  } finally {
    await producer.close();
  }
  const rejoined = join(cluster.broker(dead).dir, 'replicated-0');
  await cluster.waitFor(`broker ${dead} caught up with leader ${survivor}`, 60_000, () => {
    const l = Buffer.concat(segments(dir).map((s) => readFileSync(join(dir, s))));
    const f = Buffer.concat(segments(rejoined).map((s) => readFileSync(join(rejoined, s))));
    return l.length > expected.length && f.equals(l);
  });
});

/**
 * The returning former leader's unreplicated tail must not survive (Kafka's leader epochs): the
 * follower is frozen while the leader takes more records (acks=1), the leader is killed, the
 * follower leads and takes even more, and the old leader returns. Its log must end up equal to
 * the new leader's: the leader answers diverging_epoch (Fetch v12+) and the follower truncates.
 */
test("a returning former leader drops its unreplicated tail and copies the new leader's records", async (t) => {
  if (!requirePeer(t, 'zookeeper')) return;
  const cluster = c!;
  const created = await kafkaTopics('--create', '--topic', 'diverge', '--zookeeper', cluster.zkConnect, '--partitions', '1', '--replication-factor', '2');
  assert.equal(created.code, 0, created.stderr);
  const topic = await waitForTopic(cluster, 'diverge');
  const oldLeader = topic.partitions[0]!.leader;
  const follower = topic.partitions[0]!.replicas.find((r) => r !== oldLeader)!;
  const send = async (bootstrap: string, n: number, tag: string): Promise<void> => {
    // No telemetry: its requests go to any broker, the frozen one too, and close() waits for them,
    // which can hold the follower frozen past its ZooKeeper session (it then leaves the ISR).
    const producer = new Producer({ bootstrapServers: bootstrap, acks: 1, lingerMs: 5, enableMetricsPush: false });
    try {
      for (let i = 0; i < n; i++) void producer.send({ topic: 'diverge', partition: 0, key: `${tag}${i}`, value: `${tag}-${i}` });
      await producer.flush();
    } finally {
      await producer.close();
    }
  };
  await send(cluster.broker(oldLeader).bootstrap, 100, 'both');
  const oldDir = join(cluster.broker(oldLeader).dir, 'diverge-0');
  const newDir = join(cluster.broker(follower).dir, 'diverge-0');
  const bytes = (d: string): Buffer => Buffer.concat(segments(d).map((s) => readFileSync(join(d, s))));
  await cluster.waitFor('the follower has the first records', 30_000, () => bytes(newDir).equals(bytes(oldDir)) && bytes(oldDir).length > 0);
  // Frozen follower: at most the fetch already answered reaches it; the rest stays on the leader only.
  cluster.broker(follower).pause();
  try {
    await send(cluster.broker(oldLeader).bootstrap, 1, 'maybe');
    await send(cluster.broker(oldLeader).bootstrap, 200, 'lost');
    await cluster.broker(oldLeader).kill();
  } finally {
    cluster.broker(follower).resume();
  }
  await cluster.expireDead(oldLeader); // after the thaw: the freeze stays as short as it was
  await cluster.waitFor('the follower leads', 60_000, async () => (await zkTopic(cluster, 'diverge'))?.partitions[0]?.leader === follower);
  await send(cluster.broker(follower).bootstrap, 600, 'new');
  await cluster.broker(oldLeader).restart();
  await cluster.waitForRegistered();
  await cluster.waitFor('the old leader matches the new one', 60_000, () => {
    const f = bytes(oldDir);
    return f.length > 0 && f.equals(bytes(newDir));
  });
  assert.ok(!bytes(oldDir).includes(Buffer.from('lost-199')), 'the unreplicated tail is gone');
});
