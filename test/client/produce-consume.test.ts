import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestBroker } from '../helpers/broker.js';
import { Admin, Consumer, Producer, KafkaError } from '../../src/client/index.js';

test('admin creates a topic, producer writes, consumer (assign) reads it back in order', async () => {
  const b = await startTestBroker();
  const admin = new Admin({ bootstrapServers: b.bootstrap });
  const producer = new Producer({ bootstrapServers: b.bootstrap, lingerMs: 2, compression: 'gzip' });
  const consumer = new Consumer({ bootstrapServers: b.bootstrap, autoOffsetReset: 'earliest' });
  try {
    const created = await admin.createTopics([{ name: 'orders', numPartitions: 2, replicationFactor: 1 }]);
    assert.equal(created.get('orders'), null);
    const again = await admin.createTopics([{ name: 'orders', numPartitions: 2 }]);
    assert.equal(again.get('orders')?.code, 36);
    assert.deepEqual(await admin.listTopics(), ['orders']);

    const sent = await Promise.all(Array.from({ length: 50 }, (_, i) => producer.send({ topic: 'orders', partition: i % 2, key: `k${i}`, value: `v${i}` })));
    assert.equal(sent[0]!.offset, 0n);
    assert.equal(sent[48]!.offset, 24n);
    assert.equal(sent[49]!.partition, 1);

    consumer.assign([
      { topic: 'orders', partition: 0 },
      { topic: 'orders', partition: 1 },
    ]);
    const got: string[] = [];
    const deadline = Date.now() + 10000;
    while (got.length < 50 && Date.now() < deadline) {
      for (const r of await consumer.poll(500)) got.push(`${r.partition}:${r.offset}:${r.value}`);
    }
    assert.equal(got.length, 50);
    const p0 = got.filter((s) => s.startsWith('0:'));
    assert.deepEqual(p0.slice(0, 3), ['0:0:v0', '0:1:v2', '0:2:v4']);
    assert.equal(consumer.position({ topic: 'orders', partition: 1 }), 25n);

    consumer.seek({ topic: 'orders', partition: 1 }, 20n);
    const again2 = await consumer.poll(2000);
    assert.ok(again2.length > 0);
    assert.equal(again2.find((r) => r.partition === 1)!.offset, 20n);

    const ends = await admin.listOffsets([
      { topic: 'orders', partition: 0, timestamp: -1n },
      { topic: 'orders', partition: 1, timestamp: -2n },
    ]);
    assert.deepEqual(
      ends.map((e) => e.offset),
      [25n, 0n],
    );
  } finally {
    await consumer.close();
    await producer.close();
    await admin.close();
    await b.stop();
  }
});

test('keyed records land on the partition the Java client would choose; unkeyed stick', async () => {
  const b = await startTestBroker();
  const admin = new Admin({ bootstrapServers: b.bootstrap });
  const producer = new Producer({ bootstrapServers: b.bootstrap, lingerMs: 50 });
  try {
    await admin.createTopics([{ name: 'keys', numPartitions: 4, replicationFactor: 1 }]);
    const m = await producer.send({ topic: 'keys', key: 'foobar', value: 'x' });
    // murmur2("foobar") = -790332482 → positive 1357151166 % 4 = 2
    assert.equal(m.partition, 2);
    const unkeyed = await Promise.all(Array.from({ length: 10 }, () => producer.send({ topic: 'keys', value: 'u' })));
    assert.equal(new Set(unkeyed.map((r) => r.partition)).size, 1, 'all in one batch on one partition');
  } finally {
    await producer.close();
    await admin.close();
    await b.stop();
  }
});

test('producing to a missing topic with auto-create off fails with UNKNOWN_TOPIC_OR_PARTITION', async () => {
  const b = await startTestBroker({ 'auto.create.topics.enable': 'false' });
  const producer = new Producer({ bootstrapServers: b.bootstrap, requestTimeoutMs: 1500 });
  try {
    await assert.rejects(producer.send({ topic: 'nope', value: 'x' }), (err: unknown) => err instanceof KafkaError && err.code === 3);
  } finally {
    await producer.close();
    await b.stop();
  }
});
