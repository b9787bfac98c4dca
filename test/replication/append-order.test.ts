/**
 * Produce requests to one partition reach the log in the order they arrived, even when a later
 * one finishes validating first (a big compressed batch inflates off the event loop while a
 * small uncompressed one is ready at once). kcat pipelines requests and saw them reordered.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { CompressionType, encodeBatch, type KafkaRecord } from '../../src/protocol/records/index.js';
import { startTestBroker } from '../helpers/broker.js';

function batch(count: number, valueBytes: number, compression: CompressionType, tag: string): Buffer {
  const records: KafkaRecord[] = Array.from({ length: count }, (_, i) => ({
    attributes: 0,
    timestampDelta: 0,
    offsetDelta: i,
    key: Buffer.from(`${tag}-${i}`),
    value: Buffer.alloc(valueBytes, i % 251),
    headers: [],
  }));
  return encodeBatch({ records, compression, baseTimestamp: BigInt(Date.now()) });
}

test('appends to one partition keep arrival order while validation runs concurrently', async () => {
  const b = await startTestBroker();
  try {
    await b.broker.services.metadata.createTopic({ name: 'order', numPartitions: 1, replicationFactor: 1 });
    await b.broker.services.replicaManager.syncTopic('order');
    const rm = b.broker.services.replicaManager;
    const req = { requiredAcks: 1 as const, origin: 'client' as const, produceVersion: 9 };
    for (const codec of [CompressionType.Gzip, CompressionType.Zstd, CompressionType.Lz4, CompressionType.Snappy]) {
      // First a batch that takes a while to inflate, then small ones that are ready at once.
      const slow = rm.appendRecords('order', 0, batch(4000, 200, codec, 'slow'), req);
      const quick = [1, 2, 3].map((n) => rm.appendRecords('order', 0, batch(1, 10, CompressionType.None, `quick${n}`), req));
      const results = await Promise.all([slow, ...quick]);
      for (const r of results) assert.equal(r.errorCode, 0, r.errorMessage ?? '');
      const offsets = results.map((r) => r.baseOffset);
      assert.deepEqual(
        [...offsets].sort((x, y) => x - y),
        offsets,
        `codec ${CompressionType[codec]}: offsets ${offsets.join(',')} follow arrival order`,
      );
    }
    // A refused request in the middle lets the next one through, still in order.
    const first = rm.appendRecords('order', 0, batch(2000, 200, CompressionType.Gzip, 'a'), req);
    const refused = rm.appendRecords('order', 0, Buffer.from('not a batch at all, long enough to be read'), req);
    const last = rm.appendRecords('order', 0, batch(1, 10, CompressionType.None, 'z'), req);
    const [a, r, z] = await Promise.all([first, refused, last]);
    assert.notEqual(r.errorCode, 0);
    assert.ok(a.baseOffset < z.baseOffset, `${a.baseOffset} < ${z.baseOffset}`);
  } finally {
    await b.stop();
  }
});
