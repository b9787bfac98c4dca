/**
 * Produce requests to one partition reach the log in the order they arrived, even when a later
 * one finishes validating first (a big compressed batch inflates off the event loop while a
 * small uncompressed one is ready at once). kcat pipelines requests and saw them reordered.
 * The appends go through the seam (PartitionShards.produce, which takes each part's arrival turn
 * before it returns), so the same holds whichever shard owns the partition (num.io.threads > 1).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { CompressionType, encodeBatch, type KafkaRecord } from '../../src/protocol/records/index.js';
import { startTestBroker } from '../helpers/broker.js';
import { shardsOf } from '../../src/server/broker-services.js';
import type { AppendOutcome, ProduceOptions } from '../../src/replication/shards/partition-shards.js';

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
    const shards = shardsOf(b.broker.services);
    const req: ProduceOptions = { requiredAcks: 1, origin: 'client', produceVersion: 9 };
    // One Produce per batch, as pipelined requests arrive: each takes its turn when called.
    const append = async (records: Buffer): Promise<AppendOutcome> => (await shards.produce([{ topic: 'order', partition: 0, records }], req))[0]!;
    for (const codec of [CompressionType.Gzip, CompressionType.Zstd, CompressionType.Lz4, CompressionType.Snappy]) {
      // First a batch that takes a while to inflate, then small ones that are ready at once.
      const slow = append(batch(4000, 200, codec, 'slow'));
      const quick = [1, 2, 3].map((n) => append(batch(1, 10, CompressionType.None, `quick${n}`)));
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
    const first = append(batch(2000, 200, CompressionType.Gzip, 'a'));
    const refused = append(Buffer.from('not a batch at all, long enough to be read'));
    const last = append(batch(1, 10, CompressionType.None, 'z'));
    const [a, r, z] = await Promise.all([first, refused, last]);
    assert.notEqual(r.errorCode, 0);
    assert.ok(a.baseOffset < z.baseOffset, `${a.baseOffset} < ${z.baseOffset}`);
  } finally {
    await b.stop();
  }
});
