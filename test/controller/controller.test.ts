/**
 * The controller against an in-memory ZooKeeper and a captured request batch: what it writes to
 * ZooKeeper and which requests reach which brokers, for Kafka's main scenarios.
 */
import { emptyControllerStateCounts } from '../../src/controller/controller-stats.js';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { KafkaError } from '../../src/protocol/errors.js';
import { startController, type Sent } from './fakes.js';

const T_ID = 'AAAAAAAAAAAAAAAAAAAAAQ';

function leaderAndIsrTo(
  sent: Sent[],
  brokerId: number,
): { topic: string; partition: number; leader: number; isr: number[]; leaderEpoch: number; isNew: boolean }[] {
  return sent.flatMap((s) =>
    s.brokerId === brokerId && s.request.api === 'LeaderAndIsr'
      ? s.request.request.topicStates.flatMap((t) =>
          t.partitionStates.map((p) => ({
            topic: t.topicName,
            partition: p.partitionIndex,
            leader: p.leader,
            isr: p.isr,
            leaderEpoch: p.leaderEpoch,
            isNew: p.isNew,
          })),
        )
      : [],
  );
}
function updateMetadataTo(sent: Sent[], brokerId: number) {
  return sent.flatMap((s) => (s.brokerId === brokerId && s.request.api === 'UpdateMetadata' ? [s.request.request] : []));
}
function stopReplicasTo(sent: Sent[], brokerId: number, deleting: boolean): string[] {
  return sent.flatMap((s) =>
    s.brokerId === brokerId && s.request.api === 'StopReplica' && s.request.request.deletePartitions === deleting
      ? s.request.request.topicStates.flatMap((t) => t.partitionStates.map((p) => `${t.topicName}-${p.partitionIndex}`))
      : [],
  );
}

test('on failover the controller ensures /feature and tells every live broker the cluster', async () => {
  const h = await startController([1, 2, 3]);
  assert.equal(h.controller.isActive, true);
  assert.equal(h.zk.featureEnsured, true);
  const sent = h.sink.take();
  for (const b of [1, 2, 3]) {
    const um = updateMetadataTo(sent, b);
    assert.ok(um.length >= 1, `UpdateMetadata to ${b}`);
    assert.deepEqual(
      um[0]!.liveBrokers.map((x) => x.id),
      [1, 2, 3],
    );
    assert.equal(um[0]!.controllerEpoch, 1);
    assert.equal(um[0]!.brokerEpoch, h.zk.brokers.get(b)!.brokerEpoch);
  }
  await h.controller.stop();
});

test('a new topic gets leader = first live replica, isr = live replicas, and requests to the right brokers', async () => {
  const h = await startController([1, 2, 3]);
  h.sink.take();
  await h.zk.createTopic(
    't',
    T_ID,
    new Map([
      [0, [1, 2, 3]],
      [1, [2, 3, 1]],
      [2, [3, 4]],
    ]),
  );
  await h.controller.idle();
  assert.deepEqual(h.zk.state('t', 0), { leader: 1, leaderEpoch: 0, isr: [1, 2, 3], controllerEpoch: 1 });
  assert.deepEqual(h.zk.state('t', 1), { leader: 2, leaderEpoch: 0, isr: [2, 3, 1], controllerEpoch: 1 });
  // Broker 4 is not registered: partition 2 starts on 3 alone.
  assert.deepEqual(h.zk.state('t', 2), { leader: 3, leaderEpoch: 0, isr: [3], controllerEpoch: 1 });
  const sent = h.sink.take();
  assert.deepEqual(
    leaderAndIsrTo(sent, 1)
      .map((p) => p.partition)
      .sort(),
    [0, 1],
  );
  assert.deepEqual(
    leaderAndIsrTo(sent, 3)
      .map((p) => p.partition)
      .sort(),
    [0, 1, 2],
  );
  assert.ok(leaderAndIsrTo(sent, 1).every((p) => p.isNew));
  assert.equal(leaderAndIsrTo(sent, 4).length, 0);
  const lai = sent.find((s) => s.brokerId === 2 && s.request.api === 'LeaderAndIsr')!;
  assert.equal(lai.request.api === 'LeaderAndIsr' && lai.request.request.topicStates[0]!.topicId, T_ID);
  for (const b of [1, 2, 3]) {
    const um = updateMetadataTo(sent, b);
    const parts = um.flatMap((r) => r.topicStates.filter((t) => t.topicName === 't').flatMap((t) => t.partitionStates));
    assert.deepEqual(parts.map((p) => p.partitionIndex).sort(), [0, 1, 2], `broker ${b} learns every partition`);
    const p2 = parts.find((p) => p.partitionIndex === 2)!;
    assert.deepEqual(p2.offlineReplicas, [4]);
  }
  assert.equal(h.controller.context.partitionStates.get('t-0'), 'OnlinePartition');
  assert.equal(h.controller.context.replicaStates.get('t-2@4'), 'OfflineReplica');
  await h.controller.stop();
});

