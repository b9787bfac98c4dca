/**
 * A follower's Fetch across a leader's shards (docs/threads.md "Step 3, as built"): the leader at
 * num.io.threads=3 holds two partitions on its two workers; the follower at num.io.threads=1 has
 * one fetcher, so each of its fetches spans both workers and long-polls on both. The park must
 * be woken by the append (a follower reads to the log end), not by the HW its own fetch moves:
 * parked as a consumer, every acks=all produce waited replica.fetch.wait.max.ms (500 ms).
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { Cluster } from '../helpers/cluster.js';
import { PYTHON, requirePeer } from '../helpers/peers.js';
import { run } from '../helpers/run.js';
import { waitForTopic } from './cluster-clients.js';
import { shardOf } from '../../src/replication/shards/partition-shards.js';

const TOPIC = 'span2';
const COUNT = 50;

const CREATE_AND_PRODUCE = `
import sys, time
from confluent_kafka import Producer
from confluent_kafka.admin import AdminClient, NewTopic
bootstrap, topic, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
admin = AdminClient({'bootstrap.servers': bootstrap})
for f in admin.create_topics([NewTopic(topic, num_partitions=2, replica_assignment=[[0, 1], [0, 1]], config={'min.insync.replicas': '2'})], operation_timeout=30).values(): f.result()
p = Producer({'bootstrap.servers': bootstrap, 'acks': 'all', 'linger.ms': 0, 'message.timeout.ms': 30000})
def produce(i):
    out = []
    p.produce(topic, value=b'v%d' % i, partition=i % 2, on_delivery=lambda err, msg: out.append(err))
    p.flush(30)
    if out != [None]: raise Exception(str(out))
# Until both partitions take acks=all (the follower in the ISR), then one at a time, timed.
deadline = time.time() + 30
while True:
    try:
        produce(0); produce(1); break
    except Exception:
        if time.time() > deadline: raise
        time.sleep(0.2)
for i in range(count):
    t = time.time()
    produce(i)
    print('MS %.1f' % ((time.time() - t) * 1000), flush=True)
`;

let c: Cluster | undefined;
before(async () => {
  if (!Cluster.available()) return;
  c = await Cluster.start({ brokers: 2, brokerProps: (id) => ({ 'num.io.threads': id === 0 ? '3' : '1' }) });
});
after(() => c?.stop());

test('a follower at 1 thread fetching from a leader at 3 across two workers: acks=all answers on the append, not at replica.fetch.wait.max.ms', async (t) => {
  if (!requirePeer(t, 'zookeeper') || !requirePeer(t, 'python3-confluent-kafka')) return;
  assert.ok(c, 'the cluster started');
  assert.deepEqual([shardOf(TOPIC, 0, 3), shardOf(TOPIC, 1, 3)].sort(), [1, 2], 'the partitions on both workers of the leader');
  await c.waitForRegistered([0, 1]);
  const out = await run(PYTHON, ['-c', CREATE_AND_PRODUCE, c.bootstrap(), TOPIC, String(COUNT)], { timeoutMs: 90_000 });
  assert.equal(out.code, 0, out.stderr);
  const view = await waitForTopic(c, TOPIC);
  assert.ok(
    view.partitions.every((p) => p.leader === 0),
    'broker 0 leads both',
  );
  const ms = out.stdout.split('\n').flatMap((l) => (l.startsWith('MS ') ? [Number(l.slice(3))] : []));
  assert.equal(ms.length, COUNT);
  const sorted = [...ms].sort((a, b) => a - b);
  const p50 = sorted[Math.floor(COUNT / 2)]!;
  t.diagnostic(`acks=all one at a time: p50 ${p50} ms, max ${sorted[COUNT - 1]} ms`);
  assert.ok(p50 < 100, `p50 ${p50} ms: far below the 500 ms of a park woken by the HW`);
  assert.ok(sorted[Math.floor(COUNT * 0.8)]! < 400, `p80 ${sorted[Math.floor(COUNT * 0.8)]} ms`);
});
