/**
 * Cluster mode on shard worker threads (docs/threads.md step 3): three broker processes, each at
 * num.io.threads=3 (shard 0 on the main thread, two workers), a topic with replication factor 3
 * whose partitions sit on both workers of every broker. A real client (confluent-kafka, acks=all,
 * idempotent) produces; a follower is killed and comes back (its leaders, on worker threads,
 * shrink the ISR and expand it again: ZooKeeper is written by each broker's main thread for
 * them, read here from ZooKeeper); a leader is killed (the new leader, on a worker, has every
 * acknowledged record); a consumer reads every acknowledged record exactly once.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { Cluster } from '../helpers/cluster.js';
import { PYTHON, requirePeer } from '../helpers/peers.js';
import { run } from '../helpers/run.js';
import { zkTopic, waitForTopic, type PartitionView } from './cluster-clients.js';
import { shardOf } from '../../src/replication/shards/partition-shards.js';
import { freePort } from '../interop/groups/crash-helpers.js';

const TOPIC = 'threads3';
const PARTITIONS = 4;
const THREADS = 3;

const PRODUCE = `
import sys
from confluent_kafka import Producer
bootstrap, topic, prefix, count, partitions = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5])
p = Producer({'bootstrap.servers': bootstrap, 'acks': 'all', 'enable.idempotence': True, 'linger.ms': 5,
              'message.timeout.ms': 30000, 'topic.metadata.refresh.interval.ms': 1000})
def done(err, msg):
    if err is None: print('ACK', msg.value().decode(), flush=True)
for i in range(count):
    p.produce(topic, value=('%s-%d' % (prefix, i)).encode(), partition=i % partitions, on_delivery=done)
    p.poll(0)
p.flush(60)
`;

const CONSUME = `
import sys
from confluent_kafka import Consumer, TopicPartition
bootstrap, topic, partitions = sys.argv[1], sys.argv[2], int(sys.argv[3])
c = Consumer({'bootstrap.servers': bootstrap, 'group.id': 'threads3-reader', 'enable.auto.commit': False})
ends = {}
for p in range(partitions):
    ends[p] = c.get_watermark_offsets(TopicPartition(topic, p), timeout=30)[1]
c.assign([TopicPartition(topic, p, 0) for p in range(partitions)])
left = {p for p in range(partitions) if ends[p] > 0}
while left:
    for m in c.consume(100, 1.0):
        if m.error(): raise Exception(str(m.error()))
        print('REC', m.value().decode(), flush=True)
        if m.offset() + 1 >= ends[m.partition()]: left.discard(m.partition())
c.close()
`;

let c: Cluster | undefined;
const metricsPorts: number[] = [];
before(async () => {
  if (!Cluster.available()) return;
  for (let id = 0; id < 3; id++) metricsPorts.push(await freePort());
  c = await Cluster.start({
    props: { 'num.io.threads': String(THREADS), 'replica.lag.time.max.ms': '2000', 'zookeeper.session.timeout.ms': '20000' },
    brokerProps: (id) => ({ 'metrics.listener': `http://127.0.0.1:${metricsPorts[id]}` }),
  });
});

/** A counter or gauge of broker `id`'s scrape, summed over its series. */
async function metric(id: number, name: string): Promise<number> {
  const text = await (await fetch(`http://127.0.0.1:${metricsPorts[id]}/metrics`)).text();
  return text
    .split('\n')
    .filter((l) => l.startsWith(`${name} `) || l.startsWith(`${name}{`))
    .reduce((sum, l) => sum + Number(l.slice(l.lastIndexOf(' ') + 1)), 0);
}
after(() => c?.stop());

async function produce(cluster: Cluster, prefix: string, count: number): Promise<string[]> {
  const out = await run(PYTHON, ['-c', PRODUCE, cluster.bootstrap(), TOPIC, prefix, String(count), String(PARTITIONS)], { timeoutMs: 90_000 });
  assert.equal(out.code, 0, out.stderr);
  return out.stdout.split('\n').flatMap((l) => (l.startsWith('ACK ') ? [l.slice(4)] : []));
}

const isrOf = async (cluster: Cluster): Promise<PartitionView[]> => (await zkTopic(cluster, TOPIC))?.partitions ?? [];