test('partitions added to an existing topic get leaders', async () => {
  const h = await startController([1, 2]);
  await h.zk.createTopic('t', T_ID, new Map([[0, [1, 2]]]));
  await h.controller.idle();
  h.sink.take();
  const a = h.zk.topics.get('t')!;
  await h.zk.setTopicAssignment(
    {
      ...a,
      partitions: new Map([
        [0, [1, 2]],
        [1, [2, 1]],
      ]),
    },
    a.zkVersion,
  );
  await h.controller.idle();
  assert.deepEqual(h.zk.state('t', 1), { leader: 2, leaderEpoch: 0, isr: [2, 1], controllerEpoch: 1 });
  assert.deepEqual(
    leaderAndIsrTo(h.sink.take(), 1).map((p) => p.partition),
    [1],
  );
  await h.controller.stop();
});

test('broker death moves leadership to the next ISR member and shrinks ISRs', async () => {
  const h = await startController([1, 2, 3]);
  await h.zk.createTopic(
    't',
    T_ID,
    new Map([
      [0, [1, 2, 3]],
      [1, [2, 1, 3]],
      [2, [3, 2]],
    ]),
  );
  await h.controller.idle();
  h.sink.take();
  h.zk.killBroker(1);
  await h.controller.idle();
  assert.deepEqual(h.zk.state('t', 0), { leader: 2, leaderEpoch: 1, isr: [2, 3], controllerEpoch: 1 });
  assert.deepEqual(h.zk.state('t', 1), { leader: 2, leaderEpoch: 1, isr: [2, 3], controllerEpoch: 1 });
  assert.deepEqual(h.zk.state('t', 2), { leader: 3, leaderEpoch: 0, isr: [3, 2], controllerEpoch: 1 }, 'untouched');
  const sent = h.sink.take();
  assert.deepEqual(
    leaderAndIsrTo(sent, 2)
      .map((p) => `${p.partition}:${p.leader}:${p.leaderEpoch}`)
      .sort(),
    ['0:2:1', '1:2:1'],
  );
  assert.equal(leaderAndIsrTo(sent, 1).length, 0, 'nothing to the dead broker');
  assert.ok(updateMetadataTo(sent, 3).some((um) => um.liveBrokers.map((b) => b.id).join() === '2,3'));
  assert.deepEqual(h.sink.removed, [1]);
  await h.controller.stop();
});

test('with no live ISR member the partition goes leaderless (clean), keeping the last ISR member', async () => {
  const h = await startController([1, 2], {}, (zk) => {
    zk.topics.set('t', { topic: 't', topicId: T_ID, partitions: new Map([[0, [1, 2]]]), addingReplicas: new Map(), removingReplicas: new Map(), zkVersion: 0 });
    zk.writeState('t', 0, { leader: 1, leaderEpoch: 3, isr: [1], controllerEpoch: 0 });
  });
  h.zk.killBroker(1);
  await h.controller.idle();
  assert.deepEqual(h.zk.state('t', 0), { leader: -1, leaderEpoch: 4, isr: [1], controllerEpoch: 1 });
  assert.equal(h.controller.context.partitionStates.get('t-0'), 'OfflinePartition');
  // When 1 returns it leads again (it has everything).
  h.zk.registerBroker(1);
  await h.controller.idle();
  assert.deepEqual(h.zk.state('t', 0), { leader: 1, leaderEpoch: 5, isr: [1], controllerEpoch: 1 });
  await h.controller.stop();
});

