/**
 * The cluster-mode metadata image (Kafka's MetadataCache) fed by the controller's requests,
 * and the replica manager's leader/follower roles, without ZooKeeper or a network: requests go
 * to the control-request receiver as the handlers pass them, answers are checked through the
 * MetadataStore interface and the local partitions.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { ErrorCode, KafkaError } from '../../../src/protocol/errors.js';
import { broker, header, pstate, startNode } from './zk-broker-helpers.js';
import { waitFor } from '../../helpers/wait-for.js';

const ID_A = 'AAAAAAAAAAAAAAAAAAAAAQ';

test('UpdateMetadata fills the image: live brokers per listener, racks, partition states, ids, configs from ZooKeeper, offline replicas', async () => {
  const n = await startNode(1);
  try {
    n.zk.configs.set('orders', { 'cleanup.policy': 'compact' });
    const changed: string[] = [];
    n.image.onChange((t) => changed.push(t));
    const err = await n.control.updateMetadata(
      header(3, 2),
      [broker(1), { ...broker(2), rack: 'r2' }],
      [pstate('orders', 1, 2, 5, [2, 3, 1], [2, 1]), pstate('orders', 0, 1, 4, [1, 2])],
      new Map([['orders', ID_A]]),
    );
    assert.equal(err, ErrorCode.NONE);
    assert.equal(n.image.controllerId(), 2);
    assert.deepEqual(
      n.image.brokers().map((b) => [b.id, b.rack]),
      [
        [1, null],
        [2, 'r2'],
      ],
    );
    assert.deepEqual(n.image.endpoint(2, 'INTERNAL'), { host: 'int2', port: 10094 });
    assert.equal(n.image.endpoint(2, 'NOPE'), undefined);
    assert.equal(n.image.endpoint(3, 'PLAINTEXT'), undefined, 'broker 3 is not live');
    const t = n.image.topic('orders')!;
    assert.equal(t.topicId, ID_A);
    assert.equal(n.image.topicById(ID_A), t);
    assert.deepEqual(t.configs, { 'cleanup.policy': 'compact' });
    assert.deepEqual(
      t.partitions.map((p) => p.partition),
      [0, 1],
      'partitions sorted by index',
    );
    assert.deepEqual(t.partitions[1], { partition: 1, leader: 2, leaderEpoch: 5, replicas: [2, 3, 1], isr: [2, 1], offlineReplicas: [3] });
    assert.deepEqual(changed, ['orders']);
    // Incremental: a later UpdateMetadata without the topic keeps it; broker 2 leaving makes it offline.
    await n.control.updateMetadata(header(3, 2), [broker(1)], [], new Map());
    assert.ok(n.image.topic('orders'));
    assert.deepEqual(n.image.topic('orders')!.partitions[1]!.offlineReplicas, [2, 3]);
    // Leader -2 (LeaderDuringDelete) takes partitions out; the last one takes the topic.
    await n.control.updateMetadata(header(3, 2), [broker(1)], [pstate('orders', 0, -2, 4, [1, 2]), pstate('orders', 1, -2, 5, [2, 3, 1])], new Map());
    assert.equal(n.image.topic('orders'), undefined);
    assert.equal(n.image.topicById(ID_A), undefined);
  } finally {
    await n.close();
  }
});

test('a deposed controller (lower controller epoch) is answered STALE_CONTROLLER_EPOCH and changes nothing', async () => {
  const n = await startNode(1);
  try {
    await n.control.updateMetadata(header(5, 0), [broker(0), broker(1)], [pstate('t', 0, 0, 1, [0, 1])], new Map());
    assert.equal(await n.control.updateMetadata(header(4, 2), [broker(2)], [pstate('t', 0, 2, 9, [2])], new Map()), ErrorCode.STALE_CONTROLLER_EPOCH);
    const lisr = await n.control.leaderAndIsr(header(4, 2), [{ ...pstate('t', 0, 1, 9, [1]), topicId: undefined }]);
    assert.equal(lisr.errorCode, ErrorCode.STALE_CONTROLLER_EPOCH);
    const stop = await n.control.stopReplica(header(4, 2), [{ topic: 't', partition: 0, leaderEpoch: -1, deletePartition: true }]);
    assert.equal(stop.errorCode, ErrorCode.STALE_CONTROLLER_EPOCH);
    assert.equal(n.image.controllerId(), 0);
    assert.deepEqual(
      n.image.brokers().map((b) => b.id),
      [0, 1],
    );
    assert.equal(n.image.topic('t')!.partitions[0]!.leader, 0);
    assert.equal(n.replicaManager.getPartition('t', 0), undefined);
    // A higher epoch (a new controller) is accepted.
    assert.equal(await n.control.updateMetadata(header(6, 2), [broker(1), broker(2)], [], new Map()), ErrorCode.NONE);
    assert.equal(n.image.controllerId(), 2);
  } finally {
    await n.close();
  }
});

test('a request for an earlier registration of this broker (lower broker epoch) is STALE_BROKER_EPOCH; -1 is accepted', async () => {
  const n = await startNode(1, { brokerEpoch: 500n });
  try {
    assert.equal(await n.control.updateMetadata(header(1, 0, 499n), [broker(0)], [], new Map()), ErrorCode.STALE_BROKER_EPOCH);
    assert.equal(await n.control.updateMetadata(header(1, 0, -1n), [broker(0)], [], new Map()), ErrorCode.NONE);
    assert.equal(await n.control.updateMetadata(header(1, 0, 500n), [broker(0)], [], new Map()), ErrorCode.NONE);
  } finally {
    await n.close();
  }
});

test('LeaderAndIsr opens a log for every partition whose replicas include this broker, as leader or follower; lower leader epochs are fenced', async () => {
  const n = await startNode(1);
  try {
    n.zk.configs.set('t', { 'segment.bytes': '1048576' });
    const res = await n.control.leaderAndIsr(header(1), [
      { ...pstate('t', 0, 1, 3, [1, 2]), topicId: ID_A },
      { ...pstate('t', 1, 2, 3, [2, 1]), topicId: ID_A },
      { ...pstate('t', 2, 2, 3, [2, 3]), topicId: ID_A },
    ]);
    assert.equal(res.errorCode, ErrorCode.NONE);
    assert.deepEqual(
      res.partitions.map((p) => [p.partition, p.errorCode]),
      [
        [0, ErrorCode.NONE],
        [1, ErrorCode.NONE],
        [2, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION],
      ],
    );
    const p0 = n.replicaManager.getPartition('t', 0)!;
    const p1 = n.replicaManager.getPartition('t', 1)!;
    assert.equal(p0.isLeader, true);
    assert.equal(p1.isLeader, false);
    assert.equal(p1.leaderId, 2);
    assert.equal(n.replicaManager.getPartition('t', 2), undefined, 'not a replica here: no log');
    assert.equal(p0.log.config.segmentBytes, 1048576, 'the log opened with its topic config from ZooKeeper');
    // The topic is not in the image until UpdateMetadata: the image never shows half a topic.
    assert.equal(n.image.topic('t'), undefined);

    // Lower leader epoch: FENCED_LEADER_EPOCH, role unchanged; equal epoch is a re-send, applied.
    const fenced = await n.control.leaderAndIsr(header(1), [
      { ...pstate('t', 0, 2, 2, [1, 2]), topicId: ID_A },
      { ...pstate('t', 1, 1, 3, [2, 1]), topicId: ID_A },
    ]);
    assert.deepEqual(
      fenced.partitions.map((p) => p.errorCode),
      [ErrorCode.FENCED_LEADER_EPOCH, ErrorCode.NONE],
    );
    assert.equal(p0.isLeader, true);
    assert.equal(p0.leaderEpoch, 3);
    assert.equal(p1.isLeader, true, 'same epoch re-sent with this broker as leader');
    // Leadership moves away at a higher epoch: follower now.
    await n.control.leaderAndIsr(header(1), [{ ...pstate('t', 0, 2, 4, [1, 2]), topicId: ID_A }]);
    assert.equal(p0.isLeader, false);
    assert.equal(p0.leaderEpoch, 4);
  } finally {
    await n.close();
  }
});

test('a follower answers NOT_LEADER_OR_FOLLOWER to produce, consumer fetch, and DeleteRecords paths', async () => {
  const n = await startNode(1);
  try {
    await n.control.leaderAndIsr(header(1), [{ ...pstate('f', 0, 2, 1, [2, 1]), topicId: ID_A }]);
    await n.control.updateMetadata(header(1), [broker(1), broker(2)], [pstate('f', 0, 2, 1, [2, 1])], new Map([['f', ID_A]]));
    const rm = n.replicaManager;
    const produced = await rm.appendRecords('f', 0, Buffer.alloc(0), { requiredAcks: 1, origin: 'client', produceVersion: 9 });
    assert.equal(produced.errorCode, ErrorCode.NOT_LEADER_OR_FOLLOWER);
    assert.equal(rm.lookup('f', 0).errorCode, ErrorCode.NOT_LEADER_OR_FOLLOWER, 'fetch, ListOffsets and OffsetForLeaderEpoch go through lookup');
    await assert.rejects(rm.deleteRecords('f', 0, 0));
    // Even if the image lags (still says leader = self), the partition's role decides.
    await n.control.updateMetadata(header(1), [broker(1), broker(2)], [pstate('f', 0, 1, 1, [2, 1])], new Map());
    const again = await rm.appendRecords('f', 0, Buffer.alloc(0), { requiredAcks: 1, origin: 'client', produceVersion: 9 });
    assert.equal(again.errorCode, ErrorCode.NOT_LEADER_OR_FOLLOWER);
  } finally {
    await n.close();
  }
});

test('StopReplica: delete removes the log even for a topic unknown to the image; lower epochs are fenced; the image is left to UpdateMetadata', async () => {
  const n = await startNode(1);
  try {
    await n.control.leaderAndIsr(header(1), [
      { ...pstate('s', 0, 1, 5, [1]), topicId: ID_A },
      { ...pstate('s', 1, 1, 5, [1]), topicId: ID_A },
    ]);
    await n.control.updateMetadata(header(1), [broker(1)], [pstate('s', 0, 1, 5, [1]), pstate('s', 1, 1, 5, [1])], new Map([['s', ID_A]]));
    const dir0 = n.replicaManager.getPartition('s', 0)!.log.dir;
    const fenced = await n.control.stopReplica(header(1), [{ topic: 's', partition: 0, leaderEpoch: 4, deletePartition: true }]);
    assert.deepEqual(
      fenced.partitions.map((p) => p.errorCode),
      [ErrorCode.FENCED_LEADER_EPOCH],
    );
    assert.ok(existsSync(dir0));
    // Topic deletion: epoch -2 deletes the log; the image keeps the partition until UpdateMetadata says -2.
    const res = await n.control.stopReplica(header(1), [{ topic: 's', partition: 0, leaderEpoch: -2, deletePartition: true }]);
    assert.deepEqual(
      res.partitions.map((p) => p.errorCode),
      [ErrorCode.NONE],
    );
    assert.equal(n.replicaManager.getPartition('s', 0), undefined);
    assert.equal(existsSync(dir0), false);
    assert.deepEqual(
      n.image.topic('s')!.partitions.map((p) => p.partition),
      [0, 1],
    );

    // A log left on disk for a topic nobody knows any more (deleted while this broker was away).
    await n.logManager.createLog('ghost', 3, {});
    const ghostDir = join(n.dir, 'ghost-3');
    assert.ok(existsSync(ghostDir));
    const ghost = await n.control.stopReplica(header(1), [{ topic: 'ghost', partition: 3, leaderEpoch: -1, deletePartition: true }]);
    assert.deepEqual(
      ghost.partitions.map((p) => p.errorCode),
      [ErrorCode.NONE],
    );
    assert.equal(existsSync(ghostDir), false);
    // Without delete the log stays (no longer leading).
    await n.control.stopReplica(header(1), [{ topic: 's', partition: 1, leaderEpoch: 5, deletePartition: false }]);
    assert.equal(n.replicaManager.getPartition('s', 1)!.isLeader, false);
  } finally {
    await n.close();
  }
});

test('writes go to ZooKeeper and wait for the controller: create, add partitions, delete, configs; validation as the embedded store', async () => {
  const n = await startNode(1, { writeTimeoutMs: 5000 });
  try {
    await n.control.updateMetadata(header(1), [broker(1), broker(2)], [], new Map());
    await n.control.updateMetadata(header(1), [broker(1), broker(2)], [pstate('x.y', 0, 1, 0, [1])], new Map());
    await assert.rejects(
      n.image.createTopic({ name: 'x_y', numPartitions: 1, replicationFactor: 1 }),
      (e: unknown) => e instanceof KafkaError && e.code === ErrorCode.INVALID_TOPIC_EXCEPTION,
    );
    await assert.rejects(
      n.image.createTopic({ name: 'x.y', numPartitions: 1, replicationFactor: 1 }),
      (e: unknown) => e instanceof KafkaError && e.code === ErrorCode.TOPIC_ALREADY_EXISTS,
    );
    await assert.rejects(
      n.image.createTopic({ name: 'bad name', numPartitions: 1, replicationFactor: 1 }),
      (e: unknown) => e instanceof KafkaError && e.code === ErrorCode.INVALID_TOPIC_EXCEPTION,
    );
    await assert.rejects(
      n.image.createTopic({ name: 'big', numPartitions: 1, replicationFactor: 3 }),
      (e: unknown) => e instanceof KafkaError && e.code === ErrorCode.INVALID_REPLICATION_FACTOR,
    );
    await assert.rejects(
      n.image.createTopic({ name: 'm', numPartitions: 1, replicationFactor: 1, assignment: [[7]] }),
      (e: unknown) => e instanceof KafkaError && e.code === ErrorCode.INVALID_REPLICA_ASSIGNMENT,
    );

    // Create: the znode is written with an assignment over the live brokers; it resolves once the controller's answer shows.
    const created = n.image.createTopic({ name: 'new', numPartitions: 2, replicationFactor: 2, configs: { 'retention.ms': '1000' } });
    await until(() => n.zk.topics.has('new'));
    const znode = n.zk.topics.get('new')!;
    assert.deepEqual(
      [...znode.partitions],
      [
        [0, [1, 2]],
        [1, [2, 1]],
      ],
    );
    assert.deepEqual(n.zk.configs.get('new'), { 'retention.ms': '1000' });
    await n.control.updateMetadata(
      header(1),
      [broker(1), broker(2)],
      [pstate('new', 0, 1, 0, [1, 2]), pstate('new', 1, 2, 0, [2, 1])],
      new Map([['new', znode.topicId]]),
    );
    const t = await created;
    assert.equal(t.topicId, znode.topicId);
    assert.deepEqual(t.configs, { 'retention.ms': '1000' });

    // Add partitions: conditional set of the assignment continuing the pattern.
    const grown = n.image.createPartitions('new', 3);
    await until(() => n.zk.topics.get('new')!.partitions.size === 3);
    assert.equal(n.zk.topics.get('new')!.zkVersion, 1);
    await n.control.updateMetadata(header(1), [broker(1), broker(2)], [pstate('new', 2, 1, 0, [1, 2])], new Map());
    assert.equal((await grown).partitions.length, 3);
    await assert.rejects(n.image.createPartitions('new', 2), (e: unknown) => e instanceof KafkaError && e.code === ErrorCode.INVALID_PARTITIONS);

    // Configs: written to ZooKeeper and applied here at once.
    await n.image.setTopicConfigs('new', { 'retention.ms': '2000' });
    assert.deepEqual(n.zk.configs.get('new'), { 'retention.ms': '2000' });
    assert.deepEqual(n.image.topic('new')!.configs, { 'retention.ms': '2000' });

    // Delete: marked in ZooKeeper; resolves once the controller took it out of the image.
    const deleted = n.image.deleteTopic('new');
    await until(() => n.zk.deletions.includes('new'));
    await n.control.updateMetadata(
      header(1),
      [broker(1), broker(2)],
      [0, 1, 2].map((p) => pstate('new', p, -2, 0, [1, 2])),
      new Map(),
    );
    await deleted;
    assert.equal(n.image.topic('new'), undefined);
  } finally {
    await n.close();
  }
});

test('a write the controller never confirms fails with REQUEST_TIMED_OUT within the bound', async () => {
  const n = await startNode(1, { writeTimeoutMs: 300 });
  try {
    await n.control.updateMetadata(header(1), [broker(1)], [], new Map());
    const started = Date.now();
    await assert.rejects(
      n.image.createTopic({ name: 'orphan', numPartitions: 1, replicationFactor: 1 }),
      (e: unknown) => e instanceof KafkaError && e.code === ErrorCode.REQUEST_TIMED_OUT,
    );
    assert.ok(Date.now() - started >= 250, 'waited for the bound');
    assert.ok(n.zk.topics.has('orphan'), 'the intent is in ZooKeeper (the controller acts on it later)');
  } finally {
    await n.close();
  }
});

const until = (check: () => boolean, timeoutMs = 5000) => waitFor('the condition', timeoutMs, check, { pollMs: 5 });
