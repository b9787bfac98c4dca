/**
 * Deleting a topic removes every group's committed offsets for it (tombstones in
 * __consumer_offsets), so a topic recreated under the same name is read from its start, also
 * after a broker restart. Driven by kafkajs and by confluent-kafka (librdkafka).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import kafkajs from 'kafkajs';
import { startTestBroker, type TestBroker } from '../helpers/broker.js';
import { PYTHON, requirePeer } from '../helpers/peers.js';
import { run } from '../helpers/run.js';

const PROPS = { 'offsets.topic.num.partitions': '4', 'auto.create.topics.enable': 'false' };

async function withBrokerDir(fn: (dir: string) => Promise<void>): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'fjord-deleted-offsets-'));
  try {
    await fn(dir);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

const kafka = (b: TestBroker) =>
  new kafkajs.Kafka({ clientId: 'fjord-test', brokers: [b.bootstrap], logLevel: kafkajs.logLevel.NOTHING, retry: { retries: 5 } });

/**
 * Commits offsets as kafkajs's admin.setOffsets does (a member joins, pauses the topic, seeks,
 * and stopping commits the seeks), with a 100 ms fetch wait: the consumer setOffsets makes
 * waits kafkajs's default 5 s for its one (paused) fetch, and takes no option to shorten it.
 */
async function setOffsets(b: TestBroker, groupId: string, topic: string, partitions: { partition: number; offset: string }[]): Promise<void> {
  const consumer = kafka(b).consumer({ groupId, maxWaitTimeInMs: 100 });
  await consumer.connect();
  try {
    await consumer.subscribe({ topic, fromBeginning: true });
    await new Promise<void>((resolve, reject) => {
      consumer.on(consumer.events.FETCH, () => void consumer.stop().then(resolve, reject));
      consumer.run({ eachBatchAutoResolve: false, eachBatch: async () => undefined }).catch(reject);
      consumer.pause([{ topic }]);
      for (const p of partitions) consumer.seek({ topic, ...p });
    });
  } finally {
    await consumer.disconnect();
  }
}

async function committed(b: TestBroker, groupId: string, topic: string): Promise<string[]> {
  const admin = kafka(b).admin();
  await admin.connect();
  try {
    const res = await admin.fetchOffsets({ groupId, topics: [topic] });
    return res[0]!.partitions.sort((x, y) => x.partition - y.partition).map((p) => `${p.partition}:${p.offset}`);
  } finally {
    await admin.disconnect();
  }
}

test('kafkajs: offsets of a deleted topic are gone, for the recreated topic and after a restart; other topics keep theirs', async () => {
  await withBrokerDir(async (dir) => {
    let b = await startTestBroker(PROPS, dir);
    try {
      const admin = kafka(b).admin();
      await admin.connect();
      await admin.createTopics({
        topics: [
          { topic: 'doomed', numPartitions: 2 },
          { topic: 'kept', numPartitions: 1 },
        ],
        waitForLeaders: true,
      });
      await setOffsets(b, 'g1', 'doomed', [
        { partition: 0, offset: '10' },
        { partition: 1, offset: '10' },
      ]);
      await setOffsets(b, 'g1', 'kept', [{ partition: 0, offset: '7' }]);
      await setOffsets(b, 'g2', 'doomed', [{ partition: 0, offset: '3' }]);
      assert.deepEqual(await committed(b, 'g1', 'doomed'), ['0:10', '1:10']);

      await admin.deleteTopics({ topics: ['doomed'] });
      await admin.createTopics({ topics: [{ topic: 'doomed', numPartitions: 2 }], waitForLeaders: true });
      await admin.disconnect();
      assert.deepEqual(await committed(b, 'g1', 'doomed'), ['0:-1', '1:-1'], 'the recreated topic has no committed offsets');
      assert.deepEqual(await committed(b, 'g2', 'doomed'), ['0:-1', '1:-1']);
      assert.deepEqual(await committed(b, 'g1', 'kept'), ['0:7'], 'other topics keep their offsets');

      await b.stop();
      b = await startTestBroker(PROPS, dir);
      await b.broker.services.groupCoordinator.loaded();
      assert.deepEqual(await committed(b, 'g1', 'doomed'), ['0:-1', '1:-1'], 'still gone after a restart (tombstones are durable)');
      assert.deepEqual(await committed(b, 'g2', 'doomed'), ['0:-1', '1:-1']);
      assert.deepEqual(await committed(b, 'g1', 'kept'), ['0:7']);
      // g2 had nothing else: the group itself is gone, as after offset expiry.
      const listed = b.broker.services.groupCoordinator
        .listGroups([], [])
        .groups.map((g) => g.groupId)
        .sort();
      assert.deepEqual(listed, ['g1']);
    } finally {
      await b.stop();
    }
  });
});

