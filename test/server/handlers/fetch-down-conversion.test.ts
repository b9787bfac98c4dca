/**
 * Fetch v0-v3 down-conversion respects the request's byte limits, as Kafka's lazy
 * down-conversion does: each partition gets at most its partition max_bytes and what is left of
 * max_bytes; only the response's first message may be larger (so a consumer always progresses).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { CompressionType, readLegacyMessageSet } from '../../../src/protocol/records/index.js';
import { startTestBroker } from '../../helpers/broker.js';
import { RawClient } from '../../helpers/raw-client.js';
import { batchOf, createTopic, fetch, produce } from './data-plane-helpers.js';

const VALUE = 'x'.repeat(1000);

test('Fetch v0/v1/v3: converted bytes stay within partition and response max_bytes; the first message is whole', async () => {
  const b = await startTestBroker();
  const c = await RawClient.connect(b.port);
  try {
    await createTopic(b, 't', 2);
    for (const partition of [0, 1]) {
      const res = await produce(
        c,
        3,
        't',
        partition,
        batchOf(
          Array.from({ length: 100 }, () => VALUE),
          { compression: CompressionType.Gzip },
        ),
      );
      assert.equal(res.responses[0]!.partitionResponses[0]!.errorCode, 0);
    }
    const both = (partitionMaxBytes: number, maxBytes: number, version: number) =>
      fetch(c, version, {
        maxWaitMs: 0,
        minBytes: 0,
        maxBytes,
        topics: [{ topic: 't', partitions: [0, 1].map((partition) => ({ partition, fetchOffset: 0n, partitionMaxBytes })) }],
      });
    const sizes = (res: Awaited<ReturnType<typeof both>>) =>
      res.responses[0]!.partitions.map((p) => {
        assert.equal(p.errorCode, 0);
        const msgs = readLegacyMessageSet(p.records ?? Buffer.alloc(0)).messages;
        assert.deepEqual(
          msgs.map((m) => m.offset),
          msgs.map((_, i) => BigInt(i)),
          'whole messages from the fetch offset',
        );
        return { bytes: p.records?.length ?? 0, count: msgs.length };
      });

    // v3: 15,000 per partition within 20,000 for the response.
    const [a, bb] = sizes(await both(15_000, 20_000, 3));
    assert.ok(a!.bytes <= 15_000 && a!.count > 0, `partition 0: ${a!.bytes} bytes`);
    assert.ok(a!.bytes + bb!.bytes <= 20_000 && bb!.count > 0, `total ${a!.bytes + bb!.bytes} bytes`);
    for (const version of [0, 1, 3]) {
      // Partition max_bytes below one message. v3: the response's first message is sent whole,
      // the other partition waits for a later fetch. v0-v2 read with a hard limit (as Kafka):
      // the stored batch itself does not fit, so nothing is read or converted.
      const [p0, p1] = sizes(await both(100, 1 << 20, version));
      assert.equal(p0!.count, version === 3 ? 1 : 0, `v${version}: first partition`);
      assert.equal(p1!.count, 0, `v${version}: nothing over the limit after the first message`);
      // Roomy limits: everything (100 messages of ~1 KB each, per partition).
      const [r0, r1] = sizes(await both(1 << 20, 1 << 22, version));
      assert.deepEqual([r0!.count, r1!.count], [100, 100]);
    }
  } finally {
    c.close();
    await b.stop();
  }
});
