/** Cluster mode's producer ids: blocks taken from /latest_producer_id_block, handed out in order. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ZkProducerIdBlocks } from '../../../src/coordinator/txn/producer-ids.js';

test('ids come from the allocated blocks, a new block only when one is used up, concurrent calls never share an id', async () => {
  let next = 0n;
  const taken: { start: bigint; end: bigint }[] = [];
  const zk = {
    async allocateProducerIdBlock(_broker: number, size: number) {
      const block = { start: next, end: next + BigInt(size) - 1n };
      next += BigInt(size) + 100n; // another broker took the block in between
      taken.push(block);
      return block;
    },
  };
  const ids = new ZkProducerIdBlocks(zk, 1, 3);
  const got = await Promise.all(Array.from({ length: 7 }, () => ids.generate()));
  assert.deepEqual(got, [0n, 1n, 2n, 103n, 104n, 105n, 206n]);
  assert.equal(taken.length, 3);
});

test('a failed allocation fails that call only; the next one tries again', async () => {
  let fail = true;
  const ids = new ZkProducerIdBlocks(
    {
      allocateProducerIdBlock: async () => {
        if (fail) {
          fail = false;
          throw new Error('zk down');
        }
        return { start: 50n, end: 59n };
      },
    },
    0,
    10,
  );
  await assert.rejects(ids.generate(), /zk down/);
  assert.equal(await ids.generate(), 50n);
});
