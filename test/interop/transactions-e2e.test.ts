/**
 * Transactions end to end with nothing faked (issue 14): the coordinator sends real
 * WriteTxnMarkers to the partition leader, which writes the markers, indexes the aborts and
 * moves the last stable offset. confluent-kafka commits, aborts and commits again over two
 * partitions; a read_committed consumer (librdkafka) then sees exactly the committed records and
 * a read_uncommitted one sees all. A second producer with the same transactional.id fences the
 * first, whose open transaction is aborted.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestBroker, type TestBroker } from '../helpers/broker.js';
import { PYTHON, requirePeer } from '../helpers/peers.js';
import { run } from '../helpers/run.js';
import { consumeAll } from './confluent-consume.js';

let b: TestBroker;
before(async () => {
  b = await startTestBroker({ 'transaction.state.log.num.partitions': '3' });
});
after(() => b.stop());

const PRODUCE = `
import sys, json
from confluent_kafka import Producer
bootstrap, topic = sys.argv[1], sys.argv[2]
p = Producer({'bootstrap.servers': bootstrap, 'transactional.id': 'e2e-tx', 'linger.ms': 5})
p.init_transactions(60)
def txn(tag, n, commit):
    p.begin_transaction()
    for i in range(n):
        p.produce(topic, value=('%s-%d' % (tag, i)).encode(), partition=i % 2)
    if commit: p.commit_transaction(60)
    else:
        p.flush(30)  # sent before the abort: librdkafka purges records still queued
        p.abort_transaction(60)
txn('first', 10, True)
txn('aborted', 10, False)
txn('second', 5, True)
print(json.dumps({'ok': True}))
`;

const FENCE = `
import sys, json
from confluent_kafka import Producer, KafkaException
bootstrap, topic = sys.argv[1], sys.argv[2]
old = Producer({'bootstrap.servers': bootstrap, 'transactional.id': 'fence-tx'})
old.init_transactions(60)
old.begin_transaction()
old.produce(topic, value=b'zombie', partition=0)
old.flush(30)
new = Producer({'bootstrap.servers': bootstrap, 'transactional.id': 'fence-tx'})
new.init_transactions(60)
new.begin_transaction(); new.produce(topic, value=b'successor', partition=0); new.commit_transaction(60)
fenced = None
try:
    old.commit_transaction(30)
except KafkaException as e:
    fenced = e.args[0].name()
print(json.dumps({'fenced': fenced}))
`;

const consume = async (topic: string, isolation: 'read_committed' | 'read_uncommitted', partitions: number): Promise<string[]> =>
  (await consumeAll(b.bootstrap, topic, isolation, partitions)).sort();

const tags = (tag: string, n: number): string[] => Array.from({ length: n }, (_, i) => `${tag}-${i}`);

test('confluent-kafka: commit, abort, commit; read_committed sees exactly the committed records, read_uncommitted all', async (t) => {
  if (!requirePeer(t, 'python3-confluent-kafka')) return;
  await b.broker.services.metadata.createTopic({ name: 'e2e', numPartitions: 2, replicationFactor: 1, configs: {} });
  const p = await run(PYTHON, ['-c', PRODUCE, b.bootstrap, 'e2e'], { timeoutMs: 120_000 });
  assert.equal(p.code, 0, p.stderr);
  assert.deepEqual(await consume('e2e', 'read_committed', 2), [...tags('first', 10), ...tags('second', 5)].sort());
  assert.deepEqual(await consume('e2e', 'read_uncommitted', 2), [...tags('first', 10), ...tags('aborted', 10), ...tags('second', 5)].sort());
});

test('confluent-kafka: a second producer with the same transactional.id fences the first; its open transaction is aborted', async (t) => {
  if (!requirePeer(t, 'python3-confluent-kafka')) return;
  await b.broker.services.metadata.createTopic({ name: 'fence', numPartitions: 1, replicationFactor: 1, configs: {} });
  const r = await run(PYTHON, ['-c', FENCE, b.bootstrap, 'fence'], { timeoutMs: 120_000 });
  assert.equal(r.code, 0, r.stderr);
  const out = JSON.parse(r.stdout) as { fenced: string | null };
  assert.ok(out.fenced !== null, 'the old producer cannot commit');
  assert.deepEqual(await consume('fence', 'read_committed', 1), ['successor']);
});
