/**
 * A consumer group survives the loss of its coordinator (issue 12, "coordinators move with
 * leadership"), with real clients on three broker processes and real ZooKeeper:
 * `offsets.topic.replication.factor=3`; a topic with replication factor 3 and
 * min.insync.replicas=2 holds 3,000 numbered records (acks=all). Two confluent-kafka consumers,
 * in groups G1 and G2 (chosen to share one `__consumer_offsets` partition), each consume part of
 * it, commit synchronously and are killed -9. Then the broker leading that offsets partition
 * (FindCoordinator agrees with ZooKeeper) is killed -9. A new confluent-kafka consumer in G1 and
 * a kafkajs consumer in G2 must get past NOT_COORDINATOR / COORDINATOR_LOAD_IN_PROGRESS, find the
 * new coordinator and resume exactly at the committed offsets: every record after the commit
 * once, nothing before it. kafka-consumer-groups.sh --describe shows the committed offsets after
 * the failover, and the killed broker, restarted, rejoins the ISR of `__consumer_offsets`.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import kafkajs from 'kafkajs';
import { Cluster, SESSION_TIMEOUT_MS } from '../helpers/cluster.js';
import { PYTHON, requirePeer } from '../helpers/peers.js';
import { run } from '../helpers/run.js';
import { runCli } from '../cli/helpers.js';
import { kafkaTopics, offsetsPartitionFor, waitForTopic, zkTopic } from './cluster-clients.js';
import { Connection } from '../../src/client/connection.js';
import { Api } from '../../src/client/apis.js';
import { ErrorCode } from '../../src/protocol/errors.js';
import { Admin } from '../../src/client/admin.js';
import { moveLine, readGroupHistory } from '../coordinator/offset-history-read.js';

const TOPIC = 'gcf';
const PARTITIONS = 3;
const N = 3000;
const OFFSETS_PARTITIONS = 10; // test/helpers/cluster.ts sets offsets.topic.num.partitions=10
const G1 = 'gcf-confluent';
/** A second group on G1's offsets partition: the same failover moves both. */
const G2 = (() => {
  const want = offsetsPartitionFor(G1, OFFSETS_PARTITIONS);
  for (let i = 0; ; i++) if (offsetsPartitionFor(`gcf-kafkajs-${i}`, OFFSETS_PARTITIONS) === want) return `gcf-kafkajs-${i}`;
})();
const NOTICE_MS = SESSION_TIMEOUT_MS * 5;

let c: Cluster | undefined;
before(async () => {
  if (Cluster.available()) c = await Cluster.start({ props: { 'offsets.topic.replication.factor': '3', 'group.initial.rebalance.delay.ms': '0' } });
});
after(() => c?.stop());

const PRODUCER = `
import sys
from confluent_kafka import Producer
p = Producer({'bootstrap.servers': sys.argv[1], 'acks': 'all', 'enable.idempotence': True, 'linger.ms': 5})
topic, n, parts = sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
failed = []
def report(err, msg):
    if err is not None: failed.append(str(err))
for i in range(n):
    p.produce(topic, value=('n%d' % i).encode(), partition=i % parts, on_delivery=report)
    p.poll(0)
left = p.flush(60)
print('left %d failed %d %s' % (left, len(failed), failed[:3]))
sys.exit(0 if left == 0 and not failed else 1)
`;

/** Consumes at least argv[4] records, commits exactly what it consumed (synchronously), says so, then keeps polling without committing until killed. */
const PARTIAL_CONSUMER = `
import sys, json
from confluent_kafka import Consumer, TopicPartition
bs, topic, group, want, strategy = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5]
c = Consumer({'bootstrap.servers': bs, 'group.id': group, 'enable.auto.commit': False, 'auto.offset.reset': 'earliest',
              'session.timeout.ms': 6000, 'heartbeat.interval.ms': 1000, 'max.poll.interval.ms': 60000,
              'partition.assignment.strategy': strategy})
c.subscribe([topic])
nxt = {}
n = 0
while n < want:
    for m in c.consume(100, 0.5):
        if m.error() is not None:
            continue
        nxt[m.partition()] = m.offset() + 1
        n += 1
res = c.commit(offsets=[TopicPartition(topic, p, o) for p, o in nxt.items()], asynchronous=False)
errs = [str(tp.error) for tp in res if tp.error is not None]
if errs:
    print('ERROR ' + ';'.join(errs), flush=True)
    sys.exit(1)
print('COMMITTED ' + json.dumps({str(tp.partition): tp.offset for tp in res}), flush=True)
while True:
    c.poll(0.2)
`;

