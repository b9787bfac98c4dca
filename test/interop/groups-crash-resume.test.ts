/**
 * Crash and resume (the seed's point): a group consumer is SIGKILLed mid-stream and restarted in
 * the same group; it resumes at the last committed offset, nothing is skipped, and the only
 * duplicates are records after the last commit. kafkajs, confluent-kafka (librdkafka) and kcat -G.
 */
import { test, before, after } from 'node:test';
import { Kafka, logLevel, type Admin } from 'kafkajs';
import { startTestBroker, type TestBroker } from '../helpers/broker.js';
import { PYTHON, requirePeer } from '../helpers/peers.js';
import { kcatProduce } from './kcat-helpers.js';
import { CONFLUENT_CONSUMER, KAFKAJS_CONSUMER, LineProcess, checkResume, type Consumed } from './groups/crash-helpers.js';

/**
 * The consumers' session timeout: a killed member is noticed when it expires, so each case waits
 * it out once. 3 s, half Kafka's minimum (group.min.session.timeout.ms, lowered to match).
 */
const SESSION_MS = 3000;

let b: TestBroker;
let admin: Admin;
before(async () => {
  b = await startTestBroker({ 'group.min.session.timeout.ms': String(SESSION_MS) });
  admin = new Kafka({ brokers: [b.bootstrap], logLevel: logLevel.NOTHING }).admin();
  await admin.connect();
});
after(async () => {
  await admin.disconnect();
  await b.stop();
});

const PARTITIONS = 3;

async function prepareTopic(topic: string, count: number): Promise<Map<number, number>> {
  await b.broker.services.metadata.createTopic({ name: topic, numPartitions: PARTITIONS, replicationFactor: 1 });
  await b.broker.services.replicaManager.syncTopic(topic);
  const lines = Array.from({ length: count }, (_, i) => `k${i}:${i}`).join('\n') + '\n';
  await kcatProduce(b.bootstrap, topic, lines, ['-K', ':', '-X', 'batch.num.messages=50']);
  const ends = await admin.fetchTopicOffsets(topic);
  return new Map(ends.map((e) => [e.partition, Number(e.high)]));
}

async function committedOffsets(groupId: string, topic: string): Promise<Map<number, number>> {
  const res = await admin.fetchOffsets({ groupId, topics: [topic] });
  return new Map(res[0]!.partitions.map((p) => [p.partition, Math.max(0, Number(p.offset))]));
}

const reachedEnd = (ends: Map<number, number>, committed: Map<number, number>) => (lines: Consumed[]) =>
  [...ends].every(([p, end]) => (committed.get(p) ?? 0) >= end || lines.some((l) => l.partition === p && l.offset === end - 1));

async function crashAndResume(topic: string, groupId: string, count: number, killAfter: number, start: () => LineProcess): Promise<void> {
  const ends = await prepareTopic(topic, count);
  const first = start();
  try {
    await first.until((l) => l.length >= killAfter, 60_000, `${killAfter} records`);
  } finally {
    await first.kill('SIGKILL');
  }
  const committed = await committedOffsets(groupId, topic);
  const second = start();
  try {
    // The dead member's session (SESSION_MS) must expire before the group rebalances to the new one.
    await second.until(reachedEnd(ends, committed), 90_000, 'the end of every partition');
  } finally {
    await second.kill('SIGKILL');
  }
  const total = [...ends.values()].reduce((a, n) => a + n, 0);
  if (first.lines.length >= total) throw new Error('the first consumer read everything before it was killed: not mid-stream');
  checkResume(first.lines, second.lines, committed, ends);
}

test('kafkajs consumer killed with SIGKILL resumes at its committed offsets', { timeout: 180_000 }, async () => {
  const topic = 'resume-kafkajs';
  await crashAndResume(
    topic,
    'g-kafkajs',
    900,
    300,
    () => new LineProcess(process.execPath, ['--import', 'tsx', KAFKAJS_CONSUMER, b.bootstrap, topic, 'g-kafkajs', '5', String(SESSION_MS)]),
  );
});

test('confluent-kafka consumer killed with SIGKILL resumes at its committed offsets', { timeout: 180_000 }, async (t) => {
  if (!requirePeer(t, 'python3-confluent-kafka')) return;
  const topic = 'resume-confluent';
  await crashAndResume(
    topic,
    'g-confluent',
    900,
    300,
    () => new LineProcess(PYTHON, ['-u', CONFLUENT_CONSUMER, b.bootstrap, topic, 'g-confluent', '5', String(SESSION_MS)]),
  );
});

test('kcat -G consumer killed with SIGKILL resumes at its committed offsets', { timeout: 180_000 }, async (t) => {
  if (!requirePeer(t, 'kcat')) return;
  const topic = 'resume-kcat';
  const args = [
    '-b',
    b.bootstrap,
    '-G',
    'g-kcat',
    '-u',
    '-q',
    '-f',
    '%p %o\n',
    '-X',
    'auto.offset.reset=earliest',
    '-X',
    'auto.commit.interval.ms=100',
    '-X',
    `session.timeout.ms=${SESSION_MS}`,
    '-X',
    'heartbeat.interval.ms=1000',
    '-X',
    'max.partition.fetch.bytes=1024',
    topic,
  ];
  // 150,000 records in 1 KB fetches: killed at 20,000, kcat is still mid-stream (a fast reader needs seconds for the rest).
  await crashAndResume(topic, 'g-kcat', 150_000, 20_000, () => new LineProcess('kcat', args));
});