const CONFLUENT = `
import sys, json
from confluent_kafka import Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic
mode, bootstrap = sys.argv[1], sys.argv[2]
conf = {'bootstrap.servers': bootstrap}
def wait(futures):
    for f in futures.values(): f.result(30)
def consumer():
    return Consumer({**conf, 'group.id': 'ck', 'enable.auto.commit': False, 'auto.offset.reset': 'earliest'})
def committed(c):
    tps = c.committed([TopicPartition('ck-topic', 0), TopicPartition('ck-topic', 1), TopicPartition('ck-kept', 0)], timeout=30)
    return ['%s-%d:%d' % (tp.topic, tp.partition, tp.offset) for tp in tps]
out = {}
if mode == 'commit':
    a = AdminClient(conf)
    wait(a.create_topics([NewTopic('ck-topic', 2, 1), NewTopic('ck-kept', 1, 1)]))
    c = consumer()
    c.commit(offsets=[TopicPartition('ck-topic', 0, 10), TopicPartition('ck-topic', 1, 10), TopicPartition('ck-kept', 0, 4)], asynchronous=False)
    out['committed'] = committed(c)
    c.close()
    wait(a.delete_topics(['ck-topic'], operation_timeout=30))
elif mode == 'recreate':
    a = AdminClient(conf)
    wait(a.create_topics([NewTopic('ck-topic', 2, 1)]))
    p = Producer(conf)
    for i in range(15): p.produce('ck-topic', value=b'new-%d' % i, partition=0)
    out['unsent'] = p.flush(30)
    c = consumer()
    out['committed'] = committed(c)
    c.subscribe(['ck-topic'])
    seen = []
    while len(seen) < 15:
        m = c.poll(30)
        if m is None: break
        if m.error(): out['error'] = str(m.error()); break
        seen.append(m.offset())
    out['offsets'] = seen
    c.close()
print(json.dumps(out))
`;

test('confluent-kafka: delete a topic with committed offsets, restart, recreate it: the group reads the new topic from offset 0', async (t) => {
  if (!requirePeer(t, 'python3-confluent-kafka')) return;
  await withBrokerDir(async (dir) => {
    let b = await startTestBroker(PROPS, dir);
    try {
      const first = await run(PYTHON, ['-c', CONFLUENT, 'commit', b.bootstrap], { timeoutMs: 90_000 });
      assert.equal(first.code, 0, first.stderr);
      assert.deepEqual(JSON.parse(first.stdout).committed, ['ck-topic-0:10', 'ck-topic-1:10', 'ck-kept-0:4']);

      await b.stop();
      b = await startTestBroker(PROPS, dir);
      await b.broker.services.groupCoordinator.loaded();
      const second = await run(PYTHON, ['-c', CONFLUENT, 'recreate', b.bootstrap], { timeoutMs: 90_000 });
      assert.equal(second.code, 0, second.stderr);
      const out = JSON.parse(second.stdout) as { committed: string[]; offsets: number[]; unsent: number; error?: string };
      assert.equal(out.unsent, 0);
      // librdkafka shows "no committed offset" as -1001 (OFFSET_INVALID).
      assert.deepEqual(out.committed, ['ck-topic-0:-1001', 'ck-topic-1:-1001', 'ck-kept-0:4']);
      assert.equal(out.error, undefined);
      assert.deepEqual(
        out.offsets,
        Array.from({ length: 15 }, (_, i) => i),
        'no record of the new topic is skipped',
      );
    } finally {
      await b.stop();
    }
  });
});
