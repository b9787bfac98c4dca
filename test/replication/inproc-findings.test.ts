/**
 * Findings of the replication property test (replication-properties.test.ts), each replayed as a
 * deterministic scenario on the in-process cluster.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { InprocCluster } from '../helpers/inproc-cluster.js';
import { requirePeer } from '../helpers/peers.js';
import { ZOOKEEPER_JAR } from '../helpers/zookeeper.js';
import { Connection } from '../../src/client/connection.js';
import { Api } from '../../src/client/apis.js';
import { encodeBatch } from '../../src/protocol/records/index.js';

let c: InprocCluster | undefined;
before(async () => {
  if (existsSync(ZOOKEEPER_JAR)) c = await InprocCluster.start({ brokers: 3 });
});
after(() => c?.stop());

async function produce(port: number, topic: string, values: string[]): Promise<number> {
  const conn = await Connection.connect('127.0.0.1', port, { clientId: 'findings', connectTimeoutMs: 5000, requestTimeoutMs: 15_000 });
  try {
    const records = encodeBatch({
      records: values.map((v, i) => ({ attributes: 0, timestampDelta: 0, offsetDelta: i, key: null, value: Buffer.from(v), headers: [] })),
      baseTimestamp: BigInt(Date.now()),
    });
    const res = await conn.send(Api.Produce, { acks: -1, timeoutMs: 10_000, topicData: [{ name: topic, partitionData: [{ index: 0, records }] }] });
    return res.responses[0]!.partitionResponses[0]!.errorCode;
  } finally {
    conn.close();
  }
}

test('a leader that wrote nothing in its epoch follows the next leader and catches up (its epoch predates every epoch the new leader knows)', async (t) => {
  // Property test seed 1707682679: the old leader's leader-epoch cache holds epoch 0 (assigned on
  // becoming leader, no records); the new leader's holds only epoch 1. Fetch with
  // last_fetched_epoch 0 made the new leader answer OFFSET_OUT_OF_RANGE (its endOffsetFor(0)
  // found no epoch <= 0), the follower learnt the leader's offsets, fetched again with the same
  // last_fetched_epoch, and so on without end: it never caught up nor rejoined the ISR. Kafka's
  // endOffsetFor answers an epoch older than all it knows with (that epoch, start of the first
  // later one).
  if (!requirePeer(t, 'zookeeper') || !c) return;
  const cl = c;
  await cl.createTopic('f1', [2, 0, 1], { 'min.insync.replicas': '2' });
  assert.equal(await cl.moveLeader('f1', 0, 1), 0);
  await cl.waitFor('1 leads f1-0', 20_000, () => cl.partition(1, 'f1')?.isLeader === true);
  // Retried as a client would: the produce path also wants the UpdateMetadata that follows LeaderAndIsr.
  await cl.waitFor('an acks=all produce to leader 1', 20_000, async () => (await produce(cl.broker(1).port, 'f1', ['a', 'b', 'c'])) === 0);
  await cl.waitFor('broker 2 (the first leader) caught up with leader 1', 20_000, () => cl.partition(2, 'f1')?.logEndOffset === 3);
  await cl.waitFor('every replica in the ISR', 20_000, async () => (await cl.zkState('f1'))?.isr.length === 3);
});