/**
 * Resumes in the group, prints every record, stops after argv[4] records. It commits nothing, so
 * kafka-consumer-groups, run meanwhile, must show the first consumer's commit.
 */
const RESUMING_CONSUMER = `
import sys
from confluent_kafka import Consumer
bs, topic, group, want = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
c = Consumer({'bootstrap.servers': bs, 'group.id': group, 'enable.auto.commit': False, 'auto.offset.reset': 'earliest',
              'session.timeout.ms': 6000, 'heartbeat.interval.ms': 1000, 'debug': 'cgrp'})
c.subscribe([topic])
n = 0
while n < want:
    for m in c.consume(200, 0.5):
        if m.error() is not None:
            print('E %s' % m.error(), flush=True)
            continue
        print('M %d %d %s' % (m.partition(), m.offset(), m.value().decode()), flush=True)
        n += 1
c.close()
print('DONE', flush=True)
`;

interface Child {
  child: ChildProcess;
  lines: string[];
  /** Lines of its stderr naming a coordinator error (librdkafka's cgrp debug log). */
  coordinatorErrors: string[];
  stderrTail: () => string;
}

function spawnPython(script: string, args: string[]): Child {
  const child = spawn(PYTHON, ['-c', script, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  const out: Child = { child, lines: [], coordinatorErrors: [], stderrTail: () => tail };
  let tail = '';
  let buf = '';
  child.stdout!.on('data', (d: Buffer) => {
    buf += d.toString();
    const parts = buf.split('\n');
    buf = parts.pop()!;
    out.lines.push(...parts.filter((l) => l !== ''));
  });
  let ebuf = '';
  child.stderr!.on('data', (d: Buffer) => {
    tail = (tail + d.toString()).slice(-3000);
    ebuf += d.toString();
    const parts = ebuf.split('\n');
    ebuf = parts.pop()!;
    for (const l of parts)
      if (/not coordinator|coordinator load in progress|NOT_COORDINATOR|COORDINATOR_LOAD_IN_PROGRESS/i.test(l)) out.coordinatorErrors.push(l);
  });
  return out;
}

async function killChild(ch: Child): Promise<void> {
  const { child } = ch;
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = once(child, 'exit');
  child.kill('SIGKILL');
  await exited;
}

async function findCoordinator(port: number, group: string): Promise<{ errorCode: number; nodeId: number }> {
  const conn = await Connection.connect('127.0.0.1', port, { clientId: 'gcf-test', connectTimeoutMs: 10_000, requestTimeoutMs: 30_000 });
  try {
    const r = await conn.send(Api.FindCoordinator, { key: group, keyType: 0 }, { version: 2 });
    return { errorCode: r.errorCode, nodeId: r.nodeId };
  } finally {
    conn.close();
  }
}

/** Rows of kafka-consumer-groups --describe for the topic: partition -> [CURRENT-OFFSET, LOG-END-OFFSET]. */
function describedOffsets(stdout: string, group: string): Map<number, [string, string]> {
  const rows = new Map<number, [string, string]>();
  for (const line of stdout.split('\n')) {
    const f = line.trim().split(/\s+/);
    if (f[0] === group && f[1] === TOPIC) rows.set(Number(f[2]), [f[3]!, f[4]!]);
  }
  return rows;
}

test('a group keeps its committed offsets across kill -9 of its coordinator; new confluent-kafka and kafkajs consumers resume exactly there', async (t) => {
  if (!requirePeer(t, 'zookeeper') || !requirePeer(t, 'python3-confluent-kafka')) return;
  const cluster = c!;
  await cluster.waitForRegistered([0, 1, 2]);
  const created = await kafkaTopics(
    '--create',
    '--topic',
    TOPIC,
    '--bootstrap-server',
    cluster.bootstrap(),
    '--partitions',
    String(PARTITIONS),
    '--replication-factor',
    '3',
    '--config',
    'min.insync.replicas=2',
  );
  assert.equal(created.code, 0, created.stderr);
  await waitForTopic(cluster, TOPIC);
  await cluster.waitFor(`every ISR of ${TOPIC} whole`, 30_000, async () => (await zkTopic(cluster, TOPIC))?.partitions.every((p) => p.isr.length === 3));

  const produced = await run(PYTHON, ['-c', PRODUCER, cluster.bootstrap(), TOPIC, String(N), String(PARTITIONS)], { timeoutMs: 120_000 });
  assert.equal(produced.code, 0, `${produced.stdout} ${produced.stderr.slice(-1000)}`);
  const perPartition = Array.from({ length: PARTITIONS }, (_, p) => Math.floor(N / PARTITIONS) + (p < N % PARTITIONS ? 1 : 0));

  // Phase 1: each group consumes part of the topic, commits synchronously, and dies (kill -9: no LeaveGroup).
  const committed = new Map<string, Record<string, number>>();
  // G2's first consumer uses round robin, which the kafkajs consumer resuming G2 speaks (below).
  for (const [group, want, strategy] of [
    [G1, 1000, 'range,roundrobin'],
    [G2, 1700, 'roundrobin'],
  ] as const) {
    const consumer = spawnPython(PARTIAL_CONSUMER, [cluster.bootstrap(), TOPIC, group, String(want), strategy]);
    try {
      const line = await cluster.waitFor(`${group}'s synchronous commit`, 120_000, () => {
        if (consumer.child.exitCode !== null)
          throw new Error(`consumer exited ${consumer.child.exitCode}: ${consumer.lines.join('\n')} ${consumer.stderrTail()}`);
        return consumer.lines.find((l) => l.startsWith('COMMITTED ') || l.startsWith('ERROR '));
      });
      assert.match(line, /^COMMITTED /, line);
      committed.set(group, JSON.parse(line.slice('COMMITTED '.length)) as Record<string, number>);
    } finally {
      await killChild(consumer);
    }
  }
  const startOf = (group: string, p: number): number => committed.get(group)![String(p)] ?? 0;
  t.diagnostic(`committed before the failover: ${G1} ${JSON.stringify(committed.get(G1))}, ${G2} ${JSON.stringify(committed.get(G2))}`);

  // The coordinator: the leader of the groups' __consumer_offsets partition; FindCoordinator agrees on every broker.
  const offsetsPartition = offsetsPartitionFor(G1, OFFSETS_PARTITIONS);
  const offsetsTopic = await waitForTopic(cluster, '__consumer_offsets');
  assert.equal(offsetsTopic.partitions.length, OFFSETS_PARTITIONS);
  assert.ok(
    offsetsTopic.partitions.every((p) => p.replicas.length === 3),
    'offsets.topic.replication.factor=3',
  );
  const coordinator = offsetsTopic.partitions[offsetsPartition]!.leader;
  for (const b of cluster.brokers) {
    for (const g of [G1, G2])
      assert.deepEqual(await findCoordinator(b.port, g), { errorCode: ErrorCode.NONE, nodeId: coordinator }, `FindCoordinator(${g}) on broker ${b.id}`);
  }
  await cluster.waitFor(
    `__consumer_offsets-${offsetsPartition}'s ISR whole`,
    30_000,
    async () => (await zkTopic(cluster, '__consumer_offsets'))?.partitions[offsetsPartition]?.isr.length === 3,
  );

  const killedAt = Date.now();
  await cluster.broker(coordinator).kill();
  const live = cluster.brokers.filter((b) => b.id !== coordinator).map((b) => b.id);
  const bootstrap = cluster.bootstrap(live);

  // Phase 2, started at once (the dead broker is still named coordinator until its session expires).
  const left1 = perPartition.reduce((s, n, p) => s + n - startOf(G1, p), 0);
  const left2 = perPartition.reduce((s, n, p) => s + n - startOf(G2, p), 0);
  const resumed = spawnPython(RESUMING_CONSUMER, [bootstrap, TOPIC, G1, String(left1)]);
  const seen2: { partition: number; offset: number; value: string }[] = [];
  const kafka = new kafkajs.Kafka({
    brokers: bootstrap.split(','),
    clientId: 'gcf-kafkajs',
    logLevel: kafkajs.logLevel.NOTHING,
    retry: { retries: 50, initialRetryTime: 200, maxRetryTime: 2000 },
  });
  // The dead librdkafka member stays in the group until its session expires on the new
  // coordinator, and the group record keeps only the protocol the group chose (as Kafka's), so
  // until then a joining member must speak that protocol (else, as in Kafka,
  // INCONSISTENT_GROUP_PROTOCOL): kafkajs's round robin under librdkafka's name.
  const roundrobin: kafkajs.PartitionAssigner = (cfg) => ({ ...kafkajs.PartitionAssigners.roundRobin(cfg), name: 'roundrobin' });
  const consumer2 = kafka.consumer({
    groupId: G2,
    sessionTimeout: 6000,
    heartbeatInterval: 1000,
    partitionAssigners: [roundrobin],
    retry: { retries: 50, initialRetryTime: 200, maxRetryTime: 2000 },
  });
  let crashed2: unknown;
  // kafkajs restarts itself after a retriable crash; only a crash it gives up on is fatal.
  consumer2.on(consumer2.events.CRASH, (e: { payload: { error: unknown; restart: boolean } }) => {
    if (!e.payload.restart) crashed2 = e.payload.error;
  });
  try {
    await consumer2.connect();
    await consumer2.subscribe({ topic: TOPIC, fromBeginning: true });
    await consumer2.run({
      // No commits of its own until the end: kafka-consumer-groups must still show phase 1's.
      autoCommit: false,
      eachMessage: async ({ partition, message }) => {
        seen2.push({ partition, offset: Number(message.offset), value: message.value!.toString() });
      },
    });

    const moved = await cluster.waitFor(`a new leader of __consumer_offsets-${offsetsPartition}`, NOTICE_MS, async () => {
      const p = (await zkTopic(cluster, '__consumer_offsets'))?.partitions[offsetsPartition];
      return p && p.leader >= 0 && p.leader !== coordinator ? p.leader : undefined;
    });
    t.diagnostic(`coordinator ${coordinator} killed; broker ${moved} leads __consumer_offsets-${offsetsPartition} ${Date.now() - killedAt} ms later`);
    for (const id of live) {
      await cluster.waitFor(`FindCoordinator on broker ${id} to name ${moved}`, 30_000, async () => {
        const r = await findCoordinator(cluster.broker(id).port, G1);
        return r.errorCode === ErrorCode.NONE && r.nodeId === moved;
      });
    }

    // The committed offsets, as the operator's tool shows them from the new coordinator.
    for (const g of [G1, G2]) {
      const rows = await cluster.waitFor(`kafka-consumer-groups --describe --group ${g} after the failover`, 60_000, async () => {
        const r = await runCli('kafka-consumer-groups', ['--bootstrap-server', bootstrap, '--describe', '--group', g], { timeoutMs: 60_000 });
        const got = describedOffsets(r.stdout, g);
        // Log end offsets are '-' while a partition's leadership moves: wait until all are known.
        return r.code === 0 && [...got.values()].every(([, end]) => end !== '-') && got.size >= Object.keys(committed.get(g)!).length ? got : undefined;
      });
      for (let p = 0; p < PARTITIONS; p++) {
        const want = committed.get(g)![String(p)];
        // A partition the first consumer never committed has no row, or '-' (no committed offset).
        const row = rows.get(p);
        if (want === undefined) assert.ok(row === undefined || row[0] === '-', `${g} partition ${p}: ${String(row)}`);
        else assert.deepEqual(row, [String(want), String(perPartition[p])], `${g} partition ${p}'s CURRENT-OFFSET and LOG-END-OFFSET after the failover`);
      }
    }

    await cluster.waitFor(`${G1}'s confluent-kafka consumer to read the ${left1} records after its commit`, 180_000, () => {
      if (resumed.child.exitCode !== null && !resumed.lines.includes('DONE'))
        throw new Error(`consumer exited ${resumed.child.exitCode}: ${resumed.stderrTail()}`);
      return resumed.lines.includes('DONE');
    });
    await cluster.waitFor(`${G2}'s kafkajs consumer to read the ${left2} records after its commit`, 180_000, () => {
      if (crashed2 !== undefined) throw new Error(`kafkajs consumer crashed: ${String(crashed2)}`);
      return seen2.length >= left2;
    });
    t.diagnostic(
      `resumed ${Date.now() - killedAt} ms after the kill; librdkafka logged ${resumed.coordinatorErrors.length} coordinator errors (NOT_COORDINATOR / LOAD_IN_PROGRESS), e.g. ${resumed.coordinatorErrors[0]?.slice(0, 160) ?? 'none'}`,
    );
  } finally {
    await consumer2.disconnect().catch(() => undefined);
    await killChild(resumed);
  }

  const seen1 = resumed.lines
    .filter((l) => l.startsWith('M '))
    .map((l) => {
      const [, p, o, v] = l.split(' ');
      return { partition: Number(p), offset: Number(o), value: v! };
    });
  for (const [group, seen] of [
    [G1, seen1],
    [G2, seen2],
  ] as const) {
    const keys = seen.map((s) => `${s.partition}:${s.offset}`);
    const before = seen.filter((s) => s.offset < startOf(group, s.partition));
    const dups = keys.length - new Set(keys).size;
    const missing: string[] = [];
    for (let p = 0; p < PARTITIONS; p++) {
      const got = new Set(seen.filter((s) => s.partition === p).map((s) => s.offset));
      for (let o = startOf(group, p); o < perPartition[p]!; o++) if (!got.has(o)) missing.push(`${p}:${o}`);
    }
    t.diagnostic(
      `${group}: resumed at ${JSON.stringify(committed.get(group))}, read ${seen.length}, redelivered from before the commit ${before.length}, duplicated ${dups}, skipped ${missing.length}`,
    );
    assert.deepEqual(missing.slice(0, 10), [], `${group}: nothing after the commit skipped`);
    assert.deepEqual(before.slice(0, 10), [], `${group}: nothing before the synchronous commit redelivered`);
    assert.equal(dups, 0, `${group}: nothing read twice`);
    // The values are the numbered records at their places (partition i % 3, i-th of it).
    for (const s of seen) assert.equal(s.value, `n${s.offset * PARTITIONS + s.partition}`);
  }

  // The offset history (issue 25), replicated as __consumer_offsets is: the commits made before the
  // kill are still there, read from the live brokers, and a reset on the new coordinator (G2 is
  // empty since kafkajs left) continues from them: its previous offsets come from what it loaded.
  const before2 = Object.entries(committed.get(G2)!).map(([p, o]) => [Number(p), BigInt(o)] as const);
  const admin = new Admin({ bootstrapServers: bootstrap });
  try {
    await admin.alterGroupOffsets(
      G2,
      before2.map(([p]) => ({ topic: TOPIC, partition: p, offset: 0n })),
    );
  } finally {
    await admin.close();
  }
  const history = await readGroupHistory(bootstrap, G2, (e) =>
    before2.every(
      ([p, o]) => e.some((x) => x.partition === p && x.newOffset === o) && e.some((x) => x.partition === p && x.previousOffset === o && x.cause === 'reset'),
    ),
  );
  for (let p = 0; p < PARTITIONS; p++) {
    const chain = history.filter((e) => e.topic === TOPIC && e.partition === p && e.cause !== 'alive');
    for (let i = 1; i < chain.length; i++)
      assert.equal(chain[i]!.previousOffset, chain[i - 1]!.newOffset, `${G2} ${TOPIC}-${p}: ${chain.map(moveLine).join(', ')}`);
  }
  t.diagnostic(`${G2}'s history: ${history.map(moveLine).join(', ')}`);

  // The killed broker comes back (once its old session has expired) and rejoins the offsets partition's ISR.
  await cluster.waitFor(`broker ${coordinator}'s old registration to expire`, NOTICE_MS, async () => !(await cluster.registeredIds()).includes(coordinator));
  await cluster.broker(coordinator).start();
  const rejoinedAt = Date.now();
  await cluster.waitFor(`broker ${coordinator} back in the ISR of every __consumer_offsets partition`, 120_000, async () =>
    (await zkTopic(cluster, '__consumer_offsets'))?.partitions.every((p) => p.isr.includes(coordinator)),
  );
  t.diagnostic(`broker ${coordinator} rejoined the ISR of every __consumer_offsets partition ${Date.now() - rejoinedAt} ms after its restart`);
});
