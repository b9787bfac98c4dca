/**
 * Partition reassignment in phases, as Kafka 2.4+'s controller: RS = TRS + ORS with
 * adding/removing in the topic znode, LeaderAndIsr to all of RS, then nothing more until every
 * target replica is in the ISR. The ISR grows only by replication (issue 12); here the test
 * plays the partition leader and writes the state znode itself (conditional on its version).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ErrorCode, KafkaError } from '../../src/protocol/errors.js';
import { reassignTo } from '../../src/controller/reassignment-state.js';
import { startController, type FakeZk, type Harness, type Sent } from './fakes.js';

const T_ID = 'AAAAAAAAAAAAAAAAAAAAAQ';

interface LaiPartition {
  partition: number;
  leader: number;
  isr: number[];
  leaderEpoch: number;
  isNew: boolean;
  replicas: number[];
  addingReplicas: number[];
  removingReplicas: number[];
}
function leaderAndIsrTo(sent: Sent[], brokerId: number, topic = 't'): LaiPartition[] {
  return sent.flatMap((s) =>
    s.brokerId === brokerId && s.request.api === 'LeaderAndIsr'
      ? s.request.request.topicStates
          .filter((t) => t.topicName === topic)
          .flatMap((t) =>
            t.partitionStates.map((p) => ({
              partition: p.partitionIndex,
              leader: p.leader,
              isr: p.isr,
              leaderEpoch: p.leaderEpoch,
              isNew: p.isNew,
              replicas: p.replicas,
              addingReplicas: p.addingReplicas,
              removingReplicas: p.removingReplicas,
            })),
          )
      : [],
  );
}
function stopReplicasTo(sent: Sent[], brokerId: number, deleting: boolean): string[] {
  return sent.flatMap((s) =>
    s.brokerId === brokerId && s.request.api === 'StopReplica' && s.request.request.deletePartitions === deleting
      ? s.request.request.topicStates.flatMap((t) => t.partitionStates.map((p) => `${t.topicName}-${p.partitionIndex}`))
      : [],
  );
}
function updateMetadataReplicas(sent: Sent[], brokerId: number, partition = 0): number[][] {
  return sent.flatMap((s) =>
    s.brokerId === brokerId && s.request.api === 'UpdateMetadata'
      ? s.request.request.topicStates
          .filter((t) => t.topicName === 't')
          .flatMap((t) => t.partitionStates.filter((p) => p.partitionIndex === partition).map((p) => p.replicas))
      : [],
  );
}

/** Topic t, partition 0 on [1, 2] (leader 1, ISR [1, 2]), brokers 1..4 live. */
async function withTopic(before?: (zk: FakeZk) => void): Promise<Harness> {
  const h = await startController([1, 2, 3, 4], {}, before);
  if (!h.zk.topics.has('t')) {
    await h.zk.createTopic('t', T_ID, new Map([[0, [1, 2]]]));
    await h.controller.idle();
  }
  h.sink.take();
  return h;
}

/** The partition leader's ISR expansion: a conditional state write, as issue 12's leader does it. */
async function catchUp(h: Harness, isr: number[]): Promise<void> {
  const cur = h.zk.states.get('t-0')!;
  assert.equal(h.zk.expandIsr('t', 0, isr, cur.zkVersion), true);
  await h.controller.idle();
}

test("reassignTo keeps the original replicas as the base (Kafka's ReplicaAssignment)", () => {
  assert.deepEqual(reassignTo({ replicas: [1, 2], adding: [], removing: [] }, [2, 3]), { replicas: [2, 3, 1], adding: [3], removing: [1] });
  // A second target while one is in progress: ORS stays [1, 2]; 3 is no longer wanted.
  assert.deepEqual(reassignTo({ replicas: [2, 3, 1], adding: [3], removing: [1] }, [2, 4]), { replicas: [2, 4, 1], adding: [4], removing: [1] });
  // Back to the origin: nothing added or removed.
  assert.deepEqual(reassignTo({ replicas: [2, 3, 1], adding: [3], removing: [1] }, [1, 2]), { replicas: [1, 2], adding: [], removing: [] });
});

