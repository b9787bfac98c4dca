/**
 * Offset expiry with a short retention (offsets.retention.minutes=1, checked every 500 ms): an
 * empty group's offsets disappear and tombstones are written to __consumer_offsets; a live
 * (stable, subscribed) group's offsets stay. The minute is not waited out: the group
 * coordinator's clock is moved ahead (as Kafka's tests use MockTime), first to just under the
 * retention (nothing expires), then past it; the expiry timer itself runs in real time.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Kafka, logLevel } from 'kafkajs';
import { startTestBroker } from '../helpers/broker.js';
import { replayLog } from '../../src/coordinator/runtime/partition-log.js';
import { decodeRecord } from '../../src/coordinator/group/records.js';
import { OFFSETS_TOPIC, type GroupCoordinator } from '../../src/coordinator/group/group-coordinator.js';

const RETENTION_MS = 60_000;
const CHECK_INTERVAL_MS = 500;

/**
 * Sets the coordinator runtime's clock (the `now` its operations and timers see, a private
 * field: BrokerOptions has no clock seam) to real time plus `aheadMs`.
 */
function setCoordinatorClockAhead(gc: GroupCoordinator, aheadMs: number): void {
  const runtime = gc.runtime as unknown as { clock: () => number };
  assert.equal(typeof runtime.clock, 'function', 'the coordinator runtime has no clock field to move');
  runtime.clock = () => Date.now() + aheadMs;
}

test('an empty group expires (with tombstones) while a live group keeps its offsets', { timeout: 180_000 }, async () => {
  const b = await startTestBroker({ 'offsets.retention.minutes': '1', 'offsets.retention.check.interval.ms': String(CHECK_INTERVAL_MS) });
  const kafka = new Kafka({ brokers: [b.bootstrap], logLevel: logLevel.NOTHING });
  const admin = kafka.admin();
  await admin.connect();
  const topic = 'expiry-topic';
  const live = kafka.consumer({ groupId: 'g-live', sessionTimeout: 10000, heartbeatInterval: 500 });
  try {
    await admin.createTopics({ topics: [{ topic, numPartitions: 1 }] });
    const producer = kafka.producer();
    await producer.connect();
    await producer.send({ topic, messages: [{ value: 'a' }, { value: 'b' }] });
    await producer.disconnect();
    const consumeAll = async (groupId: string, c = kafka.consumer({ groupId })) => {
      let n = 0;
      await c.connect();
      await c.subscribe({ topic, fromBeginning: true });
      await new Promise<void>((resolve) => void c.run({ autoCommitInterval: 50, eachMessage: async () => void (++n === 2 && resolve()) }));
      // Wait for the commit to be visible before going on.
      const deadline = Date.now() + 10_000;
      while (Date.now() < deadline) {
        const o = await admin.fetchOffsets({ groupId, topics: [topic] });
        if (o[0]!.partitions[0]!.offset === '2') break;
        await new Promise((r) => setTimeout(r, 50));
      }
      return c;
    };
    const empty = await consumeAll('g-empty');
    // The group becomes empty between these two instants.
    const emptyNotBefore = Date.now();
    await empty.disconnect();
    const emptyBy = Date.now();
    await consumeAll('g-live', live);
    const offset = async (groupId: string) => (await admin.fetchOffsets({ groupId, topics: [topic] }))[0]!.partitions[0]!.offset;
    assert.equal(await offset('g-empty'), '2');
    const gc = b.broker.services.groupCoordinator;
    // The coordinator's clock five seconds short of the retention: three checks run, and nothing may expire yet.
    setCoordinatorClockAhead(gc, emptyNotBefore + RETENTION_MS - 5000 - Date.now());
    await new Promise((r) => setTimeout(r, 3 * CHECK_INTERVAL_MS)); // a negative check: no event to wait for
    assert.equal(await offset('g-empty'), '2', 'the empty group expired before its retention');
    setCoordinatorClockAhead(gc, emptyBy + RETENTION_MS + 1000 - Date.now());
    const deadline = Date.now() + 30_000;
    while ((await offset('g-empty')) !== '-1') {
      assert.ok(Date.now() < deadline, 'the empty group never expired');
      await new Promise((r) => setTimeout(r, 100));
    }
    assert.equal(await offset('g-live'), '2', 'the live group kept its offsets');
    const p = b.broker.services.replicaManager.getPartition(OFFSETS_TOPIC, gc.partitionFor('g-empty'))!;
    const tombstones: string[] = [];
    await replayLog(p, (k, v) => {
      const r = decodeRecord(k, v);
      if (r && r.group === 'g-empty' && r.value === null) tombstones.push(r.type);
    });
    assert.ok(tombstones.includes('offset'), 'an offset tombstone was written');
    assert.ok(tombstones.includes('group'), 'a group tombstone was written');
    const groups = await admin.listGroups();
    assert.ok(!groups.groups.some((g) => g.groupId === 'g-empty'), 'the expired group is gone');
  } finally {
    await live.disconnect().catch(() => undefined);
    await admin.disconnect();
    await b.stop();
  }
});
