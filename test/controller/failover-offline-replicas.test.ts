/**
 * A controller elected while a broker is dead (it may have been the old controller) treats that
 * broker's replicas as Kafka's ReplicaStateMachine.startup does: OfflineReplica, which takes
 * them out of every ISR (and leaderless partitions get a leader from the rest). Otherwise a
 * follower that died with the controller stays in the ISR, and acks=all waits for it until the
 * leader's own lag check (replica.lag.time.max.ms) drops it.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startController } from './fakes.js';

const T_ID = 'AAAAAAAAAAAAAAAAAAAAAQ';

test('failover with a dead broker: its replicas leave every ISR, its partitions get new leaders', async () => {
  const h = await startController([2, 3], {}, (zk) => {
    zk.topics.set('t', {
      topic: 't',
      topicId: T_ID,
      partitions: new Map([
        [0, [2, 1, 3]],
        [1, [1, 2, 3]],
        [2, [2, 3]],
      ]),
      addingReplicas: new Map(),
      removingReplicas: new Map(),
      zkVersion: 0,
    });
    zk.writeState('t', 0, { leader: 2, leaderEpoch: 4, isr: [2, 1, 3], controllerEpoch: 0 });
    zk.writeState('t', 1, { leader: 1, leaderEpoch: 7, isr: [1, 2, 3], controllerEpoch: 0 });
    zk.writeState('t', 2, { leader: 2, leaderEpoch: 1, isr: [2, 3], controllerEpoch: 0 });
  });
  await h.controller.idle();
  assert.deepEqual(h.zk.state('t', 0), { leader: 2, leaderEpoch: 5, isr: [2, 3], controllerEpoch: 1 }, 'a dead follower leaves the ISR');
  const p1 = h.zk.state('t', 1)!;
  assert.equal(p1.leader, 2, 'the dead leader is replaced by the next ISR member');
  assert.deepEqual(p1.isr, [2, 3]);
  assert.ok(p1.leaderEpoch > 7);
  assert.deepEqual(h.zk.state('t', 2), { leader: 2, leaderEpoch: 1, isr: [2, 3], controllerEpoch: 0 }, 'untouched');
  const sent = h.sink.take();
  assert.ok(!sent.some((s) => s.brokerId === 1), 'nothing is sent to the dead broker');
  const toLeader = sent
    .filter((s) => s.brokerId === 2 && s.request.api === 'LeaderAndIsr')
    .flatMap((s) =>
      s.request.api === 'LeaderAndIsr'
        ? s.request.request.topicStates.flatMap((t) => t.partitionStates.map((p) => `${p.partitionIndex}:${p.isr.join(',')}`))
        : [],
    );
  assert.ok(toLeader.includes('0:2,3'), `the leader of t-0 is told its smaller ISR (got ${toLeader.join(' ')})`);
  await h.controller.stop();
});