test('unclean election only when unclean.leader.election.enable (broker default or topic config)', async () => {
  const setup = (zk: import('./fakes.js').FakeZk): void => {
    zk.topics.set('t', { topic: 't', topicId: T_ID, partitions: new Map([[0, [1, 2]]]), addingReplicas: new Map(), removingReplicas: new Map(), zkVersion: 0 });
    zk.writeState('t', 0, { leader: 1, leaderEpoch: 3, isr: [1], controllerEpoch: 0 });
  };
  const h = await startController([1, 2], { uncleanLeaderElectionEnable: true }, setup);
  h.zk.killBroker(1);
  await h.controller.idle();
  assert.deepEqual(h.zk.state('t', 0), { leader: 2, leaderEpoch: 4, isr: [2], controllerEpoch: 1 });
  await h.controller.stop();

  const h2 = await startController([1, 2], {}, async (zk) => {
    setup(zk);
    await zk.setEntityConfigs('topics', 't', { 'unclean.leader.election.enable': 'true' });
  });
  h2.zk.killBroker(1);
  await h2.controller.idle();
  assert.equal(h2.zk.state('t', 0)!.leader, 2, 'topic config enables it');
  await h2.controller.stop();
});

test("setting a topic's unclean.leader.election.enable=true elects its offline partitions at once", async () => {
  const h = await startController([1, 2], {}, (zk) => {
    zk.topics.set('t', {
      topic: 't',
      topicId: T_ID,
      partitions: new Map([
        [0, [1, 2]],
        [1, [1, 2]],
      ]),
      addingReplicas: new Map(),
      removingReplicas: new Map(),
      zkVersion: 0,
    });
    zk.topics.set('u', {
      topic: 'u',
      topicId: 'AAAAAAAAAAAAAAAAAAAAAg',
      partitions: new Map([[0, [1, 2]]]),
      addingReplicas: new Map(),
      removingReplicas: new Map(),
      zkVersion: 0,
    });
    for (const [topic, p] of [
      ['t', 0],
      ['t', 1],
      ['u', 0],
    ] as const)
      zk.writeState(topic, p, { leader: 1, leaderEpoch: 3, isr: [1], controllerEpoch: 0 });
  });
  h.zk.killBroker(1);
  await h.controller.idle();
  assert.equal(h.zk.state('t', 0)!.leader, -1, 'clean: offline');
  // The controller's gauges (kafka_controller_kafkacontroller_*): three partitions offline, none
  // unclean yet; a leaderless partition is not led by its preferred replica either (as Kafka counts).
  const counts = emptyControllerStateCounts();
  assert.deepEqual(h.controller.stateCounts(counts), {
    offlinePartitions: 3,
    preferredReplicaImbalance: 3,
    globalTopics: 2,
    globalPartitions: 3,
    activeBrokers: 1,
  });
  assert.equal(h.controller.stats.uncleanLeaderElections, 0);
  // A change that does not allow unclean elections changes nothing.
  await h.zk.setEntityConfigs('topics', 't', { 'retention.ms': '1000' });
  h.controller.topicConfigChanged('t');
  await h.controller.idle();
  assert.equal(h.zk.state('t', 0)!.leader, -1);
  h.sink.take();
  await h.zk.setEntityConfigs('topics', 't', { 'unclean.leader.election.enable': 'true' });
  h.controller.topicConfigChanged('t');
  await h.controller.idle();
  for (const p of [0, 1]) assert.deepEqual(h.zk.state('t', p), { leader: 2, leaderEpoch: 5, isr: [2], controllerEpoch: 1 });
  assert.equal(h.zk.state('u', 0)!.leader, -1, 'another topic is not touched');
  assert.equal(h.controller.stats.uncleanLeaderElections, 2);
  // t's partitions are led by 2, not their preferred replica 1; u's stays offline (imbalanced too).
  assert.deepEqual(h.controller.stateCounts(counts), {
    offlinePartitions: 1,
    preferredReplicaImbalance: 3,
    globalTopics: 2,
    globalPartitions: 3,
    activeBrokers: 1,
  });
  assert.ok(h.controller.stats.stateTimes.get('LeaderElection')!.count >= 1, 'the broker change was timed');
  assert.ok(h.controller.stats.stateTimes.get('TopicUncleanLeaderElectionEnable')!.count >= 2);
  assert.equal(h.controller.eventQueueSize, 0);
  assert.deepEqual(
    leaderAndIsrTo(h.sink.take(), 2).map((x) => [x.partition, x.leader]),
    [
      [0, 2],
      [1, 2],
    ],
  );
  await h.controller.stop();
});

