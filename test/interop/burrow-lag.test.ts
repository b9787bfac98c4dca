/**
 * LinkedIn's Burrow (Debian's 1.2.1, a Go lag monitor built on Sarama) reads Fjord's
 * `__consumer_offsets` from the beginning, decodes the coordinator's binary records and reports a
 * group's committed offsets and lag. This proves the records are Kafka's, byte for byte, for a
 * third-party decoder that Fjord's own code never touched.
 *
 * Burrow 1.2 keeps its own coordination in ZooKeeper, so a real ZooKeeper runs beside it.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import { createServer, connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import kafkajs from 'kafkajs';
import { startTestBroker, type TestBroker } from '../helpers/broker.js';
import { requirePeer } from '../helpers/peers.js';
import { RawClient } from '../helpers/raw-client.js';
import { OffsetCommitRequestCodec, OffsetCommitResponseCodec } from '../../src/protocol/messages/08-offset-commit.js';

const TOPIC = 'burrow-lag';
const GROUP = 'burrow-lag-group';
/** Records produced per partition, and the offsets the group commits: lag = end - committed. */
const PRODUCED = [50, 30] as const;
const COMMITTED = [20, 25] as const;
/**
 * A standalone group committing through OffsetCommit v2 with a retention time: Fjord stores
 * these as OffsetCommitValue v1 (with an expire timestamp), the other version Burrow must read.
 */
const EXPIRING_GROUP = 'burrow-lag-expiring';
const EXPIRING_COMMITTED = [40, 10] as const;

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  if (address === null || typeof address === 'string') throw new Error('no port');
  return address.port;
}

/** Rejects when `p` has not settled within `ms`. */
function withTimeout<T>(p: Promise<T>, ms: number): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no answer in ${ms} ms`)), ms);
    p.then(
      (v) => {
        clearTimeout(timer);
        resolve(v);
      },
      (e: unknown) => {
        clearTimeout(timer);
        reject(e instanceof Error ? e : new Error(String(e)));
      },
    );
  });
}

/** Retries `probe` until it returns a value or the deadline passes; then throws with `why()`. */
async function pollUntil<T>(what: string, timeoutMs: number, probe: () => Promise<T | undefined>, why: () => string): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    // A probe that never settles (a half-started server) must not outlive the deadline.
    const value = await withTimeout(probe(), 5_000).catch(() => undefined);
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}\n${why()}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

interface Child {
  proc: ChildProcess;
  /** The output's tail, for failure messages. */
  output(): string;
  /** Every complete output line containing `watch`, however long the output grows. */
  watched: string[];
}

function startChild(cmd: string, args: string[], cwd: string, watch?: string): Child {
  const proc = spawn(cmd, args, { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let partial = '';
  const watched: string[] = [];
  const keep = (chunk: Buffer): void => {
    const text = chunk.toString();
    // Only the tail matters for a failure message; Burrow at debug level is chatty.
    out = (out + text).slice(-60_000);
    if (watch === undefined) return;
    const lines = (partial + text).split('\n');
    partial = lines.pop()!;
    watched.push(...lines.filter((l) => l.includes(watch)));
  };
  proc.stdout!.on('data', keep);
  proc.stderr!.on('data', keep);
  return { proc, output: () => out, watched };
}

async function stopChild(child: Child | undefined): Promise<void> {
  if (!child || child.proc.exitCode !== null || child.proc.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.proc.once('exit', () => resolve()));
  child.proc.kill('SIGTERM');
  const timer = setTimeout(() => child.proc.kill('SIGKILL'), 5_000);
  await exited;
  clearTimeout(timer);
}

function zkRuok(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1', () => socket.write('ruok'));
    socket.setTimeout(2_000, () => socket.destroy());
    let reply = '';
    socket.on('data', (d) => (reply += d.toString()));
    socket.on('close', () => resolve(reply === 'imok'));
    socket.on('error', () => resolve(false));
  });
}

async function startZooKeeper(dir: string): Promise<{ child: Child; port: number }> {
  const port = await freePort();
  await mkdir(join(dir, 'data'));
  const cfg = [
    'tickTime=500',
    `dataDir=${join(dir, 'data')}`,
    `clientPort=${port}`,
    'clientPortAddress=127.0.0.1',
    'minSessionTimeout=1000',
    'maxSessionTimeout=30000',
    'admin.enableServer=false',
    '4lw.commands.whitelist=ruok',
  ].join('\n');
  await writeFile(join(dir, 'zoo.cfg'), `${cfg}\n`);
  const child = startChild(
    'java',
    ['-Xmx256m', '-cp', '/etc/zookeeper/conf:/usr/share/java/zookeeper.jar', 'org.apache.zookeeper.server.ZooKeeperServerMain', join(dir, 'zoo.cfg')],
    dir,
  );
  await pollUntil('ZooKeeper to answer imok', 30_000, async () => ((await zkRuok(port)) ? true : undefined), child.output);
  return { child, port };
}

function burrowConfig(o: { dir: string; kafka: string; zkPort: number; httpPort: number }): string {
  return `
