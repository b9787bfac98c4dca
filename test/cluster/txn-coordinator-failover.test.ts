/**
 * The transaction coordinator follows leadership of `__transaction_state` (issue 14), on three
 * broker processes with real ZooKeeper: a transactional id with an open transaction; its
 * coordinator is killed -9; the new leader of the id's partition loads it and answers for it
 * (same producer id, epoch, state and partitions), and fences a new producer by aborting the
 * open transaction (CONCURRENT_TRANSACTIONS while the abort is under way).
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { Cluster } from '../helpers/cluster.js';
import { RawClient } from '../helpers/raw-client.js';
import { zkTopic } from './cluster-clients.js';
import { partitionForGroup } from '../../src/coordinator/runtime/partition-for-group.js';
import { ErrorCode } from '../../src/protocol/errors.js';
import {
  AddPartitionsToTxnRequestCodec,
  AddPartitionsToTxnResponseCodec,
  DescribeTransactionsRequestCodec,
  DescribeTransactionsResponseCodec,
  FindCoordinatorRequestCodec,
  FindCoordinatorResponseCodec,
  InitProducerIdRequestCodec,
  InitProducerIdResponseCodec,
} from '../../src/protocol/messages/index.js';

const TXN_PARTITIONS = 5;
const ID = 'tcf-tx';

let c: Cluster | undefined;
before(async () => {
  if (Cluster.available()) {
    c = await Cluster.start({
      props: {
        'transaction.state.log.num.partitions': String(TXN_PARTITIONS),
        'transaction.state.log.replication.factor': '3',
        'transaction.state.log.min.isr': '2',
      },
    });
  }
});
after(() => c?.stop());

async function ask<T>(port: number, fn: (client: RawClient) => Promise<T>): Promise<T> {
  const client = await RawClient.connect(port);
  try {
    return await fn(client);
  } finally {
    client.close();
  }
}

const find = (port: number) => ask(port, (cl) => cl.request(10, FindCoordinatorRequestCodec, FindCoordinatorResponseCodec, 3, { key: ID, keyType: 1 }));
const describe = (port: number) =>
  ask(port, (cl) => cl.request(65, DescribeTransactionsRequestCodec, DescribeTransactionsResponseCodec, 0, { transactionalIds: [ID] })).then(
    (r) => r.transactionStates[0]!,
  );
const init = (port: number) =>
  ask(port, (cl) =>
    cl.request(22, InitProducerIdRequestCodec, InitProducerIdResponseCodec, 4, {
      transactionalId: ID,
      transactionTimeoutMs: 600000,
      producerId: -1n,
      producerEpoch: -1,
    }),
  );

test('producer ids come from /latest_producer_id_block: no two brokers hand out the same one', async (t) => {
  if (!c) {
    t.skip('ZooKeeper is not available');
    return;
  }
  const ids: bigint[] = [];
  for (const b of c.brokers) {
    for (let i = 0; i < 2; i++) {
      const r = await ask(b.port, (cl) =>
        cl.request(22, InitProducerIdRequestCodec, InitProducerIdResponseCodec, 4, {
          transactionalId: null,
          transactionTimeoutMs: -1,
          producerId: -1n,
          producerEpoch: -1,
        }),
      );
      assert.equal(r.errorCode, 0);
      ids.push(r.producerId);
    }
  }
  assert.equal(new Set(ids).size, ids.length, `distinct ids: ${ids.join(', ')}`);
  const node = await (await c.zk()).getIfExists('/latest_producer_id_block');
  const block = JSON.parse(node!.data.toString()) as { block_end: string };
  assert.ok(
    ids.every((id) => id <= BigInt(block.block_end)),
    'every id is inside a block taken from ZooKeeper',
  );
});

test('a new leader of the transactional id partition loads it and coordinates the open transaction', async (t) => {
  if (!c) {
    t.skip('ZooKeeper is not available');
    return;
  }
  const cluster = c;
  const alive = () => cluster.brokers.filter((b) => b.running);
  const first = await cluster.waitFor('the transaction coordinator', 60_000, async () => {
    const r = await find(cluster.broker(0).port).catch(() => undefined);
    return r && r.errorCode === 0 ? r : undefined;
  });
  const partition = partitionForGroup(ID, TXN_PARTITIONS);
  await cluster.waitFor(
    `__transaction_state-${partition}'s ISR whole`,
    60_000,
    async () => (await zkTopic(cluster, '__transaction_state'))?.partitions[partition]?.isr.length === 3,
  );
  const coord = cluster.broker(first.nodeId);
  const pid = await cluster.waitFor('InitProducerId', 30_000, async () => {
    const r = await init(coord.port);
    return r.errorCode === 0 ? r : undefined;
  });
  // The transaction's partition: one of __transaction_state's own (it exists; any topic would do).
  const add = await ask(coord.port, (cl) =>
    cl.request(24, AddPartitionsToTxnRequestCodec, AddPartitionsToTxnResponseCodec, 3, {
      v3AndBelowTransactionalId: ID,
      v3AndBelowProducerId: pid.producerId,
      v3AndBelowProducerEpoch: pid.producerEpoch,
      v3AndBelowTopics: [{ name: '__transaction_state', partitions: [(partition + 1) % TXN_PARTITIONS] }],
    }),
  );
  assert.equal(add.resultsByTopicV3AndBelow[0]!.resultsByPartition[0]!.partitionErrorCode, 0);

  await cluster.killAndExpire(coord.id); // its session closed at once, not after the timeout
  const other = alive()[0]!;
  const next = await cluster.waitFor('a new transaction coordinator', 90_000, async () => {
    const r = await find(other.port).catch(() => undefined);
    if (!r || r.errorCode !== 0 || r.nodeId === first.nodeId) return undefined;
    const d = await describe(cluster.broker(r.nodeId).port).catch(() => undefined);
    return d && d.errorCode === 0 ? { node: r.nodeId, d } : undefined;
  });
  assert.equal(next.d.transactionState, 'Ongoing');
  assert.equal(next.d.producerId, pid.producerId);
  assert.equal(next.d.producerEpoch, pid.producerEpoch);
  assert.deepEqual(next.d.topics, [{ topic: '__transaction_state', partitions: [(partition + 1) % TXN_PARTITIONS] }]);
  // The old coordinator's broker is gone; the survivors that do not lead the partition say so.
  for (const b of alive().filter((x) => x.id !== next.node)) assert.equal((await describe(b.port)).errorCode, ErrorCode.NOT_COORDINATOR);
  // A new producer: the open transaction is aborted first.
  const fenced = await init(cluster.broker(next.node).port);
  assert.equal(fenced.errorCode, ErrorCode.CONCURRENT_TRANSACTIONS);
  const d2 = await describe(cluster.broker(next.node).port);
  assert.ok(['PrepareAbort', 'CompleteAbort'].includes(d2.transactionState), d2.transactionState);
  assert.equal(d2.producerEpoch, pid.producerEpoch + 1);
});
