/**
 * The log cleaner and transactions, end to end (issue 14): confluent-kafka commits, aborts and
 * commits again on a compacted topic with the same keys, plain records roll the segments, the
 * broker's own cleaner (its timer, a low min.cleanable.dirty.ratio) compacts it. As with Kafka:
 * the aborted records are gone for every reader, the aborted values never made the committed
 * ones before them look superseded, and read_committed and read_uncommitted agree.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestBroker, type TestBroker } from '../helpers/broker.js';
import { PYTHON, requirePeer } from '../helpers/peers.js';
import { run } from '../helpers/run.js';
import { consumeAll } from './confluent-consume.js';
import { join } from 'node:path';
import { CLEANER_OFFSET_CHECKPOINT, readOffsetCheckpoint } from '../../src/storage/checkpoint/checkpoint-files.js';
import { shardsOf } from '../../src/server/broker-services.js';

let b: TestBroker;
before(async () => {
  b = await startTestBroker({
    'transaction.state.log.num.partitions': '1',
    'log.cleaner.backoff.ms': '100',
    // The cleaner's progress is read from the directory's cleaner-offset-checkpoint (the partition may live on a shard worker).
    'log.flush.offset.checkpoint.interval.ms': '100',
  });
});
after(() => b.stop());

const PRODUCE = `
import sys, json
from confluent_kafka import Producer
bootstrap, topic = sys.argv[1], sys.argv[2]
p = Producer({'bootstrap.servers': bootstrap, 'transactional.id': 'compacted-tx', 'linger.ms': 5})
p.init_transactions(60)
def txn(tag, keys, commit):
    p.begin_transaction()
    for i in keys:
        p.produce(topic, key=('k%d' % i).encode(), value=('%s-%d' % (tag, i)).encode(), partition=0)
    if commit: p.commit_transaction(60)
    else:
        p.flush(30)
        p.abort_transaction(60)
txn('c1', range(5), True)
txn('aborted', range(5), False)
txn('c2', range(3), True)
plain = Producer({'bootstrap.servers': bootstrap, 'linger.ms': 0})
for i in range(40):
    plain.produce(topic, key=b'filler', value=('filler-%d' % i).encode().ljust(100, b'.'), partition=0)
    plain.flush(30)
print(json.dumps({'ok': True}))
`;

test('confluent-kafka on a compacted topic: the cleaner removes aborted records; read_committed and read_uncommitted then see what Kafka shows', async (t) => {
  if (!requirePeer(t, 'python3-confluent-kafka')) return;
  const topic = 'compacted-txn';
  await b.broker.services.metadata.createTopic({
    name: topic,
    numPartitions: 1,
    replicationFactor: 1,
    configs: { 'cleanup.policy': 'compact', 'segment.bytes': '1024', 'min.cleanable.dirty.ratio': '0.01', 'delete.retention.ms': '100' },
  });
  const p = await run(PYTHON, ['-c', PRODUCE, b.bootstrap, topic], { timeoutMs: 120_000 });
  assert.equal(p.code, 0, p.stderr);
  const txnValues = (vs: string[]): string[] => vs.filter((v) => !v.startsWith('filler'));

  // The cleaner's own timer compacts the log past the transactions (the filler rolled segments);
  // its first dirty offset reaches the directory's checkpoint, whichever thread hosts the partition.
  const lastTxnMarker = 20; // 5 + marker + 5 + marker + 3 + marker = offsets 0..17; the filler follows
  const deadline = Date.now() + 60_000;
  const cleanedTo = async () => (await readOffsetCheckpoint(join(b.dir, CLEANER_OFFSET_CHECKPOINT))).get(`${topic}-0`) ?? 0;
  while ((await cleanedTo()) < lastTxnMarker) {
    assert.ok(Date.now() < deadline, `the cleaner did not reach offset ${lastTxnMarker} in 60 s`);
    await new Promise((r) => setTimeout(r, 100));
  }
  const expected = ['c1-3', 'c1-4', 'c2-0', 'c2-1', 'c2-2'];
  assert.deepEqual(
    txnValues(await consumeAll(b.bootstrap, topic, 'read_uncommitted', 1)),
    expected,
    'aborted records gone, each key at its latest committed value',
  );
  assert.deepEqual(txnValues(await consumeAll(b.bootstrap, topic, 'read_committed', 1)), expected);
  // No transaction left open: the last stable offset is the high watermark.
  const latest = (isolationCommitted: boolean) =>
    shardsOf(b.broker.services).listOffsets([{ topic, partition: 0, timestamp: -1n, currentLeaderEpoch: -1 }], { isolationCommitted, fromReplica: false });
  const [committed] = await latest(true);
  const [uncommitted] = await latest(false);
  assert.equal(committed!.offset, uncommitted!.offset);
});
