import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestBroker, type TestBroker } from '../../helpers/broker.js';
import { RawClient } from '../../helpers/raw-client.js';
import { ErrorCode } from '../../../src/protocol/errors.js';
import { CompressionType } from '../../../src/protocol/records/index.js';
import { requestFrameBuffers } from '../../../src/server/network/frame-buffers.js';
import { sharedFrameBuffers } from '../../../src/server/network/shared-frame-buffers.js';
import { WorkerShards } from '../../../src/replication/shards/worker/worker-shards.js';
import { batchOf, createTopic, fetchOne, produce, valuesOf } from './data-plane-helpers.js';

let b: TestBroker;
let c: RawClient;
before(async () => {
  b = await startTestBroker({ 'auto.create.topics.enable': 'false' });
  c = await RawClient.connect(b.port);
  await createTopic(b, 'large', 2);
});
after(async () => {
  c.close();
  await b.stop();
});

/**
 * 200 records of ~1000 bytes of hex digits from a seeded generator (so they stay above 64 KiB
 * compressed too): a ~200 KB frame in many socket chunks. Compressed batches are inflated off the
 * event loop, so later frames are read while earlier ones are still being appended.
 */
function valuesFor(request: number): string[] {
  let seed = request * 7919 + 1;
  const next = (): number => (seed = (seed * 1103515245 + 12345) >>> 0);
  return Array.from({ length: 200 }, () => Array.from({ length: 125 }, () => next().toString(16).padStart(8, '0')).join(''));
}

test('pipelined large produces (frames reused once answered) keep every record intact', async () => {
  const expected: string[][] = [[], []];
  for (let round = 0; round < 3; round++) {
    const requests = Array.from({ length: 8 }, (_, k) => round * 8 + k);
    const answers = await Promise.all(
      requests.map((r) =>
        produce(c, 9, 'large', r % 2, batchOf(valuesFor(r), { compression: r % 2 === 0 ? CompressionType.Lz4 : CompressionType.None }), r % 3 === 0 ? 1 : -1),
      ),
    );
    for (const [k, res] of answers.entries()) {
      const pr = res.responses[0]!.partitionResponses[0]!;
      assert.equal(pr.errorCode, ErrorCode.NONE);
      const partition = requests[k]! % 2;
      assert.equal(pr.baseOffset, BigInt(expected[partition]!.length));
      expected[partition]!.push(...valuesFor(requests[k]!));
    }
  }
  const shards = b.broker.services.shards;
  // Network threads (num.network.threads > 1) hand frames over in shared memory of their own, not from these pools.
  const fromNetworkThreads = (b.broker.socketServer?.networkThreadAccepts().length ?? 0) > 0;
  if (shards instanceof WorkerShards) {
    // Shard workers (num.io.threads > 1): the frames are shared memory, read in place, reused once every shard answered.
    assert.ok(shards.stats.sharedBytes > 0, 'the records crossed as windows of shared memory');
    assert.equal(shards.stats.copiedBytes, 0, 'no produce bytes copied on the way to the workers');
    if (!fromNetworkThreads) assert.ok(sharedFrameBuffers.idleSize > 0, 'the produce frames went back to the shared pool');
  } else if (!fromNetworkThreads) {
    assert.ok(requestFrameBuffers.idleSize > 0, 'the produce frames went through the pool');
  }
  for (const partition of [0, 1]) {
    const got: string[] = [];
    while (got.length < expected[partition]!.length) {
      const p = (await fetchOne(c, 12, 'large', partition, got.length)).responses[0]!.partitions[0]!;
      assert.equal(p.errorCode, ErrorCode.NONE);
      const values = valuesOf(p.records);
      assert.ok(values.length > 0);
      got.push(...values);
    }
    assert.deepEqual(got, expected[partition]);
  }
});
