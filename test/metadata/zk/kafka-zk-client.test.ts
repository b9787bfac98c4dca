/**
 * KafkaZkClient against a real Apache ZooKeeper: the znodes it writes (Kafka's JSON), Kafka's
 * errors for ZooKeeper's, conditional state updates, fenced controller writes that fail once the
 * controller epoch moved (including the version-0 case node-zookeeper-client gets wrong), and a
 * chroot.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { requirePeer } from '../../helpers/peers.js';
import { ZOOKEEPER_JAR, startZooKeeper, zkGet, type ZooKeeperServer } from '../../helpers/zookeeper.js';
import { ZkSession, isZkError, type ZkWatchEvent } from '../../../src/metadata/zk/zk-session.js';
import { KafkaZkClient } from '../../../src/metadata/zk/kafka-zk-client.js';
import { ControllerMovedError, type ControllerFence } from '../../../src/metadata/zk/zk-client-types.js';
import { BrokerIdZNode } from '../../../src/metadata/zk/zk-data.js';
import { KafkaError } from '../../../src/protocol/errors.js';

let zk: ZooKeeperServer | undefined;
const sessions: ZkSession[] = [];

async function open(suffix = ''): Promise<ZkSession> {
  const s = await ZkSession.open({ connect: zk!.connect + suffix, sessionTimeoutMs: 6000, connectionTimeoutMs: 10_000 });
  sessions.push(s);
  return s;
}

before(async () => {
  if (!existsSync(ZOOKEEPER_JAR)) return; // each test skips (or fails under CI) via requirePeer
  zk = await startZooKeeper();
});

after(async () => {
  for (const s of sessions) await s.close();
  await zk?.stop();
});

const kafkaCode = (code: number) => (err: unknown) => err instanceof KafkaError && err.code === code;

/** A controller epoch znode for fenced writes; returns the fence of epoch 1. */
async function controllerEpoch(s: ZkSession): Promise<ControllerFence> {
  const stat = await s.exists('/controller_epoch');
  if (!stat) await s.create('/controller_epoch', '1');
  return { controllerEpoch: 1, epochZkVersion: stat?.version ?? 0 };
}

test('brokers: ids, registrations and the broker epoch (czxid)', async (t) => {
  if (!requirePeer(t, 'zookeeper')) return;
  const s = await open('/brokers-test');
  const c = new KafkaZkClient(s);
  assert.deepEqual(await c.getBrokerIds(), [], 'no /brokers/ids yet');
  await s.ensurePath('/brokers/ids');
  for (const id of [2, 0]) {
    const reg = {
      id,
      endpoints: [{ listenerName: 'PLAINTEXT', securityProtocol: 'PLAINTEXT', host: '127.0.0.1', port: 9092 + id }],
      rack: id === 0 ? 'r0' : null,
      timestampMs: 5,
    };
    await s.create(`/brokers/ids/${id}`, BrokerIdZNode.encode(reg), 'ephemeral');
  }
  assert.deepEqual(await c.getBrokerIds(), [0, 2]);
  const all = await c.getAllBrokers();
  assert.deepEqual(
    all.map((b) => [b.id, b.rack, b.endpoints[0]!.port]),
    [
      [0, 'r0', 9092],
      [2, null, 9094],
    ],
  );
  assert.ok(all[1]!.brokerEpoch > 0n && all[0]!.brokerEpoch > all[1]!.brokerEpoch, 'czxid grows with each registration (2 registered before 0)');
  assert.equal(await c.getBroker(1), undefined);
});

