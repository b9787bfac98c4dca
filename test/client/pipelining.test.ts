import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestBroker } from '../helpers/broker.js';
import { Consumer, Producer, type RecordMetadata } from '../../src/client/index.js';

test('produce() callbacks: records sent before metadata is known keep their order across many pipelined batches', async () => {
  const b = await startTestBroker(); // auto-creates topics
  const producer = new Producer({ bootstrapServers: b.bootstrap, acks: 1, batchSize: 2048, lingerMs: 1 });
  const consumer = new Consumer({ bootstrapServers: b.bootstrap, maxPollRecords: 333, maxPartitionFetchBytes: 16384 });
  const n = 20_000;
  try {
    const delivered: (RecordMetadata | null)[] = new Array<RecordMetadata | null>(n).fill(null);
    let errors = 0;
    // All queued synchronously, before the producer has any metadata for the fresh topic.
    for (let i = 0; i < n; i++) {
      producer.produce({ topic: 'fresh', value: `v${i}` }, (err, m) => {
        if (err) errors++;
        delivered[i] = m;
      });
    }
    await producer.flush();
    assert.equal(errors, 0);
    assert.ok(
      delivered.every((m) => m !== null),
      'flush resolved only once every record was acknowledged',
    );
    assert.deepEqual([...new Set(delivered.map((m) => m!.partition))], [0]);
    delivered.forEach((m, i) => assert.equal(m!.offset, BigInt(i), `record ${i}`));
    const viaPromise = await producer.send({ topic: 'fresh', value: 'last' });
    assert.equal(viaPromise.offset, BigInt(n));

    // Read back through many small fetches (prefetching while records are handed out).
    consumer.assign([{ topic: 'fresh', partition: 0 }]);
    consumer.seek({ topic: 'fresh', partition: 0 }, 0n);
    const values: string[] = [];
    const deadline = Date.now() + 20_000;
    while (values.length <= n && Date.now() < deadline) {
      for (const r of await consumer.poll(1000)) {
        assert.equal(r.offset, BigInt(values.length), 'offsets arrive in order, none skipped or repeated');
        values.push(r.value!.toString());
      }
    }
    assert.equal(values.length, n + 1);
    assert.equal(values[n - 1], `v${n - 1}`);
    assert.equal(values[n], 'last');
    assert.equal(consumer.position({ topic: 'fresh', partition: 0 }), BigInt(n + 1));
  } finally {
    await consumer.close();
    await producer.close();
    await b.stop();
  }
});

test('produce() on a closed producer reports the error to the callback, asynchronously', async () => {
  const b = await startTestBroker();
  const producer = new Producer({ bootstrapServers: b.bootstrap });
  try {
    await producer.close();
    let syncReturned = false;
    const err = await new Promise<Error | null>((resolve) => {
      producer.produce({ topic: 't', value: 'x' }, (e) => {
        assert.ok(syncReturned, 'callback must not run before produce() returns');
        resolve(e);
      });
      syncReturned = true;
    });
    assert.match(err?.message ?? '', /closed/);
  } finally {
    await b.stop();
  }
});
