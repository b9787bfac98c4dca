import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestBroker } from '../helpers/broker.js';
import { Admin, Consumer, Producer, type ConsumerRecord } from '../../src/client/index.js';

/** Polls every consumer in its own loop (as separate applications would) until `pred` holds. */
async function pollUntil(consumers: Consumer[], pred: () => boolean, timeoutMs: number, sink: ConsumerRecord[] = []): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let done = false;
  await Promise.all(
    consumers.map(async (c) => {
      while (!done) {
        if (pred()) done = true;
        else if (Date.now() > deadline) {
          done = true;
          throw new Error('condition not reached in time');
        } else sink.push(...(await c.poll(200)));
      }
    }),
  );
}

for (const strategy of ['range', 'roundrobin', 'cooperative-sticky']) {
  test(`two group members split partitions with ${strategy}, commits survive a restart`, { timeout: 60000 }, async () => {
    const b = await startTestBroker();
    const admin = new Admin({ bootstrapServers: b.bootstrap });
    const producer = new Producer({ bootstrapServers: b.bootstrap });
    const opts = {
      bootstrapServers: b.bootstrap,
      groupId: 'g1',
      autoOffsetReset: 'earliest' as const,
      partitionAssignmentStrategy: [strategy],
      heartbeatIntervalMs: 200,
      autoCommitIntervalMs: 200,
    };
    const c1 = new Consumer(opts);
    const c2 = new Consumer(opts);
    try {
      await admin.createTopics([{ name: 't', numPartitions: 4, replicationFactor: 1 }]);
      await Promise.all(Array.from({ length: 40 }, (_, i) => producer.send({ topic: 't', partition: i % 4, value: String(i) })));
      c1.subscribe(['t']);
      const got: ConsumerRecord[] = [];
      await pollUntil([c1], () => c1.assignment().length === 4, 15000, got);
      c2.subscribe(['t']);
      await pollUntil([c1, c2], () => c1.assignment().length === 2 && c2.assignment().length === 2, 20000, got);
      const all = [...c1.assignment(), ...c2.assignment()].map((tp) => tp.partition).sort();
      assert.deepEqual(all, [0, 1, 2, 3]);
      await pollUntil([c1, c2], () => new Set(got.map((r) => `${r.partition}:${r.offset}`)).size === 40, 15000, got);
      await c1.commitSync();
      await c2.commitSync();
      const desc = await admin.describeGroups(['g1']);
      assert.equal(desc[0]!.members.length, 2);
      assert.equal(desc[0]!.protocol, strategy);
      await c1.close();
      await c2.close();
      const offsets = await admin.listGroupOffsets('g1');
      assert.deepEqual(
        [...offsets.get('t')!.values()].map((o) => o.offset),
        [10n, 10n, 10n, 10n],
      );
    } finally {
      await c1.close();
      await c2.close();
      await producer.close();
      await admin.close();
      await b.stop();
    }
  });
}

test('pattern subscription skips internal topics; pause/resume stops and restarts delivery', { timeout: 60000 }, async () => {
  const b = await startTestBroker();
  const admin = new Admin({ bootstrapServers: b.bootstrap });
  const producer = new Producer({ bootstrapServers: b.bootstrap });
  const c = new Consumer({ bootstrapServers: b.bootstrap, groupId: 'pat', autoOffsetReset: 'earliest' });
  try {
    await admin.createTopics([
      { name: 'logs-a', numPartitions: 1 },
      { name: 'logs-b', numPartitions: 1 },
      { name: 'other', numPartitions: 1 },
    ]);
    await producer.send({ topic: 'logs-a', value: 'a' });
    await producer.send({ topic: 'logs-b', value: 'b' });
    await producer.send({ topic: 'other', value: 'o' });
    c.subscribe(/^(logs-.*|__consumer_offsets)$/);
    const got: ConsumerRecord[] = [];
    await pollUntil([c], () => got.length >= 2, 15000, got);
    assert.deepEqual(got.map((r) => r.topic).sort(), ['logs-a', 'logs-b']);
    assert.ok(c.assignment().every((tp) => tp.topic.startsWith('logs-')));
    const a = { topic: 'logs-a', partition: 0 };
    c.pause([a]);
    await producer.send({ topic: 'logs-a', value: 'a2' });
    await producer.send({ topic: 'logs-b', value: 'b2' });
    const later: ConsumerRecord[] = [];
    await pollUntil([c], () => later.some((r) => r.value?.toString() === 'b2'), 10000, later);
    assert.ok(!later.some((r) => r.topic === 'logs-a'), 'paused partition delivered nothing');
    c.resume([a]);
    await pollUntil([c], () => later.some((r) => r.value?.toString() === 'a2'), 10000, later);
  } finally {
    await c.close();
    await producer.close();
    await admin.close();
    await b.stop();
  }
});