test('createTopic writes the config then the topic znode, as Kafka; duplicates and marked topics are refused', async (t) => {
  if (!requirePeer(t, 'zookeeper')) return;
  const s = await open();
  const c = new KafkaZkClient(s);
  await c.createTopic(
    'bigdata',
    'aSFJVxF7SIaTCptmWn_GgA',
    new Map([
      [0, [1, 2]],
      [1, [2, 1]],
    ]),
    { 'retention.ms': '1000' },
  );
  assert.equal(
    await zkGet(zk!.port, '/brokers/topics/bigdata'),
    '{"partitions":{"0":[1,2],"1":[2,1]},"topic_id":"aSFJVxF7SIaTCptmWn_GgA","adding_replicas":{},"removing_replicas":{},"version":3}',
  );
  assert.equal((await s.get('/config/topics/bigdata')).data.toString(), '{"version":1,"config":{"retention.ms":"1000"}}');
  await assert.rejects(c.createTopic('bigdata', 'x', new Map([[0, [1]]]), {}), kafkaCode(36));
  assert.deepEqual(await c.getAllTopics(), ['bigdata']);

  const a = (await c.getTopicAssignment('bigdata'))!;
  assert.equal(a.topicId, 'aSFJVxF7SIaTCptmWn_GgA');
  assert.deepEqual(
    [...a.partitions],
    [
      [0, [1, 2]],
      [1, [2, 1]],
    ],
  );
  assert.equal(a.zkVersion, 0);
  assert.equal(await c.getTopicAssignment('nope'), undefined);

  // Adding a partition is a conditional set; a writer with a stale version loses.
  const grown = { ...a, partitions: new Map([...a.partitions, [2, [1, 2]]]) };
  assert.equal(await c.setTopicAssignment(grown, 0), 1);
  await assert.rejects(c.setTopicAssignment(grown, 0), (err: unknown) => isZkError(err, 'BAD_VERSION'));
  assert.equal((await c.getTopicAssignment('bigdata'))!.partitions.size, 3);

  // A config znode left by a half-finished create is overwritten; a topic marked for deletion cannot be re-created.
  await s.create('/config/topics/left', '{"version":1,"config":{"a":"b"}}');
  await c.createTopic('left', 'y', new Map([[0, [1]]]), {});
  assert.deepEqual(await c.getEntityConfigs('topics', 'left'), {});
  await c.markTopicForDeletion('left');
  await s.delete('/brokers/topics/left');
  await assert.rejects(c.createTopic('left', 'z', new Map([[0, [1]]]), {}), kafkaCode(36));
});

test('partition states: fenced creates and conditional updates; a moved epoch fences every write', async (t) => {
  if (!requirePeer(t, 'zookeeper')) return;
  const s = await open('/fence');
  const c = new KafkaZkClient(s);
  const fence = await controllerEpoch(s);
  assert.equal(fence.epochZkVersion, 0, 'the version-0 case is the one the client library mishandles');
  await c.createTopic(
    't',
    'id',
    new Map([
      [0, [1, 2]],
      [1, [2, 1]],
    ]),
    {},
  );
  const st = (leader: number, leaderEpoch: number, isr: number[]) => ({ leader, leaderEpoch, isr, controllerEpoch: 1 });
  const created = await c.createPartitionStates(
    't',
    new Map([
      [0, st(1, 0, [1, 2])],
      [1, st(2, 0, [2, 1])],
    ]),
    fence,
  );
  assert.deepEqual(
    [...created],
    [
      [0, 'ok'],
      [1, 'ok'],
    ],
  );
  assert.deepEqual([...(await c.createPartitionStates('t', new Map([[1, st(2, 0, [2])]]), fence))], [[1, 'exists']]);
  assert.equal(
    (await s.get('/brokers/topics/t/partitions/0/state')).data.toString(),
    '{"controller_epoch":1,"leader":1,"version":1,"leader_epoch":0,"isr":[1,2]}',
  );

  const states = await c.getPartitionStates('t');
  assert.deepEqual([...states.keys()], [0, 1]);
  assert.deepEqual(states.get(1), { state: st(2, 0, [2, 1]), zkVersion: 0 });
  assert.deepEqual([...(await c.getPartitionStates('t', [1, 7])).keys()], [1]);

  const upd = await c.updatePartitionStates(
    't',
    [
      { partition: 0, state: st(2, 1, [2]), expectedZkVersion: 0 },
      { partition: 1, state: st(1, 1, [1]), expectedZkVersion: 5 },
      { partition: 9, state: st(1, 1, [1]), expectedZkVersion: 0 },
    ],
    fence,
  );
  assert.deepEqual(
    [...upd],
    [
      [0, 1],
      [1, 'BAD_VERSION'],
      [9, 'BAD_VERSION'],
    ],
  );
  assert.equal((await c.getPartitionStates('t', [0])).get(0)!.state.leader, 2);

  // Another controller takes over: /controller_epoch moves from version 0 to 1.
  await s.set('/controller_epoch', '2', 0);
  await assert.rejects(c.updatePartitionStates('t', [{ partition: 0, state: st(1, 2, [1]), expectedZkVersion: 1 }], fence), ControllerMovedError);
  await assert.rejects(c.createPartitionStates('t', new Map([[5, st(1, 0, [1])]]), fence), ControllerMovedError);
  const a = (await c.getTopicAssignment('t'))!;
  await assert.rejects(c.setTopicAssignment(a, a.zkVersion, fence), ControllerMovedError);
  await assert.rejects(c.deleteTopicZNodes('t', fence), ControllerMovedError);
  const after0 = (await c.getPartitionStates('t', [0])).get(0)!;
  assert.deepEqual(after0, { state: st(2, 1, [2]), zkVersion: 1 }, 'the fenced writes changed nothing');
  assert.equal(await s.exists('/brokers/topics/t/partitions/5'), null);

  const fresh = { controllerEpoch: 2, epochZkVersion: 1 };
  assert.deepEqual([...(await c.updatePartitionStates('t', [{ partition: 0, state: st(1, 2, [1]), expectedZkVersion: 1 }], fresh))], [[0, 2]]);
});

