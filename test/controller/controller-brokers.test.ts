/**
 * End to end with real brokers (brokerside's handlers): two brokers in cluster mode on one
 * ZooKeeper; the controller's channel manager negotiates versions and delivers LeaderAndIsr and
 * UpdateMetadata, so a topic created through one broker shows leaders from both, and a controlled
 * shutdown moves leadership to the remaining broker.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { requirePeer } from '../helpers/peers.js';
import { ZOOKEEPER_JAR, startZooKeeper, type ZooKeeperServer } from '../helpers/zookeeper.js';
import { startTestBroker, type TestBroker } from '../helpers/broker.js';
import { Admin } from '../../src/client/index.js';

let zk: ZooKeeperServer | undefined;
before(async () => {
  if (!existsSync(ZOOKEEPER_JAR)) return;
  zk = await startZooKeeper();
});
after(async () => {
  await zk?.stop();
});

async function until(what: string, check: () => Promise<boolean> | boolean, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (
    !(await Promise.resolve()
      .then(check)
      .catch(() => false))
  ) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

test('two brokers: a topic gets leaders on both, controlled shutdown moves them', async (t) => {
  if (!requirePeer(t, 'zookeeper')) return;
  const brokers: TestBroker[] = [];
  const admins: Admin[] = [];
  try {
    for (const id of [1, 2])
      brokers.push(
        await startTestBroker({ 'zookeeper.connect': `${zk!.connect}/e2e`, 'broker.id': String(id), 'controlled.shutdown.retry.backoff.ms': '200' }),
      );
    const admin = new Admin({ bootstrapServers: brokers.map((b) => b.bootstrap) });
    admins.push(admin);
    // CreateTopics must reach the controller (NOT_CONTROLLER elsewhere): the client follows Metadata.
    await until('topic created', async () => {
      const r = await admin.createTopics([{ name: 't', numPartitions: 4, replicationFactor: 2 }]);
      const e = r.get('t');
      return e === null || e?.code === 36;
    });
    for (const b of brokers) {
      const a = new Admin({ bootstrapServers: b.bootstrap });
      admins.push(a);
      await until(`leaders seen from broker on ${b.port}`, async () => {
        const md = await a.describeTopics(['t']);
        const parts = md.find((x) => x.name === 't')?.partitions ?? [];
        return parts.length === 4 && parts.every((p) => p.leader === 1 || p.leader === 2);
      });
    }
    const md = (await admins[1]!.describeTopics(['t'])).find((x) => x.name === 't')!;
    assert.deepEqual(new Set(md.partitions.map((p) => p.leader)), new Set([1, 2]), 'leadership spread over both brokers');
    // Broker 2 stops with a controlled shutdown: broker 1 leads everything afterwards.
    await brokers[1]!.stop();
    brokers.pop();
    await until('broker 1 leads all', async () => {
      const parts = (await admins[1]!.describeTopics(['t'])).find((x) => x.name === 't')?.partitions ?? [];
      return parts.length === 4 && parts.every((p) => p.leader === 1);
    });
  } finally {
    for (const a of admins) await a.close().catch(() => undefined);
    for (const b of brokers.reverse()) await b.stop();
  }
});