test('3 brokers at num.io.threads=3, RF 3: acks=all through a follower and a leader killed, every acknowledged record read once', async (t) => {
  if (!requirePeer(t, 'zookeeper') || !requirePeer(t, 'python3-confluent-kafka')) return;
  const cluster = c!;
  await cluster.waitForRegistered([0, 1, 2]);
  // The partitions land on both workers of every broker (shard 0 holds the internal topics only).
  const shards = new Set(Array.from({ length: PARTITIONS }, (_, p) => shardOf(TOPIC, p, THREADS)));
  assert.deepEqual([...shards].sort(), [1, 2]);
  for (const id of [0, 1, 2]) assert.match(cluster.broker(id).logTail(400), /2 shard worker threads \(cluster mode\)/);

  const created = await run(PYTHON, ['-c', CREATE, cluster.bootstrap(), TOPIC, String(PARTITIONS)], { timeoutMs: 60_000 });
  assert.equal(created.code, 0, created.stderr);
  const first = await waitForTopic(cluster, TOPIC);
  const acked = await produce(cluster, 'a', 200);
  assert.equal(acked.length, 200);

  // A follower killed: while it still holds its ZooKeeper session (20 s), only the leaders can
  // take it out of their ISR: each shrink is a worker's ISR write, done by its broker's main
  // thread at the same leader epoch (a controller's shrink would bump it). acks=all produces wait
  // for that shrink, then complete with min.insync.replicas=2.
  const follower = first.partitions[0]!.replicas.find((r) => r !== first.partitions[0]!.leader)!;
  const ledElsewhere = first.partitions.filter((p) => p.leader !== follower).map((p) => p.partition);
  await cluster.broker(follower).kill();
  const producing = produce(cluster, 'b', 200);
  const shrunk = await cluster.waitFor(`the leaders to drop broker ${follower} from their ISR`, 30_000, async () => {
    const now = await zkTopic(cluster, TOPIC);
    return now && ledElsewhere.every((p) => !now.partitions[p]!.isr.includes(follower)) ? now : undefined;
  });
  for (const p of ledElsewhere) assert.equal(shrunk.epochs.get(p)!.leaderEpoch, first.epochs.get(p)!.leaderEpoch, `partition ${p} shrunk by its leader`);
  // Its own partitions move once its session is gone; then it comes back and its leaders take it in again.
  await cluster.expireDead(follower);
  acked.push(...(await producing));
  await cluster.broker(follower).start();
  await cluster.waitFor(`broker ${follower} back in every ISR`, 30_000, async () => (await isrOf(cluster)).every((p) => p.isr.length === 3) || undefined);
  // The metrics count the workers' side: the follower's fetchers (all on workers) appended bytes,
  // and the leaders' ISR changes were counted where their main thread wrote them.
  assert.ok((await metric(follower, 'kafka_server_brokertopicmetrics_replicationbytesin_total')) > 0, 'replication bytes in from the workers');
  const leadersNow = [0, 1, 2].filter((id) => id !== follower);
  const changes = async (name: string) => (await Promise.all(leadersNow.map((id) => metric(id, name)))).reduce((a, b) => a + b, 0);
  assert.ok((await changes('kafka_server_replicamanager_isrshrinks_total')) >= ledElsewhere.length, 'ISR shrinks counted');
  assert.ok((await changes('kafka_server_replicamanager_isrexpands_total')) >= 1, 'ISR expands counted');

  // A leader killed: its partitions move to another broker of the ISR, which has every acknowledged record.
  const victim = (await isrOf(cluster)).find((p) => p.leader !== follower)?.leader ?? follower;
  await cluster.killAndExpire(victim);
  await cluster.waitFor(
    `new leaders for broker ${victim}'s partitions`,
    30_000,
    async () => (await isrOf(cluster)).every((p) => p.leader >= 0 && p.leader !== victim) || undefined,
  );
  acked.push(...(await produce(cluster, 'c', 200)));
  assert.equal(acked.length, 600, 'every acks=all produce acknowledged');

  const read = await run(PYTHON, ['-c', CONSUME, cluster.bootstrap([0, 1, 2].filter((id) => id !== victim)), TOPIC, String(PARTITIONS)], { timeoutMs: 60_000 });
  assert.equal(read.code, 0, read.stderr);
  const values = read.stdout.split('\n').flatMap((l) => (l.startsWith('REC ') ? [l.slice(4)] : []));
  const seen = new Map<string, number>();
  for (const v of values) seen.set(v, (seen.get(v) ?? 0) + 1);
  const lost = acked.filter((v) => !seen.has(v));
  const twice = [...seen].filter(([, n]) => n > 1).map(([v]) => v);
  t.diagnostic(
    `acknowledged ${acked.length}, read ${values.length}, lost ${lost.length}, twice ${twice.length}; follower ${follower}, leader killed ${victim}`,
  );
  assert.deepEqual(lost, [], 'no acknowledged record lost');
  assert.deepEqual(twice, [], 'none read twice');
});

const CREATE = `
import sys
from confluent_kafka.admin import AdminClient, NewTopic
admin = AdminClient({'bootstrap.servers': sys.argv[1]})
fs = admin.create_topics([NewTopic(sys.argv[2], num_partitions=int(sys.argv[3]), replication_factor=3, config={'min.insync.replicas': '2'})], operation_timeout=30)
for f in fs.values(): f.result()
`;
