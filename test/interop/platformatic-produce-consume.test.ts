/**
 * @platformatic/kafka (a client that needs the newest API versions: Produce >= 9, Fetch >= 15,
 * Metadata 12, OffsetFetch >= 8, FindCoordinator >= 4) produces and consumes through Fjord with a
 * consumer group, and a second consumer in the same group resumes from the committed offsets.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import '../helpers/promise-with-resolvers.js';
import { Producer, Consumer, stringSerializers, stringDeserializers } from '@platformatic/kafka';
import { startTestBroker } from '../helpers/broker.js';

interface Received {
  key: string;
  value: string;
  partition: number;
  offset: bigint;
  headers: Map<string, string>;
}

async function consumeN(bootstrap: string, groupId: string, topic: string, n: number, mode: 'earliest' | 'committed'): Promise<Received[]> {
  const consumer = new Consumer({
    groupId,
    clientId: `fjord-${groupId}`,
    bootstrapBrokers: [bootstrap],
    deserializers: stringDeserializers,
    maxWaitTime: 200,
  });
  const got: Received[] = [];
  try {
    const stream = await consumer.consume({
      topics: [topic],
      mode,
      fallbackMode: 'earliest',
      autocommit: false,
      sessionTimeout: 10000,
      heartbeatInterval: 500,
    });
    const deadline = Date.now() + 30_000;
    for await (const m of stream) {
      got.push({ key: m.key as string, value: m.value as string, partition: m.partition, offset: m.offset, headers: m.headers as Map<string, string> });
      await m.commit();
      if (got.length >= n || Date.now() > deadline) break;
    }
    await stream.close();
  } finally {
    await consumer.close(true);
  }
  return got;
}

test('@platformatic/kafka producer and group consumer, resume from committed offsets', async () => {
  const b = await startTestBroker();
  try {
    const topic = 'platformatic-events';
    await b.broker.services.metadata.createTopic({ name: topic, numPartitions: 3, replicationFactor: 1 });
    await b.broker.services.replicaManager.syncTopic(topic);
    const producer = new Producer({ clientId: 'fjord-producer', bootstrapBrokers: [b.bootstrap], serializers: stringSerializers });
    const sent: string[] = [];
    try {
      for (let batch = 0; batch < 4; batch++) {
        const messages = Array.from({ length: 25 }, (_, i) => {
          const value = `v-${batch * 25 + i}`;
          sent.push(value);
          return { topic, key: `k-${(batch * 25 + i) % 7}`, value, headers: new Map([['src', 'platformatic']]) };
        });
        await producer.send({ messages });
      }
    } finally {
      await producer.close();
    }
    const first = await consumeN(b.bootstrap, 'pf-group', topic, 60, 'earliest');
    assert.equal(first.length, 60);
    for (const m of first) assert.equal(m.headers.get('src'), 'platformatic');
    // The same key always lands on the same partition.
    const partitionOfKey = new Map<string, number>();
    for (const m of first) {
      const p = partitionOfKey.get(m.key);
      if (p !== undefined) assert.equal(m.partition, p, `key ${m.key} on two partitions`);
      partitionOfKey.set(m.key, m.partition);
    }
    // A new member of the same group continues after what was committed: together, everything, once.
    const second = await consumeN(b.bootstrap, 'pf-group', topic, 40, 'committed');
    const all = [...first, ...second].map((m) => m.value).sort();
    assert.deepEqual(all, [...sent].sort());
  } finally {
    await b.stop();
  }
});
