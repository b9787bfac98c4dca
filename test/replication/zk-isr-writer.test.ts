/**
 * The leader's ISR writer against a real ZooKeeper: the partition state znode is set
 * conditionally on the partition epoch (zkVersion), in Kafka's JSON, with no controller fence;
 * a stale epoch is BAD_VERSION (nothing written, no notification) unless the znode already holds
 * exactly that state (a retried write that landed); each accepted change is announced by a
 * sequential isr_change_ node naming the partition, as the controller reads them.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { ZkSession } from '../../src/metadata/zk/zk-session.js';
import { KafkaZkClient } from '../../src/metadata/zk/kafka-zk-client.js';
import { ZkIsrWriter } from '../../src/replication/partition/isr/zk-isr-writer.js';
import { silentLogger } from '../../src/server/logger.js';
import { requirePeer } from '../helpers/peers.js';
import { startZooKeeper, ZOOKEEPER_JAR, type ZooKeeperServer } from '../helpers/zookeeper.js';

let zk: ZooKeeperServer | undefined;
let session: ZkSession | undefined;

before(async () => {
  if (!existsSync(ZOOKEEPER_JAR)) return; // the test skips (or fails under CI) via requirePeer
  zk = await startZooKeeper();
  session = await ZkSession.open({ connect: `${zk.connect}/isr`, sessionTimeoutMs: 6000, connectionTimeoutMs: 10_000 });
});

after(async () => {
  await session?.close();
  await zk?.stop();
});

test('ISR writes: conditional on the zkVersion, BAD_VERSION on a stale one, a notification per accepted change', async (t) => {
  if (!requirePeer(t, 'zookeeper')) return;
  const s = session!;
  const client = new KafkaZkClient(s);
  const writer = new ZkIsrWriter(client, silentLogger());
  try {
    const path = '/brokers/topics/t/partitions/0/state';
    await s.ensurePath('/brokers/topics/t/partitions/0');
    await s.create(path, '{"controller_epoch":3,"leader":1,"version":1,"leader_epoch":4,"isr":[1,2,3]}');
    const change = { topic: 't', partition: 0, leader: 1, leaderEpoch: 4, isr: [1, 2], controllerEpoch: 3, partitionEpoch: 0 };

    assert.equal(await writer.writeIsr(change), 1, 'the new zkVersion');
    assert.equal((await s.get(path)).data.toString(), '{"controller_epoch":3,"leader":1,"version":1,"leader_epoch":4,"isr":[1,2]}');
    await writer.whenIdle();
    const notified = await client.getIsrChangeNotifications();
    assert.equal(notified.length, 1);
    assert.deepEqual(await client.getIsrChangeNotification(notified[0]!), [{ topic: 't', partition: 0 }]);

    // The same write again (a retry whose first attempt landed): done, at the current version.
    assert.equal(await writer.writeIsr(change), 1);
    await writer.whenIdle();
    // The controller moved the state on: a stale version is refused and nothing changes.
    await s.set(path, '{"controller_epoch":4,"leader":1,"version":1,"leader_epoch":5,"isr":[1,2,3]}', 1);
    assert.equal(await writer.writeIsr({ ...change, isr: [1], partitionEpoch: 1 }), 'BAD_VERSION');
    assert.match((await s.get(path)).data.toString(), /"leader_epoch":5,"isr":\[1,2,3\]/);
    // A deleted partition: BAD_VERSION too.
    assert.equal(await writer.writeIsr({ ...change, partition: 7 }), 'BAD_VERSION');

    assert.equal(await writer.writeIsr({ ...change, leaderEpoch: 5, controllerEpoch: 4, isr: [1, 3], partitionEpoch: 2 }), 3);
    await writer.whenIdle();
    const all = await client.getIsrChangeNotifications();
    assert.equal(all.length, 3, 'one per accepted write (the repeated one included), none for the refused ones');
  } finally {
    writer.close();
  }
});