test('deletion: the marker, then the controller removes the topic tree and its config', async (t) => {
  if (!requirePeer(t, 'zookeeper')) return;
  const s = await open('/deletion');
  const c = new KafkaZkClient(s);
  const fence = await controllerEpoch(s);
  await assert.rejects(c.markTopicForDeletion('ghost'), kafkaCode(3));
  await c.createTopic(
    'd',
    'id',
    new Map([
      [0, [1]],
      [1, [1]],
    ]),
    { 'cleanup.policy': 'compact' },
  );
  await c.createPartitionStates(
    'd',
    new Map([
      [0, { leader: 1, leaderEpoch: 0, isr: [1], controllerEpoch: 1 }],
      [1, { leader: 1, leaderEpoch: 0, isr: [1], controllerEpoch: 1 }],
    ]),
    fence,
  );
  await c.markTopicForDeletion('d');
  await c.markTopicForDeletion('d'); // twice is fine, as Kafka's admin path
  assert.deepEqual(await c.getTopicDeletions(), ['d']);
  await c.deleteTopicZNodes('d', fence);
  assert.equal(await s.exists('/brokers/topics/d'), null);
  assert.equal(await s.exists('/config/topics/d'), null);
  await c.deleteTopicZNodes('d', fence); // already gone: nothing to do
  await c.deleteTopicDeletionMarker('d', fence);
  await c.deleteTopicDeletionMarker('d', fence);
  assert.deepEqual(await c.getTopicDeletions(), []);
});

test('configs: set-or-create plus a sequential change notification per change', async (t) => {
  if (!requirePeer(t, 'zookeeper')) return;
  const s = await open('/configs');
  const c = new KafkaZkClient(s);
  assert.deepEqual(await c.getEntityConfigs('brokers', '<default>'), {});
  await c.setEntityConfigs('topics', 'a', { 'retention.ms': '5' });
  await c.setEntityConfigs('brokers', '<default>', { 'log.cleaner.threads': '2' });
  await c.setEntityConfigs('topics', 'a', {});
  assert.deepEqual(await c.getEntityConfigs('topics', 'a'), {});
  assert.deepEqual(await c.getEntityConfigs('brokers', '<default>'), { 'log.cleaner.threads': '2' });
  const names = await c.getConfigChangeNames();
  assert.deepEqual(names, ['config_change_0000000000', 'config_change_0000000001', 'config_change_0000000002']);
  assert.equal((await s.get('/config/changes/config_change_0000000001')).data.toString(), '{"version":2,"entity_path":"brokers/<default>"}');
  assert.deepEqual(await c.getConfigChange(names[1]!), { entityType: 'brokers', entityName: '<default>' });
  assert.equal(await c.getConfigChange('config_change_0000000099'), undefined);
});