test('ZooKeeper-initiated reassignment waits for the ISR, then moves leadership and deletes the old replica', async () => {
  const h = await withTopic();
  const before = h.zk.states.get('t-0')!;
  await h.zk.createPartitionReassignment([{ topic: 't', partition: 0, replicas: [2, 3] }]);
  await h.controller.idle();

  // Phase A: RS = [2, 3, 1] with adding/removing in the topic znode; nothing completed.
  const t = h.zk.topics.get('t')!;
  assert.deepEqual(t.partitions.get(0), [2, 3, 1]);
  assert.deepEqual(t.addingReplicas.get(0), [3]);
  assert.deepEqual(t.removingReplicas.get(0), [1]);
  const mid = h.zk.states.get('t-0')!;
  assert.equal(mid.state.leader, 1, 'leader unchanged while the new replica catches up');
  assert.deepEqual(mid.state.isr, [1, 2], 'the controller never puts a new replica into the ISR');
  assert.equal(mid.state.leaderEpoch, before.state.leaderEpoch + 1, 'leader epoch bumped so replicas accept the new replica set');
  assert.deepEqual(h.zk.reassignment, [{ topic: 't', partition: 0, replicas: [2, 3] }], 'the request stays until the reassignment completes');
  let sent = h.sink.take();
  for (const b of [1, 2, 3]) {
    const lai = leaderAndIsrTo(sent, b);
    assert.ok(lai.length >= 1, `LeaderAndIsr to ${b}`);
    assert.deepEqual(lai[0]!.replicas, [2, 3, 1]);
    assert.deepEqual(lai[0]!.addingReplicas, [3]);
    assert.deepEqual(lai[0]!.removingReplicas, [1]);
    assert.equal(lai[0]!.leaderEpoch, mid.state.leaderEpoch);
    assert.equal(lai[0]!.isNew, b === 3, `isNew only for the added replica (broker ${b})`);
  }
  assert.equal(leaderAndIsrTo(sent, 4).length, 0);
  assert.deepEqual(stopReplicasTo(sent, 1, true), [], 'nothing deleted before the target is in sync');
  assert.equal(h.controller.context.replicaStates.get('t-0@3'), 'NewReplica');
  const listed = await h.controller.listPartitionReassignments(null);
  assert.deepEqual(listed, [{ topic: 't', partition: 0, replicas: [2, 3, 1], adding: [3], removing: [1] }]);

  // An ISR change that does not include every target replica completes nothing.
  await catchUp(h, [1, 2]);
  assert.deepEqual(h.zk.topics.get('t')!.partitions.get(0), [2, 3, 1]);
  h.sink.take();

  // Phase B: broker 3 caught up (the leader wrote it into the ISR).
  await catchUp(h, [1, 2, 3]);
  const done = h.zk.topics.get('t')!;
  assert.deepEqual(done.partitions.get(0), [2, 3]);
  assert.equal(done.addingReplicas.size + done.removingReplicas.size, 0);
  const s = h.zk.state('t', 0)!;
  assert.equal(s.leader, 2, 'leader moves to the first live in-sync target replica');
  assert.deepEqual(s.isr, [2, 3], 'the removed replica leaves the ISR');
  assert.equal(h.zk.reassignment, undefined, 'the request znode is deleted once its partitions are done');
  sent = h.sink.take();
  assert.deepEqual(stopReplicasTo(sent, 1, true), ['t-0']);
  assert.ok(leaderAndIsrTo(sent, 3).some((p) => p.leader === 2));
  for (const b of [1, 2, 3, 4]) assert.deepEqual(updateMetadataReplicas(sent, b).at(-1), [2, 3], `broker ${b} learns the final replicas`);
  assert.equal(h.controller.context.pendingReassignments.size, 0);
  assert.equal(h.controller.context.replicaStates.get('t-0@1'), undefined);
  assert.deepEqual(await h.controller.listPartitionReassignments(null), []);
  await h.controller.stop();
});

