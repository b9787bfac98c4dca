/**
 * The seed's session on a three-broker cluster, as Kafka's ZooKeeper mode answers it: the topic
 * made with `kafka-topics.sh --zookeeper`, its znodes, every client seeing two replicas per
 * partition from any broker, `kafka-topics --describe`, the ZooKeeper tree as zkCli shows it,
 * produce/consume in a group and its commits read back from __consumer_offsets with the classic
 * formatter, and FindCoordinator naming the same coordinator from every broker.
 * The tests run in order on one cluster (each builds on the topic the first one made).
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Cluster } from '../helpers/cluster.js';
import { requirePeer } from '../helpers/peers.js';
import { run } from '../helpers/run.js';
import { RawClient } from '../helpers/raw-client.js';
import { FindCoordinatorRequestCodec, FindCoordinatorResponseCodec } from '../../src/protocol/messages/index.js';
import { LineCollector, spawnCli } from '../cli/helpers.js';
import {
  confluentMetadata,
  kafkaPythonMetadata,
  kafkaTopics,
  kafkajsMetadata,
  kcatMetadata,
  offsetsPartitionFor,
  waitForTopic,
  type MetadataView,
} from './cluster-clients.js';

const OFFSETS_PARTITIONS = 10; // the harness's offsets.topic.num.partitions
const OFFSET_LINE = /^\[(console-consumer-\d{5}),bigdata,([01])\]::\[OffsetMetadata\[(\d+),NO_METADATA\],CommitTime (\d+),ExpirationTime (\d+)\]$/;
const MESSAGES = 10;

let c: Cluster | undefined;
let tmp: string | undefined;
before(async () => {
  if (Cluster.available()) c = await Cluster.start();
  tmp = await mkdtemp(join(tmpdir(), 'fjord-cluster-seed-'));
});
after(async () => {
  await c?.stop();
  if (tmp) await rm(tmp, { recursive: true, force: true });
});

test('kafka-topics.sh --create --zookeeper: Created topic "bigdata".; the controller writes both partition states', async (t) => {
  if (!requirePeer(t, 'zookeeper')) return;
  const r = await kafkaTopics('--create', '--topic', 'bigdata', '--zookeeper', c!.zkConnect, '--partitions', '2', '--replication-factor', '2');
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stdout, 'Created topic "bigdata".\n');
  const topic = await waitForTopic(c!, 'bigdata');
  const ctl = (await c!.controller())!;
  assert.equal(topic.partitions.length, 2);
  for (const p of topic.partitions) {
    assert.equal(new Set(p.replicas).size, 2, `partition ${p.partition}: two distinct replicas`);
    for (const r of p.replicas) assert.ok([0, 1, 2].includes(r));
    // A new partition's leader is its first (preferred) live replica, every replica in the ISR.
    assert.equal(p.leader, p.replicas[0]);
    assert.deepEqual(p.isr, p.replicas);
    assert.deepEqual(topic.epochs.get(p.partition), { leaderEpoch: 0, controllerEpoch: ctl.epoch });
  }
  assert.match(topic.topicId, /^[A-Za-z0-9_-]{22}$/);
  assert.deepEqual(await c!.zkCliLs('/brokers/topics/bigdata/partitions'), ['0', '1']);
});

test('kcat, confluent-kafka, kafka-python and kafkajs see bigdata with two replicas per partition from each broker', async (t) => {
  if (!requirePeer(t, 'zookeeper') || !requirePeer(t, 'kcat') || !requirePeer(t, 'python3-confluent-kafka') || !requirePeer(t, 'python3-kafka')) return;
  const expected: MetadataView = { brokers: [0, 1, 2], partitions: (await waitForTopic(c!, 'bigdata', 10_000)).partitions };
  // UpdateMetadata reaches the brokers a moment after the states are written.
  for (const b of c!.brokers) {
    await c!.waitFor(
      `broker ${b.id}'s metadata for bigdata`,
      20_000,
      async () => JSON.stringify(await kafkajsMetadata(b.bootstrap, 'bigdata')) === JSON.stringify(expected),
    );
  }
  const clients = { kcat: kcatMetadata, 'confluent-kafka': confluentMetadata, 'kafka-python': kafkaPythonMetadata, kafkajs: kafkajsMetadata };
  for (const b of c!.brokers) {
    for (const [name, describe] of Object.entries(clients)) {
      assert.deepEqual(await describe(b.bootstrap, 'bigdata'), expected, `${name} bootstrapping from broker ${b.id}`);
    }
  }
});

test("zkCli: ls / has the seed's nodes (but kafka-manager), ls /brokers is [ids, seqid, topics]", async (t) => {
  if (!requirePeer(t, 'zookeeper')) return;
  const root = await c!.zkCliLs('/');
  // Newer Kafka adds nodes (log_dir_event_notification, feature); the seed's must all be there.
  for (const n of [
    'admin',
    'brokers',
    'cluster',
    'config',
    'consumers',
    'controller',
    'controller_epoch',
    'isr_change_notification',
    'latest_producer_id_block',
    'zookeeper',
  ]) {
    assert.ok(root.includes(n), `ls / lacks ${n}: [${root.join(', ')}]`);
  }
  assert.deepEqual(await c!.zkCliLs('/brokers'), ['ids', 'seqid', 'topics']);
  assert.deepEqual(await c!.zkCliLs('/brokers/ids'), ['0', '1', '2']);
});

test('kafka-topics --describe --bootstrap-server: Leader, Replicas, Isr as in ZooKeeper; nothing under-replicated or unavailable', async (t) => {
  if (!requirePeer(t, 'zookeeper')) return;
  const topic = await waitForTopic(c!, 'bigdata', 10_000);
  const r = await kafkaTopics('--describe', '--bootstrap-server', c!.bootstrap(), '--topic', 'bigdata');
  assert.equal(r.code, 0, r.stderr);
  const lines = r.stdout.trimEnd().split('\n');
  assert.match(lines[0]!, new RegExp(`^Topic: bigdata\\tTopicId: ${topic.topicId}\\tPartitionCount: 2\\tReplicationFactor: 2\\tConfigs: `));
  assert.deepEqual(
    lines.slice(1),
    topic.partitions.map((p) => `\tTopic: bigdata\tPartition: ${p.partition}\tLeader: ${p.leader}\tReplicas: ${p.replicas.join(',')}\tIsr: ${p.isr.join(',')}`),
  );
  for (const flag of ['--under-replicated-partitions', '--unavailable-partitions']) {
    const f = await kafkaTopics('--describe', '--bootstrap-server', c!.bootstrap(), flag);
    assert.equal(f.code, 0, f.stderr);
    assert.equal(f.stdout, '', `${flag} on a healthy cluster`);
  }
});

test('produce with kcat, consume in a console-consumer group, read the commits from __consumer_offsets', async (t) => {
  if (!requirePeer(t, 'zookeeper') || !requirePeer(t, 'kcat')) return;
  const input = Array.from({ length: MESSAGES }, (_, i) => `hello-${i}`).join('\n') + '\n';
  const produced = await run('kcat', ['-P', '-b', c!.bootstrap(), '-t', 'bigdata', '-X', 'acks=1'], { input, timeoutMs: 30_000 });
  assert.equal(produced.code, 0, produced.stderr);

  const children: ReturnType<typeof spawnCli>[] = [];
  try {
    // As the seed: --bootstrap-server of one broker, the group is console-consumer-NNNNN.
    const consumer = spawnCli('kafka-console-consumer', ['--bootstrap-server', c!.broker(0).bootstrap, '--topic', 'bigdata', '--from-beginning']);
    children.push(consumer);
    const got = new LineCollector(consumer);
    await got.waitFor((l) => l.length >= MESSAGES, 60_000, `${MESSAGES} messages`);
    assert.deepEqual([...got.lines].sort(), input.trimEnd().split('\n').sort());

    const props = join(tmp!, 'consumer.properties');
    await writeFile(props, 'exclude.internal.topics=false\n');
    const reader = spawnCli('kafka-console-consumer', [
      '--topic',
      '__consumer_offsets',
      '--bootstrap-server',
      c!.broker(1).bootstrap,
      '--formatter',
      'kafka.coordinator.group.GroupMetadataManager$OffsetsMessageFormatter',
      '--consumer.config',
      props,
      '--from-beginning',
    ]);
    children.push(reader);
    const commits = new LineCollector(reader);
    // Auto-commits every 5 s, one line per partition; wait for a round covering every message.
    const latest = (lines: string[]): Map<number, number> => {
      const m = new Map<number, number>();
      for (const l of lines) {
        const x = OFFSET_LINE.exec(l);
        if (x) m.set(Number(x[2]), Number(x[3]));
      }
      return m;
    };
    await commits.waitFor((l) => [...latest(l).values()].reduce((a, b) => a + b, 0) === MESSAGES, 60_000, `commits covering ${MESSAGES} messages`);
    const parsed = commits.lines.map((l) => OFFSET_LINE.exec(l)).filter((x) => x !== null);
    assert.equal(new Set(parsed.map((x) => x[1])).size, 1, 'one console-consumer group');
    for (const x of parsed) assert.ok(Number(x[5]) > Number(x[4]), 'ExpirationTime after CommitTime');
  } finally {
    for (const ch of children) if (ch.exitCode === null) ch.kill('SIGKILL');
  }
  // Beside the seed's listing, Fjord's offset history topic (issue 25), made by the group's commits.
  assert.deepEqual(await c!.zkCliLs('/brokers/topics'), ['__consumer_offsets', '__consumer_offsets_history', 'bigdata']);
});

test("FindCoordinator from every broker names the leader of the group's __consumer_offsets partition", async (t) => {
  if (!requirePeer(t, 'zookeeper')) return;
  const offsets = await waitForTopic(c!, '__consumer_offsets');
  assert.equal(offsets.partitions.length, OFFSETS_PARTITIONS);
  for (const p of offsets.partitions) assert.equal(new Set(p.replicas).size, 3, `__consumer_offsets-${p.partition}: offsets.topic.replication.factor 3`);
  const groups = ['seed-group-a', 'seed-group-b', 'seed-group-c', 'seed-group-d'];
  const clients = await Promise.all(c!.brokers.map((b) => RawClient.connect(b.port)));
  try {
    for (const group of groups) {
      const leader = offsets.partitions[offsetsPartitionFor(group, OFFSETS_PARTITIONS)]!.leader;
      for (const [i, client] of clients.entries()) {
        const res = await c!.waitFor(`FindCoordinator(${group}) from broker ${i}`, 20_000, async () => {
          const r = await client.request(10, FindCoordinatorRequestCodec, FindCoordinatorResponseCodec, 1, { key: group, keyType: 0 });
          return r.errorCode === 0 ? r : undefined;
        });
        assert.deepEqual(
          { nodeId: res.nodeId, host: res.host, port: res.port },
          { nodeId: leader, host: '127.0.0.1', port: c!.broker(leader).port },
          `${group} asked broker ${i}`,
        );
      }
    }
  } finally {
    for (const cl of clients) cl.close();
  }
});
