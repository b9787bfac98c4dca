/**
 * The controller against a real ZooKeeper through KafkaZkClient and ZkMembership: the elected
 * broker's controller writes partition states for a topic created in ZooKeeper, re-elects when a
 * broker's registration goes, deletes a marked topic once its replicas answered, and resigns (then
 * comes back with a higher epoch) when another writer moved `/controller_epoch`.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import pino from 'pino';
import { requirePeer } from '../helpers/peers.js';
import { ZOOKEEPER_JAR, startZooKeeper, type ZooKeeperServer } from '../helpers/zookeeper.js';
import { ZkSession } from '../../src/metadata/zk/zk-session.js';
import { KafkaZkClient } from '../../src/metadata/zk/kafka-zk-client.js';
import { ZkMembership } from '../../src/metadata/zk/zk-membership.js';
import { KafkaController } from '../../src/controller/index.js';
import { CaptureSink, controllerConfig } from './fakes.js';

let zk: ZooKeeperServer | undefined;
const log = pino({ level: 'silent' });
const sessions: ZkSession[] = [];

before(async () => {
  if (!existsSync(ZOOKEEPER_JAR)) return;
  zk = await startZooKeeper();
});
after(async () => {
  await zk?.stop();
});

async function until(what: string, check: () => Promise<boolean> | boolean, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

async function broker(id: number, chroot: string): Promise<{ session: ZkSession; membership: ZkMembership }> {
  const session = await ZkSession.open({ connect: zk!.connect + chroot, sessionTimeoutMs: 6000, connectionTimeoutMs: 10_000 });
  const membership = await ZkMembership.prepare({ session, brokerId: id, rack: null, proposedClusterId: () => 'AAAAAAAAAAAAAAAAAAAAAA', logger: log });
  membership.setEndpoints([{ listenerName: 'PLAINTEXT', securityProtocol: 'PLAINTEXT', host: '127.0.0.1', port: 9000 + id }]);
  await membership.register();
  return { session, membership };
}

test('controller on a real ZooKeeper: new topic, broker loss, deletion, fencing', async (t) => {
  if (!requirePeer(t, 'zookeeper')) return;
  const b1 = await broker(1, '/ctl');
  const b2 = await broker(2, '/ctl');
  const c = new KafkaZkClient(b1.session);
  const sink = new CaptureSink();
  const controller = new KafkaController({ brokerId: 1, zk: c, membership: b1.membership, config: controllerConfig(), logger: log, sink });
  try {
    assert.equal(b1.membership.isController, true, 'broker 1 registered first and won');
    controller.start();
    await until('controller active', () => controller.isActive);
    await controller.idle();
    assert.deepEqual(controller.context.liveOrShuttingDownBrokerIds(), [1, 2]);

    // Any broker (here broker 2's session) writes a topic; the controller gives it leaders.
    const writer = new KafkaZkClient(b2.session);
    await writer.createTopic(
      't',
      'AAAAAAAAAAAAAAAAAAAAAQ',
      new Map([
        [0, [2, 1]],
        [1, [1, 2]],
      ]),
      {},
    );
    await until('partition states', async () => (await c.getPartitionStates('t')).size === 2);
    const states = await c.getPartitionStates('t');
    assert.deepEqual(states.get(0)!.state, { leader: 2, leaderEpoch: 0, isr: [2, 1], controllerEpoch: b1.membership.controllerEpoch });
    await controller.idle();
    assert.ok(sink.sent.some((s) => s.brokerId === 2 && s.request.api === 'LeaderAndIsr'));

    // Broker 2 goes (its ephemeral registration with it): partition 0 moves to 1, ISRs shrink.
    await b2.membership.deregister();
    await b2.session.close();
    await until('leader moved', async () => (await c.getPartitionStates('t', [0])).get(0)?.state.leader === 1);
    await controller.idle();
    assert.deepEqual((await c.getPartitionStates('t', [1])).get(1)!.state.isr, [1]);

    // Deletion: StopReplica(delete) to broker 1, answered; znodes and marker go.
    sink.take();
    await c.markTopicForDeletion('t');
    await until('StopReplica sent', () => sink.sent.some((s) => s.request.api === 'StopReplica' && s.request.request.deletePartitions));
    assert.equal(sink.answerStopReplicas(1), 1);
    await controller.idle();
    assert.deepEqual(await c.getAllTopics(), ['t'], 'waits for the replicas on broker 2, which is down');
    const b2again = await broker(2, '/ctl');
    sessions.push(b2again.session);
    await until('StopReplica to the returning broker', () =>
      sink.sent.some((s) => s.brokerId === 2 && s.request.api === 'StopReplica' && s.request.request.deletePartitions),
    );
    assert.equal(sink.answerStopReplicas(2), 1);
    await until('topic gone', async () => (await c.getAllTopics()).length === 0 && (await c.getTopicDeletions()).length === 0);

    // Another writer bumps /controller_epoch: the next fenced write fails, the controller
    // resigns, the election runs again and this broker comes back with a newer epoch.
    // (Broker 2 leaves first, so that broker 1 is the one to win the election again.)
    await b2again.membership.deregister();
    await b2again.session.close();
    const epochBefore = b1.membership.controllerEpoch;
    const cur = await b1.session.get('/controller_epoch');
    await b1.session.set('/controller_epoch', String(epochBefore + 5), cur.stat.version);
    await c.createTopic('u', 'AAAAAAAAAAAAAAAAAAAAAg', new Map([[0, [1]]]), {});
    await until('re-elected with a newer epoch', () => controller.isActive && b1.membership.controllerEpoch > epochBefore + 5);
    await until('u gets a leader from the new term', async () => (await c.getPartitionStates('u')).get(0)?.state.leader === 1);
    assert.equal((await c.getPartitionStates('u')).get(0)!.state.controllerEpoch, b1.membership.controllerEpoch);
  } finally {
    await controller.stop();
    await b1.membership.deregister();
    await b1.session.close();
    await b2.session.close().catch(() => undefined);
    for (const s of sessions) await s.close().catch(() => undefined);
  }
});

test('reassignment on a real ZooKeeper: waits for the ISR through the state znode watch, then completes', async (t) => {
  if (!requirePeer(t, 'zookeeper')) return;
  const bs = [await broker(1, '/reassign'), await broker(2, '/reassign'), await broker(3, '/reassign')];
  const c = new KafkaZkClient(bs[0]!.session);
  const sink = new CaptureSink();
  const controller = new KafkaController({ brokerId: 1, zk: c, membership: bs[0]!.membership, config: controllerConfig(), logger: log, sink });
  try {
    controller.start();
    await until('controller active', () => controller.isActive);
    await c.createTopic(
      'r',
      'AAAAAAAAAAAAAAAAAAAAAQ',
      new Map([
        [0, [1, 2]],
        [1, [1, 2]],
      ]),
      {},
    );
    await until('partition states', async () => (await c.getPartitionStates('r')).size === 2);
    await controller.idle();
    // What `kafka-reassign-partitions.sh --zookeeper --execute` writes.
    await c.createPartitionReassignment([
      { topic: 'r', partition: 0, replicas: [2, 3] },
      { topic: 'r', partition: 1, replicas: [1, 3] },
    ]);
    await until('phase A in the topic znode', async () => (await c.getTopicAssignment('r'))?.addingReplicas.size === 2);
    await controller.idle();
    const a = (await c.getTopicAssignment('r'))!;
    assert.deepEqual(a.partitions.get(0), [2, 3, 1]);
    assert.deepEqual(a.removingReplicas.get(0), [1]);
    const raw = JSON.parse((await bs[0]!.session.get('/brokers/topics/r')).data.toString()) as Record<string, unknown>;
    assert.deepEqual(raw.adding_replicas, { '0': [3], '1': [3] });
    assert.deepEqual(raw.removing_replicas, { '0': [1], '1': [2] });
    assert.notEqual(await c.getPartitionReassignment(), undefined);
    // The leader (broker 1) sees broker 3 caught up and writes the ISR, conditional on the version.
    const cur = (await c.getPartitionStates('r', [0])).get(0)!;
    assert.deepEqual(cur.state.isr, [1, 2]);
    await bs[1]!.session.set(
      '/brokers/topics/r/partitions/0/state',
      JSON.stringify({ controller_epoch: cur.state.controllerEpoch, leader: 1, version: 1, leader_epoch: cur.state.leaderEpoch, isr: [1, 2, 3] }),
      cur.zkVersion,
    );
    await until('reassignment completed', async () => (await c.getTopicAssignment('r'))?.partitions.get(0)?.join() === '2,3');
    await controller.idle();
    // Partition 1 has not caught up: it stays in the request znode, alone (a fenced set).
    assert.deepEqual(await c.getPartitionReassignment(), [{ topic: 'r', partition: 1, replicas: [1, 3] }]);
    assert.deepEqual((await c.getTopicAssignment('r'))!.partitions.get(1), [1, 3, 2]);
    await controller.idle();
    const s = (await c.getPartitionStates('r', [0])).get(0)!.state;
    assert.equal(s.leader, 2);
    assert.deepEqual(s.isr, [2, 3]);
    assert.ok(sink.sent.some((x) => x.brokerId === 1 && x.request.api === 'StopReplica' && x.request.request.deletePartitions));
    const done = (await c.getTopicAssignment('r'))!;
    assert.deepEqual([...done.addingReplicas.keys(), ...done.removingReplicas.keys()], [1, 1], 'only partition 1 is still being reassigned');
  } finally {
    await controller.stop();
    for (const b of bs) {
      await b.membership.deregister().catch(() => undefined);
      await b.session.close().catch(() => undefined);
    }
  }
});
