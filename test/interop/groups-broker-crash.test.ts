/**
 * The broker is SIGKILLed while a group consumer reads and commits; after the restart the
 * acknowledged commits are still there (replayed from __consumer_offsets) and a restarted
 * consumer resumes at them, skipping nothing.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Kafka, logLevel } from 'kafkajs';
import { BrokerProcess, KAFKAJS_CONSUMER, LineProcess, checkResume, freePort } from './groups/crash-helpers.js';

async function withAdmin<T>(bootstrap: string, fn: (admin: ReturnType<Kafka['admin']>, kafka: Kafka) => Promise<T>): Promise<T> {
  const kafka = new Kafka({ brokers: [bootstrap], logLevel: logLevel.NOTHING, retry: { retries: 30, initialRetryTime: 100, maxRetryTime: 1000 } });
  const admin = kafka.admin();
  await admin.connect();
  try {
    return await fn(admin, kafka);
  } finally {
    await admin.disconnect();
  }
}

test('a consumer resumes at its committed offsets after the broker is SIGKILLed and restarted', { timeout: 240_000 }, async () => {
  const dir = await mkdtemp(join(tmpdir(), 'fjord-broker-crash-'));
  const broker = new BrokerProcess(await freePort(), dir);
  const topic = 'crash-topic';
  const groupId = 'g-broker-crash';
  try {
    await broker.start();
    const ends = await withAdmin(broker.bootstrap, async (admin, kafka) => {
      await admin.createTopics({ topics: [{ topic, numPartitions: 3 }] });
      const producer = kafka.producer();
      await producer.connect();
      for (let i = 0; i < 9; i++) {
        await producer.send({ topic, acks: -1, messages: Array.from({ length: 100 }, (_, j) => ({ key: `k${i * 100 + j}`, value: `${i * 100 + j}` })) });
      }
      await producer.disconnect();
      const offs = await admin.fetchTopicOffsets(topic);
      return new Map(offs.map((o) => [o.partition, Number(o.high)]));
    });

    const first = new LineProcess(process.execPath, ['--import', 'tsx', KAFKAJS_CONSUMER, broker.bootstrap, topic, groupId, '5']);
    let acknowledged: Map<number, number>;
    try {
      await first.until((l) => l.length >= 300, 60_000, '300 records');
      acknowledged = await withAdmin(broker.bootstrap, async (admin) => {
        const r = await admin.fetchOffsets({ groupId, topics: [topic] });
        return new Map(r[0]!.partitions.map((p) => [p.partition, Number(p.offset)]));
      });
      await broker.kill('SIGKILL');
    } finally {
      await first.kill('SIGKILL');
    }
    await broker.start();
    const committed = await withAdmin(broker.bootstrap, async (admin) => {
      const r = await admin.fetchOffsets({ groupId, topics: [topic] });
      return new Map(r[0]!.partitions.map((p) => [p.partition, Math.max(0, Number(p.offset))]));
    });
    for (const [p, o] of acknowledged) assert.ok((committed.get(p) ?? -1) >= o, `partition ${p}: acknowledged commit ${o} lost (now ${committed.get(p)})`);
    assert.ok(
      [...committed.values()].some((o) => o > 0),
      'some offsets were committed before the crash',
    );

    const second = new LineProcess(process.execPath, ['--import', 'tsx', KAFKAJS_CONSUMER, broker.bootstrap, topic, groupId, '0']);
    try {
      await second.until(
        (lines) => [...ends].every(([p, end]) => (committed.get(p) ?? 0) >= end || lines.some((l) => l.partition === p && l.offset === end - 1)),
        120_000,
        'the end of every partition',
      );
    } finally {
      await second.kill('SIGKILL');
    }
    checkResume(first.lines, second.lines, committed, ends);
  } finally {
    await broker.kill('SIGKILL');
    await rm(dir, { recursive: true, force: true });
  }
});
