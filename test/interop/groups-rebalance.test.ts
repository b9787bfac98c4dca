/**
 * Rebalancing: three kafkajs consumers join and leave a group on a 6-partition topic in random
 * order. Sampled DescribeGroups of the stable group never shows a partition with two owners,
 * and together the consumers read every record.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { AssignerProtocol, Kafka, logLevel, type Consumer } from 'kafkajs';
import { startTestBroker } from '../helpers/broker.js';

test('members join and leave in random order: at most one owner per partition, nothing unread', { timeout: 180_000 }, async () => {
  const b = await startTestBroker();
  const kafka = new Kafka({ brokers: [b.bootstrap], logLevel: logLevel.NOTHING, clientId: 'rebalance' });
  const admin = kafka.admin();
  await admin.connect();
  const topic = 'rebalance-topic';
  const groupId = 'g-rebalance';
  const consumed = new Set<string>();
  const running = new Map<number, Consumer>();
  let sampling = true;
  const violations: string[] = [];
  let samples = 0;
  try {
    await admin.createTopics({ topics: [{ topic, numPartitions: 6 }] });
    const producer = kafka.producer();
    await producer.connect();
    await producer.send({ topic, messages: Array.from({ length: 1200 }, (_, i) => ({ key: `k${i}`, value: String(i) })) });
    await producer.disconnect();
    const total = 1200;

    const sampler = (async () => {
      while (sampling) {
        const d = await admin.describeGroups([groupId]);
        const g = d.groups[0]!;
        if (g.state === 'Stable') {
          samples++;
          const owner = new Map<number, string>();
          for (const m of g.members) {
            const a = AssignerProtocol.MemberAssignment.decode(m.memberAssignment);
            for (const p of a?.assignment[topic] ?? []) {
              if (owner.has(p)) violations.push(`partition ${p} owned by ${owner.get(p)} and ${m.memberId}`);
              owner.set(p, m.memberId);
            }
          }
        }
        await new Promise((r) => setTimeout(r, 30));
      }
    })();

    const start = async (id: number) => {
      // A short fetch wait: a member rejoins (and leaves) only between fetches, so kafkajs's 5 s
      // default long poll on a drained partition would hold up every rebalance.
      const c = kafka.consumer({ groupId, sessionTimeout: 6000, heartbeatInterval: 300, rebalanceTimeout: 10000, maxWaitTimeInMs: 100 });
      await c.connect();
      await c.subscribe({ topic, fromBeginning: true });
      await c.run({
        autoCommitInterval: 50,
        eachMessage: async ({ partition, message }) => {
          consumed.add(`${partition}:${message.offset}`);
          await new Promise((r) => setTimeout(r, 2));
        },
      });
      running.set(id, c);
    };
    // A seeded shuffle of joins and leaves keeps the run reproducible.
    let seed = 7;
    const rand = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    for (let step = 0; step < 8; step++) {
      const id = Math.floor(rand() * 3);
      if (running.has(id) && running.size > 1) {
        await running.get(id)!.disconnect();
        running.delete(id);
      } else if (!running.has(id)) {
        await start(id);
      }
      await new Promise((r) => setTimeout(r, 300 + rand() * 700));
    }
    if (running.size === 0) await start(0);
    const deadline = Date.now() + 90_000;
    while (consumed.size < total && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    sampling = false;
    await sampler;
    assert.deepEqual(violations, []);
    assert.ok(samples > 0, 'the group was seen stable at least once');
    assert.equal(consumed.size, total, 'every record was consumed by some member');
  } finally {
    sampling = false;
    for (const c of running.values()) await c.disconnect().catch(() => undefined);
    await admin.disconnect();
    await b.stop();
  }
});
