/**
 * The offset history end to end (issue 25), as a user sees it: a kafkajs group consumes and
 * commits, bin/kafka-consumer-groups.sh resets the group, and the history topic, read back with
 * Fjord's own client over the ordinary Fetch and ListOffsets APIs, shows both changes in order
 * (with who made them) and nothing for the commits that did not move. With the history off the
 * topic is never created. Needs dist/ (npx tsc -p tsconfig.json) for the tool.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import kafkajs from 'kafkajs';
import { startTestBroker, type TestBroker } from '../helpers/broker.js';
import { run } from '../helpers/run.js';
import { Admin } from '../../src/client/admin.js';
import { OFFSET_HISTORY_TOPIC, historyPartitionFor } from '../../src/protocol/offset-history/history-record.js';
import { moveLine, readGroupHistory } from './offset-history-read.js';

const ROOT = join(fileURLToPath(import.meta.url), '..', '..', '..');
const PARTITIONS = 3;
let b: TestBroker;

before(async () => {
  b = await startTestBroker({ 'offsets.topic.num.partitions': String(PARTITIONS), 'offsets.topic.replication.factor': '1' });
});
after(async () => {
  await b?.stop();
});

const kafka = () => new kafkajs.Kafka({ clientId: 'history-test', brokers: [b.bootstrap], logLevel: kafkajs.logLevel.NOTHING, retry: { retries: 5 } });

test('a kafkajs group commits, kafka-consumer-groups.sh resets it; the history topic shows both, in order', async () => {
  const k = kafka();
  const admin = k.admin();
  await admin.connect();
  await admin.createTopics({ topics: [{ topic: 'orders', numPartitions: 1 }] });
  const producer = k.producer();
  await producer.connect();
  await producer.send({ topic: 'orders', messages: Array.from({ length: 10 }, (_, i) => ({ value: `o${i}` })) });
  await producer.disconnect();

  const consumer = k.consumer({ groupId: 'shop', sessionTimeout: 10_000, heartbeatInterval: 500 });
  await consumer.connect();
  await consumer.subscribe({ topic: 'orders', fromBeginning: true });
  let seen = 0;
  let done!: () => void;
  const all = new Promise<void>((r) => (done = r));
  await consumer.run({
    autoCommitInterval: 100, // commits that do not move are made too: the history must not repeat them
    eachMessage: async () => {
      if (++seen === 10) done();
    },
  });
  await all;
  // Commit the end explicitly (kafkajs commits the offset after the last one consumed).
  await consumer.commitOffsets([{ topic: 'orders', partition: 0, offset: '10' }]);
  await consumer.disconnect();
  await admin.disconnect();
  const started = BigInt(Date.now());

  const reset = await run(join(ROOT, 'bin', 'kafka-consumer-groups.sh'), [
    '--bootstrap-server',
    b.bootstrap,
    '--reset-offsets',
    '--to-earliest',
    '--group',
    'shop',
    '--topic',
    'orders',
    '--execute',
  ]);
  assert.equal(reset.code, 0, reset.stderr);

  const entries = await readGroupHistory(b.bootstrap, 'shop', (e) => e.some((x) => x.cause === 'reset'));
  const moves = entries.map(moveLine);
  assert.equal(moves.at(-1), 'orders-0 10->0 reset', moves.join('\n'));
  const commits = entries.filter((e) => e.cause === 'commit');
  assert.ok(commits.length >= 1, 'the group commits are there');
  assert.equal(commits.at(-1)!.newOffset, 10n);
  assert.equal(commits[0]!.previousOffset, -1n);
  for (let i = 1; i < commits.length; i++) {
    assert.equal(commits[i]!.previousOffset, commits[i - 1]!.newOffset, 'each change starts where the last one ended');
    assert.notEqual(commits[i]!.previousOffset, commits[i]!.newOffset, 'a commit that moves nothing is not repeated');
  }
  assert.equal(commits[0]!.clientId, 'history-test');
  assert.match(commits[0]!.memberId, /^history-test-/);
  assert.ok(commits[0]!.generation >= 1);
  assert.equal(commits[0]!.clientHost, '/127.0.0.1');
  const r = entries.at(-1)!;
  assert.equal(r.memberId, '');
  assert.ok(r.ts >= started, 'the record timestamp is the time of the change');

  // A time window is found with ListOffsets by timestamp: the reset is at or after `started`.
  const fjordAdmin = new Admin({ bootstrapServers: b.bootstrap });
  try {
    const [described] = await fjordAdmin.describeTopics([OFFSET_HISTORY_TOPIC]);
    assert.equal(described?.isInternal, true, 'an internal topic: pattern subscriptions skip it');
    assert.equal(described?.partitions.length, PARTITIONS, 'as many partitions as __consumer_offsets');
    const p = historyPartitionFor('shop', PARTITIONS);
    const found = await fjordAdmin.listOffsets([{ topic: OFFSET_HISTORY_TOPIC, partition: p, timestamp: started }]);
    // Only this group's records are in its partition here: offsets are indexes into `entries`.
    assert.equal(found[0]!.offset, BigInt(entries.findIndex((e) => e.ts >= started)), 'ListOffsets by time finds the first record of the window');
  } finally {
    await fjordAdmin.close();
  }
});

test("a client's Produce to the history topic is refused as to any internal topic (brokers forward as Kafka's admin client)", async () => {
  const producer = kafka().producer({ retry: { retries: 0 } });
  await producer.connect();
  try {
    await assert.rejects(
      producer.send({ topic: OFFSET_HISTORY_TOPIC, messages: [{ key: 'shop', value: 'forged' }] }),
      (err: Error & { type?: string }) => err.type === 'INVALID_TOPIC_EXCEPTION' || /INVALID_TOPIC_EXCEPTION|internal topic/i.test(String(err.message)),
    );
  } finally {
    await producer.disconnect();
  }
});

test('with offsets.history.enable=false commits work and no history topic is created', async () => {
  const off = await startTestBroker({ 'offsets.topic.num.partitions': '1', 'offsets.history.enable': 'false' });
  try {
    const k = new kafkajs.Kafka({ clientId: 'off', brokers: [off.bootstrap], logLevel: kafkajs.logLevel.NOTHING });
    const admin = k.admin();
    await admin.connect();
    await admin.createTopics({ topics: [{ topic: 't', numPartitions: 1 }] });
    await admin.setOffsets({ groupId: 'g', topic: 't', partitions: [{ partition: 0, offset: '0' }] });
    const topics = await admin.listTopics();
    await admin.disconnect();
    assert.ok(topics.includes('__consumer_offsets'));
    assert.ok(!topics.includes(OFFSET_HISTORY_TOPIC));
  } finally {
    await off.stop();
  }
});