test('ElectLeaders unclean elects an offline partition outside the ISR; live leaders need no election', async () => {
  const h = await startController([1, 2], {}, (zk) => {
    zk.topics.set('t', {
      topic: 't',
      topicId: T_ID,
      partitions: new Map([
        [0, [1, 2]],
        [1, [2, 1]],
      ]),
      addingReplicas: new Map(),
      removingReplicas: new Map(),
      zkVersion: 0,
    });
    zk.writeState('t', 0, { leader: 1, leaderEpoch: 0, isr: [1], controllerEpoch: 0 });
    zk.writeState('t', 1, { leader: 2, leaderEpoch: 0, isr: [2, 1], controllerEpoch: 0 });
  });
  h.zk.killBroker(1);
  await h.controller.idle();
  assert.equal(h.zk.state('t', 0)!.leader, -1);
  const r = await h.controller.electLeaders(1, [
    { topic: 't', partition: 0 },
    { topic: 't', partition: 1 },
    { topic: 'nope', partition: 0 },
  ]);
  assert.deepEqual(Object.fromEntries(r), { 't-0': 0, 't-1': 84, 'nope-0': 3 });
  assert.deepEqual(h.zk.state('t', 0)!.isr, [2]);
  await h.controller.stop();
});

test('preferred replica election: ElectLeaders, the admin znode, and auto rebalance', async () => {
  const h = await startController([1, 2, 3], { autoLeaderRebalanceEnable: true, leaderImbalanceCheckIntervalSeconds: 0.05 }, (zk) => {
    zk.topics.set('t', {
      topic: 't',
      topicId: T_ID,
      partitions: new Map([
        [0, [1, 2]],
        [1, [2, 1]],
        [2, [3, 1]],
      ]),
      addingReplicas: new Map(),
      removingReplicas: new Map(),
      zkVersion: 0,
    });
    zk.writeState('t', 0, { leader: 2, leaderEpoch: 1, isr: [2, 1], controllerEpoch: 0 });
    zk.writeState('t', 1, { leader: 2, leaderEpoch: 1, isr: [2, 1], controllerEpoch: 0 });
    zk.writeState('t', 2, { leader: 1, leaderEpoch: 1, isr: [1], controllerEpoch: 0 });
  });
  // Auto rebalance (interval 50 ms): broker 1 leads 0 of its 1 preferred partitions (100% > 10%).
  const deadline = Date.now() + 10_000;
  while (h.zk.state('t', 0)!.leader !== 1 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
  assert.equal(h.zk.state('t', 0)!.leader, 1);
  assert.equal(h.zk.state('t', 0)!.leaderEpoch, 2);
  // Broker 3 is not in the ISR of partition 2: no rebalance possible there.
  const r = await h.controller.electLeaders(0, [
    { topic: 't', partition: 1 },
    { topic: 't', partition: 2 },
  ]);
  assert.deepEqual(Object.fromEntries(r), { 't-1': 84, 't-2': 80 });
  await h.controller.stop();

  const h2 = await startController([1, 2], {}, (zk) => {
    zk.topics.set('t', { topic: 't', topicId: T_ID, partitions: new Map([[0, [1, 2]]]), addingReplicas: new Map(), removingReplicas: new Map(), zkVersion: 0 });
    zk.writeState('t', 0, { leader: 2, leaderEpoch: 1, isr: [2, 1], controllerEpoch: 0 });
  });
  assert.equal(h2.zk.state('t', 0)!.leader, 2, 'no auto rebalance when disabled');
  await h2.zk.createPreferredReplicaElection([{ topic: 't', partition: 0 }]);
  await h2.controller.idle();
  assert.equal(h2.zk.state('t', 0)!.leader, 1);
  assert.equal(h2.zk.preferred, undefined, 'the znode is removed');
  await h2.controller.stop();
});

test('controlled shutdown moves leadership away and takes the broker out of ISRs', async () => {
  const h = await startController([1, 2, 3]);
  await h.zk.createTopic(
    't',
    T_ID,
    new Map([
      [0, [1, 2, 3]],
      [1, [2, 1, 3]],
      [2, [1]],
    ]),
  );
  await h.controller.idle();
  h.sink.take();
  const remaining = await h.controller.controlledShutdown(1, h.zk.brokers.get(1)!.brokerEpoch);
  assert.deepEqual(remaining, [], 'a single-replica partition does not block the shutdown');
  assert.deepEqual(h.zk.state('t', 0), { leader: 2, leaderEpoch: 1, isr: [2, 3], controllerEpoch: 1 });
  assert.deepEqual(h.zk.state('t', 1), { leader: 2, leaderEpoch: 1, isr: [2, 3], controllerEpoch: 1 });
  assert.equal(h.zk.state('t', 2)!.leader, 1);
  const sent = h.sink.take();
  assert.deepEqual(stopReplicasTo(sent, 1, false), ['t-1'], 'the follower replica is stopped (no delete)');
  assert.equal(leaderAndIsrTo(sent, 1).length, 0, 'the new leadership of t-0 is not sent to the broker leaving');
  await assert.rejects(h.controller.controlledShutdown(2, 12345n), (e: unknown) => e instanceof KafkaError && e.code === 77);
  await assert.rejects(h.controller.controlledShutdown(9, -1n), (e: unknown) => e instanceof KafkaError && e.code === 8);
  await h.controller.stop();
});

test('topic deletion completes only when every replica answered, and resumes when a dead broker returns', async () => {
  const h = await startController([1, 2, 3]);
  await h.zk.createTopic(
    't',
    T_ID,
    new Map([
      [0, [1, 2]],
      [1, [2, 3]],
    ]),
  );
  await h.controller.idle();
  h.zk.killBroker(3);
  await h.controller.idle();
  h.sink.take();
  await h.zk.markTopicForDeletion('t');
  await h.controller.idle();
  let sent = h.sink.sent;
  // Everyone hears leader -2 for the partitions.
  const um = updateMetadataTo(sent, 1).flatMap((r) => r.topicStates.flatMap((t) => t.partitionStates));
  assert.ok(um.length === 2 && um.every((p) => p.leader === -2), JSON.stringify(um));
  assert.deepEqual(stopReplicasTo(sent, 1, true), ['t-0']);
  assert.deepEqual(stopReplicasTo(sent, 2, true).sort(), ['t-0', 't-1']);
  assert.equal(h.sink.answerStopReplicas(1), 1);
  await h.controller.idle();
  assert.ok(h.zk.topics.has('t'));
  assert.equal(h.sink.answerStopReplicas(2, 56), 1, 'broker 2 fails (KAFKA_STORAGE_ERROR)');
  await h.controller.idle();
  assert.ok(h.zk.topics.has('t'), 'still there: 2 failed and 3 is down');
  h.sink.take();
  h.zk.registerBroker(3);
  await h.controller.idle();
  sent = h.sink.sent;
  assert.deepEqual(stopReplicasTo(sent, 3, true), ['t-1'], 'the returning broker deletes its replica');
  assert.deepEqual(stopReplicasTo(sent, 2, true).sort(), ['t-0', 't-1'], 'the failed replicas are retried');
  assert.equal(leaderAndIsrTo(sent, 3).length, 0, 'no LeaderAndIsr for a topic being deleted');
  h.sink.answerStopReplicas(3);
  await h.controller.idle();
  assert.ok(h.zk.topics.has('t'));
  h.sink.answerStopReplicas(2);
  await h.controller.idle();
  assert.equal(h.zk.topics.has('t'), false, 'topic znodes deleted');
  assert.equal(h.zk.deletions.has('t'), false, 'marker deleted');
  assert.equal(h.zk.state('t', 0), undefined);
  assert.equal(h.controller.context.topics.has('t'), false);
  await h.controller.stop();
});

test('a stale fence (another controller bumped the epoch) makes the controller resign', async () => {
  const h = await startController([1, 2]);
  h.zk.bumpEpoch();
  await h.zk.createTopic('t', T_ID, new Map([[0, [1, 2]]]));
  await h.controller.idle();
  assert.equal(h.membership.resignations, 1);
  assert.equal(h.controller.isActive, false);
  assert.equal(h.zk.state('t', 0), undefined, 'nothing written');
  await assert.rejects(h.controller.electLeaders(0, null), (e: unknown) => e instanceof KafkaError && e.code === 41);
  // Later watches of the old term are ignored.
  h.sink.take();
  h.zk.killBroker(2);
  await h.controller.idle();
  assert.equal(h.sink.sent.length, 0);
  await h.controller.stop();
});

test('a topic written without a topic id (before Kafka 2.8) gets one from the controller', async () => {
  const h = await startController([1]);
  await h.zk.createTopic('old', '', new Map([[0, [1]]]));
  await h.controller.idle();
  const id = h.zk.topics.get('old')!.topicId;
  assert.match(id, /^[A-Za-z0-9_-]{22}$/);
  const lai = h.sink.take().find((s) => s.request.api === 'LeaderAndIsr');
  assert.equal(lai?.request.api === 'LeaderAndIsr' && lai.request.request.topicStates[0]!.topicId, id);
  await h.controller.stop();
});
