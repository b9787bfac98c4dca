/**
 * The controller's side of a leader's ISR change (Kafka's IsrChangeNotificationHandler): a leader
 * wrote a partition state itself and created an isr_change_ notification; the controller re-reads
 * the states named, keeps them in its context (with the new zkVersion, so its own later writes are
 * not refused), tells every live broker with UpdateMetadata (no LeaderAndIsr: leadership did not
 * change) and deletes the notifications.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startController } from './fakes.js';

const T_ID = 'AAAAAAAAAAAAAAAAAAAABA';

test('an ISR change notification: states re-read, UpdateMetadata to every live broker, notifications deleted', async () => {
  const h = await startController([1, 2, 3]);
  try {
    await h.zk.createTopic(
      't',
      T_ID,
      new Map([
        [0, [1, 2, 3]],
        [1, [2, 3, 1]],
      ]),
    );
    await h.controller.idle();
    h.sink.take();
    // Leader 1 shrinks t-0's ISR to [1, 2] (same leader epoch), as the leader's ISR writer does.
    const before = h.zk.states.get('t-0')!;
    h.zk.states.set('t-0', { state: { ...before.state, isr: [1, 2] }, zkVersion: before.zkVersion + 1 });
    await h.zk.createIsrChangeNotification([
      { topic: 't', partition: 0 },
      { topic: 'gone', partition: 0 },
    ]);
    await h.controller.idle();
    const sent = h.sink.take();
    assert.equal(sent.filter((s) => s.request.api === 'LeaderAndIsr').length, 0, 'no leadership change');
    for (const b of [1, 2, 3]) {
      const states = sent.flatMap((s) => (s.brokerId === b && s.request.api === 'UpdateMetadata' ? s.request.request.topicStates : []));
      const p0 = states
        .filter((x) => x.topicName === 't')
        .flatMap((x) => x.partitionStates)
        .filter((p) => p.partitionIndex === 0);
      assert.equal(p0.length, 1, `broker ${b} is told about t-0`);
      assert.deepEqual([p0[0]!.isr, p0[0]!.zkVersion], [[1, 2], before.zkVersion + 1]);
      assert.ok(
        states.every((x) => x.topicName !== 'gone'),
        'unknown topics are ignored',
      );
    }
    assert.equal(h.zk.isrChanges.size, 0, 'notifications deleted');
    assert.deepEqual(h.controller.context.leadership.get('t-0'), { state: { ...before.state, isr: [1, 2] }, zkVersion: before.zkVersion + 1 });
  } finally {
    await h.controller.stop();
  }
});