[general]
pidfile="${join(o.dir, 'burrow.pid')}"

[logging]
level="debug"

[zookeeper]
servers=["127.0.0.1:${o.zkPort}"]
timeout=6
root-path="/burrow"

[client-profile.fjord]
client-id="burrow-fjord"
kafka-version="2.0.0"

[cluster.local]
class-name="kafka"
servers=["${o.kafka}"]
client-profile="fjord"
topic-refresh=1
offset-refresh=1

[consumer.local]
class-name="kafka"
cluster="local"
servers=["${o.kafka}"]
client-profile="fjord"
offsets-topic="__consumer_offsets"
start-latest=false

[httpserver.default]
address="127.0.0.1:${o.httpPort}"

[storage.default]
class-name="inmemory"
workers=4
intervals=10
expire-group=604800
min-distance=1

[evaluator.default]
class-name="caching"
expire-cache=1
`;
}

interface BurrowPartitionLag {
  topic: string;
  partition: number;
  owner: string;
  current_lag: number;
  end: { offset: number; lag: number } | null;
}

interface BurrowLagResponse {
  error: boolean;
  status: { group: string; partitions: BurrowPartitionLag[] };
}

async function getJson<T>(url: string): Promise<T> {
  const res = await fetch(url, { signal: AbortSignal.timeout(3_000) });
  return (await res.json()) as T;
}

/** Produces, then a live group member consumes everything and commits COMMITTED explicitly. */
async function produceAndCommit(b: TestBroker): Promise<kafkajs.Consumer> {
  const kafka = new kafkajs.Kafka({ clientId: 'burrow-test', brokers: [b.bootstrap], logLevel: kafkajs.logLevel.NOTHING, retry: { retries: 5 } });
  const admin = kafka.admin();
  await admin.connect();
  await admin.createTopics({ topics: [{ topic: TOPIC, numPartitions: 2 }] });
  await admin.disconnect();
  const producer = kafka.producer();
  await producer.connect();
  for (const [partition, count] of PRODUCED.entries()) {
    await producer.send({ topic: TOPIC, acks: -1, messages: Array.from({ length: count }, (_, i) => ({ value: `p${partition}-${i}`, partition })) });
  }
  await producer.disconnect();

  const consumer = kafka.consumer({ groupId: GROUP, maxWaitTimeInMs: 100 });
  await consumer.connect();
  await consumer.subscribe({ topic: TOPIC, fromBeginning: true });
  const total = PRODUCED[0] + PRODUCED[1];
  let seen = 0;
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`only ${seen} of ${total} messages consumed`)), 30_000);
    void consumer.run({
      autoCommit: false,
      eachMessage: async () => {
        if (++seen === total) {
          clearTimeout(timer);
          resolve();
        }
      },
    });
  });
  await consumer.commitOffsets(COMMITTED.map((offset, partition) => ({ topic: TOPIC, partition, offset: String(offset) })));
  return consumer;
}

async function commitWithRetention(b: TestBroker): Promise<void> {
  const raw = await RawClient.connect(b.port);
  try {
    const res = await raw.request(8, OffsetCommitRequestCodec, OffsetCommitResponseCodec, 2, {
      groupId: EXPIRING_GROUP,
      generationIdOrMemberEpoch: -1,
      memberId: '',
      retentionTimeMs: 86_400_000n,
      topics: [{ name: TOPIC, partitions: EXPIRING_COMMITTED.map((offset, partitionIndex) => ({ partitionIndex, committedOffset: BigInt(offset) })) }],
    });
    assert.deepEqual(
      res.topics.flatMap((tp) => tp.partitions.map((p) => p.errorCode)),
      [0, 0],
    );
  } finally {
    raw.close();
  }
}

/** Polls Burrow until every partition of TOPIC shows `committed` and lag = end - committed. */
async function burrowLag(api: string, group: string, committed: readonly number[], logs: () => string): Promise<BurrowPartitionLag[]> {
  const body = await pollUntil(
    `Burrow to report lag of ${group}`,
    60_000,
    async () => {
      const res = await getJson<BurrowLagResponse>(`${api}/consumer/${group}/lag`);
      const parts = res.status.partitions.filter((p) => p.topic === TOPIC);
      // Broker offsets arrive on their own refresh; wait until every partition has its lag.
      const done =
        parts.length === PRODUCED.length &&
        parts.every((p) => p.end !== null && p.end.offset === committed[p.partition] && p.current_lag === PRODUCED[p.partition]! - committed[p.partition]!);
      return done ? res : undefined;
    },
    logs,
  );
  return [...body.status.partitions].sort((a, b) => a.partition - b.partition);
}

test('Burrow 1.2.1 decodes Fjord __consumer_offsets and reports committed offsets and lag', { timeout: 180_000 }, async (t) => {
  if (!requirePeer(t, 'burrow') || !requirePeer(t, 'zookeeper')) return;
  const dir = await mkdtemp(join(tmpdir(), 'fjord-burrow-'));
  let broker: TestBroker | undefined;
  let zk: { child: Child; port: number } | undefined;
  let burrow: Child | undefined;
  let consumer: kafkajs.Consumer | undefined;
  try {
    await mkdir(join(dir, 'zk'));
    zk = await startZooKeeper(join(dir, 'zk'));
    broker = await startTestBroker();
    consumer = await produceAndCommit(broker);
    await commitWithRetention(broker);

    const httpPort = await freePort();
    await mkdir(join(dir, 'burrow'));
    await writeFile(join(dir, 'burrow', 'burrow.toml'), burrowConfig({ dir: join(dir, 'burrow'), kafka: broker.bootstrap, zkPort: zk.port, httpPort }));
    burrow = startChild('Burrow', ['-config-dir', join(dir, 'burrow')], join(dir, 'burrow'), 'failed to decode');
    const logs = burrow.output;
    const api = `http://127.0.0.1:${httpPort}/v3/kafka/local`;

    const groups = await pollUntil(
      `Burrow to list ${GROUP} and ${EXPIRING_GROUP}`,
      60_000,
      async () => {
        const body = await getJson<{ consumers: string[] }>(`${api}/consumer`);
        return body.consumers.includes(GROUP) && body.consumers.includes(EXPIRING_GROUP) ? body.consumers : undefined;
      },
      logs,
    );
    assert.ok(groups.includes(GROUP) && groups.includes(EXPIRING_GROUP));

    const byPartition = await burrowLag(api, GROUP, COMMITTED, logs);
    const expiring = await burrowLag(api, EXPIRING_GROUP, EXPIRING_COMMITTED, logs);
    const figures = (parts: BurrowPartitionLag[]) =>
      JSON.stringify(parts.map((p) => ({ partition: p.partition, committed: p.end?.offset, lag: p.current_lag, owner: p.owner })));
    t.diagnostic(`Burrow, ${GROUP} (OffsetCommitValue v3): ${figures(byPartition)}`);
    t.diagnostic(`Burrow, ${EXPIRING_GROUP} (OffsetCommitValue v1): ${figures(expiring)}`);
    for (const [parts, committed] of [
      [byPartition, COMMITTED],
      [expiring, EXPIRING_COMMITTED],
    ] as const) {
      for (const p of parts) {
        assert.equal(p.end!.offset, committed[p.partition], `committed offset of partition ${p.partition}`);
        assert.equal(p.current_lag, PRODUCED[p.partition]! - committed[p.partition]!, `lag of partition ${p.partition}`);
      }
    }

    // Burrow 1.2.1 predates Kafka 2.3 and decodes GroupMetadataValue v0-v1 only; Fjord, like
    // Kafka 2.3+, writes v3 (docs/consumer-groups.md). That record, and nothing else, may be
    // refused; then Burrow knows no owners. A Burrow that decodes it must name our consumer's host.
    const failures = burrow.watched.map((l) => JSON.parse(l) as { message_type?: string; reason?: string; version?: number });
    for (const f of failures) {
      assert.deepEqual(
        { type: f.message_type, reason: f.reason, version: f.version },
        { type: 'metadata', reason: 'value version', version: 3 },
        `unexpected decode failure: ${JSON.stringify(f)}`,
      );
    }
    const owners = byPartition.map((p) => p.owner);
    if (failures.length > 0) assert.deepEqual(owners, ['', ''], 'owners without group metadata');
    else assert.deepEqual(owners, ['/127.0.0.1', '/127.0.0.1'], 'owners from the GroupMetadata record');
  } finally {
    if (consumer) await withTimeout(consumer.disconnect(), 15_000).catch(() => undefined);
    await stopChild(burrow);
    await broker?.stop();
    await stopChild(zk?.child);
    await rm(dir, { recursive: true, force: true });
  }
});