test('a leader already in the target keeps leading; removal of one replica completes at once', async () => {
  const h = await withTopic();
  const epoch = h.zk.state('t', 0)!.leaderEpoch;
  const r = await h.controller.alterPartitionReassignments([{ topic: 't', partition: 0, replicas: [1] }]);
  assert.deepEqual(r.get('t-0'), { errorCode: 0, message: null });
  assert.deepEqual(h.zk.topics.get('t')!.partitions.get(0), [1]);
  const s = h.zk.state('t', 0)!;
  assert.equal(s.leader, 1);
  assert.deepEqual(s.isr, [1]);
  assert.ok(s.leaderEpoch > epoch);
  assert.deepEqual(stopReplicasTo(h.sink.take(), 2, true), ['t-0']);
  await h.controller.stop();
});

test('AlterPartitionReassignments validates as Kafka, and cancelling reverts to the original replicas', async () => {
  const h = await withTopic();
  await h.zk.createTopic('u', 'AAAAAAAAAAAAAAAAAAAAAg', new Map([[0, [1]]]));
  await h.controller.idle();
  const r = await h.controller.alterPartitionReassignments([
    { topic: 't', partition: 0, replicas: [1, 1] },
    { topic: 'u', partition: 0, replicas: [1, 9] },
    { topic: 'u', partition: 1, replicas: [1, 2] },
    { topic: 'nope', partition: 0, replicas: [1] },
    { topic: 'u', partition: 0, replicas: [] },
    { topic: 'u', partition: 0, replicas: [-1] },
  ]);
  // (duplicates of one key: the last request for a partition is the one answered)
  assert.equal(r.get('t-0')!.errorCode, ErrorCode.INVALID_REPLICA_ASSIGNMENT);
  assert.match(r.get('t-0')!.message!, /Duplicate replica ids/);
  assert.equal(r.get('u-1')!.errorCode, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
  assert.equal(r.get('nope-0')!.errorCode, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
  assert.equal(r.get('u-0')!.errorCode, ErrorCode.INVALID_REPLICA_ASSIGNMENT);
  const dead = await h.controller.alterPartitionReassignments([{ topic: 'u', partition: 0, replicas: [1, 9] }]);
  assert.match(dead.get('u-0')!.message!, /not alive/);
  assert.equal(
    (await h.controller.alterPartitionReassignments([{ topic: 't', partition: 0, replicas: null }])).get('t-0')!.errorCode,
    85,
    'NO_REASSIGNMENT_IN_PROGRESS',
  );

  const started = await h.controller.alterPartitionReassignments([{ topic: 't', partition: 0, replicas: [1, 3] }]);
  assert.equal(started.get('t-0')!.errorCode, 0);
  assert.deepEqual(h.zk.topics.get('t')!.partitions.get(0), [1, 3, 2]);
  h.sink.take();
  const cancelled = await h.controller.alterPartitionReassignments([{ topic: 't', partition: 0, replicas: null }]);
  assert.equal(cancelled.get('t-0')!.errorCode, 0);
  const t = h.zk.topics.get('t')!;
  assert.deepEqual(t.partitions.get(0), [1, 2], 'back to the original replicas');
  assert.equal(t.addingReplicas.size + t.removingReplicas.size, 0);
  assert.deepEqual(stopReplicasTo(h.sink.take(), 3, true), ['t-0'], 'the replica being added is deleted');
  assert.equal(h.zk.state('t', 0)!.leader, 1);
  assert.deepEqual(await h.controller.listPartitionReassignments([{ topic: 't', partition: 0 }]), []);
  await h.controller.stop();
});

test('a new target replaces one in progress; replicas no longer wanted are stopped', async () => {
  const h = await withTopic();
  await h.controller.alterPartitionReassignments([{ topic: 't', partition: 0, replicas: [2, 3] }]);
  h.sink.take();
  await h.controller.alterPartitionReassignments([{ topic: 't', partition: 0, replicas: [2, 4] }]);
  const t = h.zk.topics.get('t')!;
  assert.deepEqual(t.partitions.get(0), [2, 4, 1]);
  assert.deepEqual(t.addingReplicas.get(0), [4]);
  assert.deepEqual(t.removingReplicas.get(0), [1]);
  const sent = h.sink.take();
  assert.deepEqual(stopReplicasTo(sent, 3, true), ['t-0']);
  assert.ok(leaderAndIsrTo(sent, 4).some((p) => p.isNew));
  await catchUp(h, [1, 2, 4]);
  assert.deepEqual(h.zk.topics.get('t')!.partitions.get(0), [2, 4]);
  assert.equal(h.zk.state('t', 0)!.leader, 2);
  await h.controller.stop();
});

test('an API reassignment supersedes the same partition in /admin/reassign_partitions', async () => {
  const h = await withTopic();
  await h.zk.createTopic('u', 'AAAAAAAAAAAAAAAAAAAAAg', new Map([[0, [1, 2]]]));
  await h.controller.idle();
  await h.zk.createPartitionReassignment([
    { topic: 't', partition: 0, replicas: [2, 3] },
    { topic: 'u', partition: 0, replicas: [2, 3] },
  ]);
  await h.controller.idle();
  await h.controller.alterPartitionReassignments([{ topic: 't', partition: 0, replicas: [1, 2] }]);
  assert.deepEqual(h.zk.reassignment, [{ topic: 'u', partition: 0, replicas: [2, 3] }]);
  assert.deepEqual(h.zk.topics.get('t')!.partitions.get(0), [1, 2]);
  await h.controller.stop();
});

test('the ISR change notification completes a reassignment when no state watch is available', async () => {
  const h = await withTopic((zk) => {
    Object.assign(zk, { watchPartitionState: undefined });
  });
  await h.controller.alterPartitionReassignments([{ topic: 't', partition: 0, replicas: [2, 3] }]);
  const cur = h.zk.states.get('t-0')!;
  // A leader's ISR write without a watch to fire: nothing happens until the notification.
  h.zk.states.set('t-0', { state: { ...cur.state, isr: [1, 2, 3] }, zkVersion: cur.zkVersion + 1 });
  await h.controller.idle();
  assert.deepEqual(h.zk.topics.get('t')!.partitions.get(0), [2, 3, 1]);
  await h.zk.createIsrChangeNotification([{ topic: 't', partition: 0 }]);
  await h.controller.idle();
  assert.deepEqual(h.zk.topics.get('t')!.partitions.get(0), [2, 3]);
  assert.equal(h.zk.state('t', 0)!.leader, 2);
  assert.equal(h.zk.isrChanges.size, 0);
  await h.controller.stop();
});

test('a new controller resumes a reassignment left in the topic znode', async () => {
  const h = await withTopic((zk) => {
    zk.topics.set('t', {
      topic: 't',
      topicId: T_ID,
      partitions: new Map([[0, [2, 3, 1]]]),
      addingReplicas: new Map([[0, [3]]]),
      removingReplicas: new Map([[0, [1]]]),
      zkVersion: 4,
    });
    zk.writeState('t', 0, { leader: 1, leaderEpoch: 3, isr: [1, 2], controllerEpoch: 1 });
  });
  assert.deepEqual(await h.controller.listPartitionReassignments(null), [{ topic: 't', partition: 0, replicas: [2, 3, 1], adding: [3], removing: [1] }]);
  assert.equal(h.zk.state('t', 0)!.leaderEpoch, 4, 'the resumed reassignment re-sent LeaderAndIsr with a new epoch');
  await catchUp(h, [1, 2, 3]);
  assert.deepEqual(h.zk.topics.get('t')!.partitions.get(0), [2, 3]);
  assert.equal(h.zk.state('t', 0)!.leader, 2);
  await h.controller.stop();
});

test('a reassignment whose target caught up while no controller ran completes on failover', async () => {
  const h = await withTopic((zk) => {
    zk.topics.set('t', {
      topic: 't',
      topicId: T_ID,
      partitions: new Map([[0, [2, 3, 1]]]),
      addingReplicas: new Map([[0, [3]]]),
      removingReplicas: new Map([[0, [1]]]),
      zkVersion: 4,
    });
    zk.writeState('t', 0, { leader: 1, leaderEpoch: 3, isr: [1, 2, 3], controllerEpoch: 1 });
    zk.reassignment = [{ topic: 't', partition: 0, replicas: [2, 3] }];
  });
  assert.deepEqual(h.zk.topics.get('t')!.partitions.get(0), [2, 3]);
  assert.equal(h.zk.state('t', 0)!.leader, 2);
  assert.equal(h.zk.reassignment, undefined);
  await h.controller.stop();
});

test('a target replica on a broker that was down starts when the broker registers', async () => {
  const h = await withTopic();
  h.zk.killBroker(4);
  await h.controller.idle();
  await h.zk.createPartitionReassignment([{ topic: 't', partition: 0, replicas: [1, 4] }]);
  await h.controller.idle();
  assert.deepEqual(h.zk.topics.get('t')!.partitions.get(0), [1, 4, 2], 'the ZooKeeper path does not check liveness (as Kafka)');
  h.sink.take();
  h.zk.registerBroker(4);
  await h.controller.idle();
  assert.ok(
    leaderAndIsrTo(h.sink.take(), 4).some((p) => p.partition === 0 && p.isNew),
    'the returning broker is told to create the replica',
  );
  await catchUp(h, [1, 2, 4]);
  assert.deepEqual(h.zk.topics.get('t')!.partitions.get(0), [1, 4]);
  await h.controller.stop();
});

test('the reassignment APIs answer NOT_CONTROLLER on a broker that is not the controller', async () => {
  const h = await withTopic();
  await h.membership.resign();
  await h.controller.idle();
  await assert.rejects(h.controller.alterPartitionReassignments([]), (e: unknown) => e instanceof KafkaError && e.code === ErrorCode.NOT_CONTROLLER);
  await assert.rejects(h.controller.listPartitionReassignments(null), (e: unknown) => e instanceof KafkaError && e.code === ErrorCode.NOT_CONTROLLER);
  await h.controller.stop();
});

test("elections read the ISR from ZooKeeper first: a leader's ISR expansion not yet announced still counts", async () => {
  const h = await withTopic();
  // Broker 1 (preferred) dies: leader 2, ISR [2]; it returns, and the leader (2) adds it back.
  h.zk.killBroker(1);
  await h.controller.idle();
  assert.deepEqual(h.zk.state('t', 0), { ...h.zk.state('t', 0)!, leader: 2, isr: [2] });
  h.zk.registerBroker(1);
  await h.controller.idle();
  assert.equal(h.zk.expandIsr('t', 0, [2, 1]), true);
  const r = await h.controller.electLeaders(0, [{ topic: 't', partition: 0 }]);
  assert.equal(r.get('t-0'), 0);
  assert.equal(h.zk.state('t', 0)!.leader, 1);
  await h.controller.stop();
});

test('a partition that completes leaves /admin/reassign_partitions; the others stay until they complete', async () => {
  const h = await withTopic();
  await h.zk.createTopic('u', 'AAAAAAAAAAAAAAAAAAAAAg', new Map([[0, [1, 2]]]));
  await h.controller.idle();
  await h.zk.createPartitionReassignment([
    { topic: 't', partition: 0, replicas: [1, 3] },
    { topic: 'u', partition: 0, replicas: [1, 4] },
  ]);
  await h.controller.idle();
  await catchUp(h, [1, 2, 3]);
  assert.deepEqual(h.zk.topics.get('t')!.partitions.get(0), [1, 3]);
  assert.deepEqual(h.zk.reassignment, [{ topic: 'u', partition: 0, replicas: [1, 4] }]);
  assert.deepEqual(h.zk.topics.get('u')!.partitions.get(0), [1, 4, 2]);
  const u = h.zk.states.get('u-0')!;
  assert.equal(h.zk.expandIsr('u', 0, [1, 2, 4], u.zkVersion), true);
  await h.controller.idle();
  assert.equal(h.zk.reassignment, undefined);
  assert.deepEqual(h.zk.topics.get('u')!.partitions.get(0), [1, 4]);
  // A new request after the node was deleted is seen (the watch was re-armed).
  await h.zk.createPartitionReassignment([{ topic: 't', partition: 0, replicas: [3] }]);
  await h.controller.idle();
  assert.deepEqual(h.zk.topics.get('t')!.partitions.get(0), [3]);
  assert.equal(h.zk.state('t', 0)!.leader, 3);
  await h.controller.stop();
});

test('a request for an unknown partition or a topic being deleted is dropped from the znode (UNKNOWN_TOPIC_OR_PARTITION)', async () => {
  const h = await withTopic();
  await h.zk.createPartitionReassignment([
    { topic: 't', partition: 0, replicas: [1, 3] },
    { topic: 'nope', partition: 0, replicas: [1] },
  ]);
  await h.controller.idle();
  assert.deepEqual(h.zk.reassignment, [{ topic: 't', partition: 0, replicas: [1, 3] }]);
  await h.controller.stop();
});

test('a ZooKeeper request with an empty or duplicated replica list is refused and dropped, never deleting replicas', async () => {
  const h = await withTopic();
  await h.zk.createTopic('u', 'AAAAAAAAAAAAAAAAAAAAAg', new Map([[0, [1, 2]]]));
  await h.controller.idle();
  await h.zk.createPartitionReassignment([
    { topic: 't', partition: 0, replicas: [] },
    { topic: 'u', partition: 0, replicas: [3, 3] },
  ]);
  await h.controller.idle();
  assert.equal(h.zk.reassignment, undefined);
  assert.deepEqual(h.zk.topics.get('t')!.partitions.get(0), [1, 2]);
  assert.deepEqual(h.zk.topics.get('u')!.partitions.get(0), [1, 2]);
  assert.equal(h.sink.take().filter((s) => s.request.api === 'StopReplica').length, 0);
  await h.controller.stop();
});

test('a target replica in the ISR whose broker the controller does not see live yet: the move waits for it, never leaving the partition leaderless', async () => {
  // CI saw this end-to-end: the new replica's broker, frozen past its ZooKeeper session, caught up
  // (the leader took it into the ISR) before its re-registration reached the controller. Completing
  // then failed to elect it, took the old leader out of the ISR, and left leader -1 for good.
  const h = await withTopic();
  await h.zk.createPartitionReassignment([{ topic: 't', partition: 0, replicas: [3] }]);
  await h.controller.idle();
  h.zk.killBroker(3);
  await h.controller.idle();
  await catchUp(h, [1, 2, 3]);
  assert.deepEqual(h.zk.topics.get('t')!.partitions.get(0), [3, 1, 2], 'still pending while its only target is not live');
  assert.equal(h.zk.state('t', 0)!.leader, 1, 'the old leader keeps leading');
  assert.ok(h.zk.reassignment, 'the request stays in /admin/reassign_partitions');
  h.zk.registerBroker(3);
  await h.controller.idle();
  assert.deepEqual(h.zk.topics.get('t')!.partitions.get(0), [3]);
  const s = h.zk.state('t', 0)!;
  assert.equal(s.leader, 3);
  assert.deepEqual(s.isr, [3]);
  assert.equal(h.zk.reassignment, undefined);
  await h.controller.stop();
});
