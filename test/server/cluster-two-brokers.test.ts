/**
 * Two in-process brokers against a real ZooKeeper, with the controller they host: both answer
 * Metadata for the whole cluster, topics created on the controller get leaders and followers on
 * both brokers, the other broker answers NOT_CONTROLLER to CreateTopics and
 * NOT_LEADER_OR_FOLLOWER to a produce for a partition it follows, a client round trip works
 * across both (the group coordinator's __consumer_offsets created from any broker), and a
 * controlled shutdown moves leadership to the broker that stays.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import kafkajs from 'kafkajs';
import { requirePeer } from '../helpers/peers.js';
import { startZooKeeper, type ZooKeeperServer } from '../helpers/zookeeper.js';
import { Broker } from '../../src/server/broker.js';
import { buildBrokerConfig } from '../../src/server/config/index.js';
import { silentLogger } from '../../src/server/logger.js';
import { Connection } from '../../src/client/connection.js';
import { Api } from '../../src/client/apis.js';
import { ErrorCode } from '../../src/protocol/errors.js';
import { waitFor } from '../helpers/wait-for.js';

const until = <T>(what: string, timeoutMs: number, probe: () => T | undefined | Promise<T | undefined>) => waitFor(what, timeoutMs, probe, { pollMs: 50 });

test('two brokers with a ZooKeeper controller: whole-cluster metadata, leaders and followers, NOT_CONTROLLER, client round trip, controlled shutdown', async (t) => {
  if (!requirePeer(t, 'zookeeper')) return;
  const zk: ZooKeeperServer = await startZooKeeper();
  const dirs: string[] = [];
  const brokers: Broker[] = [];
  const conns: Connection[] = [];
  try {
    for (const id of [0, 1]) {
      const dir = await mkdtemp(join(tmpdir(), 'fjord-2b-'));
      dirs.push(dir);
      const raw = new Map(
        Object.entries({
          'broker.id': String(id),
          listeners: 'PLAINTEXT://127.0.0.1:0',
          'log.dirs': dir,
          'zookeeper.connect': zk.connect,
          'zookeeper.session.timeout.ms': '10000',
          'offsets.topic.replication.factor': '2',
          'offsets.topic.num.partitions': '4',
          'controlled.shutdown.retry.backoff.ms': '200',
        }),
      );
      brokers.push(new Broker(buildBrokerConfig(raw), silentLogger()));
    }
    await Promise.all(brokers.map((b) => b.start()));
    const ports = brokers.map((b) => b.boundPorts().get('PLAINTEXT')!);
    for (const p of ports) conns.push(await Connection.connect('127.0.0.1', p, { clientId: 't', connectTimeoutMs: 10_000, requestTimeoutMs: 30_000 }));

    // Whole-cluster metadata from either broker, same controller.
    const views = await until('both brokers to see both brokers', 30_000, async () => {
      const all = await Promise.all(conns.map((c) => c.send(Api.Metadata, { topics: [] }, { version: 12 })));
      return all.every((m) => m.brokers.length === 2 && m.controllerId >= 0) ? all : undefined;
    });
    assert.deepEqual(
      views.map((m) => m.brokers.map((b) => [b.nodeId, b.port]).sort()),
      [0, 1].map(() => [
        [0, ports[0]],
        [1, ports[1]],
      ]),
    );
    assert.equal(views[0]!.controllerId, views[1]!.controllerId);
    const controllerId = views[0]!.controllerId;
    const other = 1 - controllerId;

    // CreateTopics: NOT_CONTROLLER on the other broker, created on the controller.
    const topic = { name: 'two', numPartitions: 2, replicationFactor: 2, assignments: [], configs: [] };
    const refused = await conns[other]!.send(Api.CreateTopics, { topics: [topic], timeoutMs: 30_000 });
    assert.equal(refused.topics[0]!.errorCode, ErrorCode.NOT_CONTROLLER);
    const created = await conns[controllerId]!.send(Api.CreateTopics, { topics: [topic], timeoutMs: 30_000 });
    assert.equal(created.topics[0]!.errorCode, ErrorCode.NONE, created.topics[0]!.errorMessage ?? '');

    // Both brokers describe it with leaders; each hosts both partitions, leading exactly its own.
    const md = await until('the topic on both brokers', 30_000, async () => {
      const all = await Promise.all(conns.map((c) => c.send(Api.Metadata, { topics: [{ name: 'two' }], allowAutoTopicCreation: false }, { version: 12 })));
      return all.every((m) => m.topics[0]!.errorCode === 0 && m.topics[0]!.partitions.length === 2) ? all : undefined;
    });
    assert.deepEqual(md[0]!.topics[0]!.partitions, md[1]!.topics[0]!.partitions);
    for (const p of md[0]!.topics[0]!.partitions) {
      assert.equal(p.replicaNodes.length, 2);
      assert.deepEqual([...p.isrNodes].sort(), [0, 1]);
      for (const id of [0, 1]) {
        const local = brokers[id]!.services.replicaManager.getPartition('two', p.partitionIndex);
        assert.ok(local, `broker ${id} hosts two-${p.partitionIndex}`);
        assert.equal(local.isLeader, p.leaderId === id, `broker ${id} role for two-${p.partitionIndex}`);
      }
    }
    // A produce to the follower: NOT_LEADER_OR_FOLLOWER.
    const p0 = md[0]!.topics[0]!.partitions[0]!;
    const follower = 1 - p0.leaderId;
    const notLeader = await brokers[follower]!.services.replicaManager.appendRecords('two', 0, Buffer.alloc(0), {
      requiredAcks: 1,
      origin: 'client',
      produceVersion: 9,
    });
    assert.equal(notLeader.errorCode, ErrorCode.NOT_LEADER_OR_FOLLOWER);

    // A client round trip across both brokers, with a consumer group.
    const kafka = new kafkajs.Kafka({ brokers: [`127.0.0.1:${ports[other]}`], clientId: 'fjord-2b', logLevel: kafkajs.logLevel.NOTHING });
    const producer = kafka.producer();
    await producer.connect();
    await producer.send({ topic: 'two', acks: -1, messages: Array.from({ length: 20 }, (_, i) => ({ key: `k${i}`, value: `v${i}` })) });
    await producer.disconnect();
    // A short fetch wait: disconnect waits for the fetch in flight (kafkajs's default: 5 s once drained).
    const consumer = kafka.consumer({ groupId: 'g2b', maxWaitTimeInMs: 100 });
    await consumer.connect();
    await consumer.subscribe({ topic: 'two', fromBeginning: true });
    const seen = new Set<string>();
    await consumer.run({ eachMessage: async ({ message }) => void seen.add(message.value!.toString()) });
    await until('20 records consumed', 60_000, () => (seen.size === 20 ? true : undefined));
    await consumer.disconnect();
    const offsets = brokers[other]!.services.metadata.topic('__consumer_offsets');
    assert.ok(offsets, '__consumer_offsets created');
    assert.ok(
      offsets.partitions.every((p) => p.replicas.length === 2),
      'with replication factor 2',
    );

    // Controlled shutdown of the non-controller: leadership moves to the controller's broker.
    const stopped = brokers[other]!;
    await stopped.stop();
    brokers.splice(other, 1, undefined as unknown as Broker);
    const after = await until('all leaders on the remaining broker', 30_000, async () => {
      const m = await conns[controllerId]!.send(Api.Metadata, { topics: [{ name: 'two' }], allowAutoTopicCreation: false }, { version: 12 });
      const ps = m.topics[0]!.partitions;
      return m.brokers.length === 1 && ps.every((p) => p.leaderId === controllerId) ? ps : undefined;
    });
    for (const p of after) {
      assert.deepEqual(p.isrNodes, [controllerId]);
      assert.equal(brokers[controllerId]!.services.replicaManager.getPartition('two', p.partitionIndex)!.isLeader, true);
    }
  } finally {
    for (const c of conns) c.close();
    for (const b of brokers) if (b) await b.stop().catch(() => undefined);
    await zk.stop();
    for (const d of dirs) await rm(d, { recursive: true, force: true });
  }
});