test('admin intents and ISR change notifications; the intent watch fires on creation', async (t) => {
  if (!requirePeer(t, 'zookeeper')) return;
  const s = await open('/intents');
  const c = new KafkaZkClient(s);
  const fence = await controllerEpoch(s);
  const events: ZkWatchEvent[] = [];
  assert.equal(await c.getPartitionReassignment((e) => events.push(e)), undefined);
  await c.createPartitionReassignment([{ topic: 't', partition: 0, replicas: [2, 1] }]);
  await waitFor(() => events.length === 1);
  assert.equal(events[0]!.type, 'created');
  await assert.rejects(c.createPartitionReassignment([]), kafkaCode(60));
  assert.deepEqual(await c.getPartitionReassignment(), [{ topic: 't', partition: 0, replicas: [2, 1] }]);
  await c.deletePartitionReassignment(fence);
  assert.equal(await c.getPartitionReassignment(), undefined);

  await c.createPreferredReplicaElection([{ topic: 't', partition: 1 }]);
  await assert.rejects(c.createPreferredReplicaElection([]), (err: unknown) => isZkError(err, 'NODE_EXISTS'));
  assert.deepEqual(await c.getPreferredReplicaElection(), [{ topic: 't', partition: 1 }]);
  await c.deletePreferredReplicaElection(fence);
  assert.equal(await c.getPreferredReplicaElection(), undefined);

  await c.createIsrChangeNotification([{ topic: 't', partition: 0 }]);
  await c.createIsrChangeNotification([{ topic: 'u', partition: 3 }]);
  const names = await c.getIsrChangeNotifications();
  assert.deepEqual(names, ['isr_change_0000000000', 'isr_change_0000000001']);
  assert.deepEqual(await c.getIsrChangeNotification(names[1]!), [{ topic: 'u', partition: 3 }]);
  await c.deleteIsrChangeNotifications(names, fence);
  assert.deepEqual(await c.getIsrChangeNotifications(), []);
});

test('producer id blocks are disjoint and contiguous across concurrent brokers; /feature as Kafka 2.8 writes it', async (t) => {
  if (!requirePeer(t, 'zookeeper')) return;
  const a = new KafkaZkClient(await open('/pids'));
  const b = new KafkaZkClient(await open('/pids'));
  const blocks = await Promise.all([a.allocateProducerIdBlock(0, 1000), b.allocateProducerIdBlock(1, 1000), a.allocateProducerIdBlock(0, 1000)]);
  const sorted = blocks.map((x) => [x.start, x.end]).sort((x, y) => Number(x[0]! - y[0]!));
  assert.deepEqual(sorted, [
    [0n, 999n],
    [1000n, 1999n],
    [2000n, 2999n],
  ]);
  const last = (await a.session.get('/latest_producer_id_block')).data.toString();
  assert.match(last, /^\{"version":1,"broker":[01],"block_start":"2000","block_end":"2999"\}$/);

  await a.ensureFeatureZNode();
  await b.ensureFeatureZNode();
  const f = await a.session.get('/feature');
  assert.equal(f.data.toString(), '{"features":{},"version":1,"status":1}');
  assert.equal(f.stat.version, 0, 'the second call changed nothing');
  await a.session.set('/feature', '{"features":{},"version":1,"status":0}');
  await a.ensureFeatureZNode();
  assert.equal((await a.session.get('/feature')).data.toString(), '{"features":{},"version":1,"status":1}');
});

test('chroot: every path, fenced writes included, lives under the chroot', async (t) => {
  if (!requirePeer(t, 'zookeeper')) return;
  const root = await open();
  const s = await open('/kafka/prod');
  const c = new KafkaZkClient(s);
  const fence = await controllerEpoch(s);
  await c.createTopic('ct', 'id', new Map([[0, [0]]]), {});
  await c.createPartitionStates('ct', new Map([[0, { leader: 0, leaderEpoch: 0, isr: [0], controllerEpoch: 1 }]]), fence);
  assert.ok(await root.exists('/kafka/prod/brokers/topics/ct/partitions/0/state'));
  assert.equal(await root.exists('/brokers/topics/ct'), null);
  await root.set('/kafka/prod/controller_epoch', '2');
  await assert.rejects(
    c.updatePartitionStates('ct', [{ partition: 0, state: { leader: 0, leaderEpoch: 1, isr: [0], controllerEpoch: 1 }, expectedZkVersion: 0 }], fence),
    ControllerMovedError,
  );
});

async function waitFor(cond: () => boolean, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error('timed out waiting for a watch event');
    await new Promise((r) => setTimeout(r, 20)); // poll interval, bounded by the deadline
  }
}
