/**
 * ZooKeeper restarted under a running three-broker cluster (same port, same data): as in Kafka,
 * the brokers keep serving produce and fetch while it is down (the data path needs no
 * ZooKeeper), reconnect when it is back with their registrations in place, and the controller's
 * watches work again: a topic created afterwards gets leaders and reaches every broker.
 * Produces use acks=1 and the data topic has one replica, so the test does not depend on follower
 * fetching (issue 12): a broker whose session expires across the restart (a loaded machine) leads
 * its partitions again once it has registered anew, with its data.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { Cluster } from '../helpers/cluster.js';
import { requirePeer } from '../helpers/peers.js';
import { run } from '../helpers/run.js';
import { kafkaTopics, kcatMetadata, waitForTopic, zkTopic } from './cluster-clients.js';

let c: Cluster | undefined;
before(async () => {
  if (Cluster.available()) c = await Cluster.start();
});
after(() => c?.stop());

/** acks=all where the topic is replicated: consumers read below the high watermark, which acks=1 does not wait for. */
async function produce(topic: string, values: string[], acks = '1'): Promise<void> {
  const r = await run('kcat', ['-P', '-b', c!.bootstrap(), '-t', topic, '-X', `acks=${acks}`], { input: values.join('\n') + '\n', timeoutMs: 30_000 });
  assert.equal(r.code, 0, r.stderr);
}

async function consumeAll(topic: string): Promise<string[]> {
  const r = await run('kcat', ['-C', '-b', c!.bootstrap(), '-t', topic, '-o', 'beginning', '-e', '-q'], { timeoutMs: 30_000 });
  assert.equal(r.code, 0, r.stderr);
  return r.stdout
    .split('\n')
    .filter((l) => l !== '')
    .sort();
}

test('ZooKeeper restarts under the cluster: the brokers keep serving, reconnect, and topics can be created again', async (t) => {
  if (!requirePeer(t, 'zookeeper') || !requirePeer(t, 'kcat')) return;
  const created = await kafkaTopics('--create', '--topic', 'steady', '--zookeeper', c!.zkConnect, '--partitions', '2', '--replication-factor', '1');
  assert.equal(created.code, 0, created.stderr);
  const knowSteady = async (): Promise<void> => {
    await waitForTopic(c!, 'steady');
    for (const b of c!.brokers) {
      await c!.waitFor(`broker ${b.id} to know steady`, 20_000, async () => {
        const p = (await kcatMetadata(b.bootstrap, 'steady')).partitions;
        return p.length === 2 && p.every((x) => x.leader >= 0);
      });
    }
  };
  await knowSteady();
  const first = ['a0', 'a1', 'a2', 'a3', 'a4'];
  await produce('steady', first);
  const zk = await c!.zk();
  const owners = await Promise.all([0, 1, 2].map(async (id) => (await zk.exists(`/brokers/ids/${id}`))!.ephemeralOwner));

  await c!.stopZooKeeper();
  const second = ['b0', 'b1', 'b2', 'b3', 'b4'];
  try {
    await produce('steady', second);
    assert.deepEqual(await consumeAll('steady'), [...first, ...second].sort(), 'served while ZooKeeper is down');
  } finally {
    await c!.startZooKeeper();
  }

  // Sessions younger than their timeout survive a restart, so the ephemeral nodes may be the
  // same ones; a broker whose session expired must have registered again. Either way all are
  // there, held by sessions whose brokers are connected (a restored session whose broker has not
  // reconnected still shows its node until it expires).
  await c!.waitForConnectedRegistrations([0, 1, 2]);
  const zk2 = await c!.zk();
  for (const id of [0, 1, 2]) {
    const stat = await zk2.exists(`/brokers/ids/${id}`);
    assert.ok(stat, `broker ${id} registered`);
    t.diagnostic(`broker ${id}: ${stat.ephemeralOwner === owners[id] ? 'same session' : 'new session'}`);
  }
  const ctl = await c!.waitForController();
  assert.ok(c!.broker(ctl.brokerId).running);

  const started = Date.now();
  const again = await kafkaTopics('--create', '--topic', 'after-restart', '--zookeeper', c!.zkConnect, '--partitions', '2', '--replication-factor', '3');
  assert.equal(again.code, 0, again.stderr);
  assert.equal(again.stdout, 'Created topic "after-restart".\n');
  await waitForTopic(c!, 'after-restart');
  t.diagnostic(`after-restart had leaders ${Date.now() - started} ms after its creation`);
  for (const b of c!.brokers) {
    // Against ZooKeeper's state now, not as first written: the controller may have moved on since.
    await c!.waitFor(`broker ${b.id} to know after-restart as ZooKeeper has it`, 20_000, async () => {
      const want = JSON.stringify((await zkTopic(c!, 'after-restart'))?.partitions);
      const view = await kcatMetadata(b.bootstrap, 'after-restart');
      if (JSON.stringify(view.partitions) === want) return true;
      throw new Error(`broker ${b.id} has ${JSON.stringify(view.partitions)}, ZooKeeper ${want}`);
    });
  }
  await produce('after-restart', ['c0', 'c1'], 'all');
  assert.deepEqual(await consumeAll('after-restart'), ['c0', 'c1']);
  await knowSteady();
  assert.deepEqual(await consumeAll('steady'), [...first, ...second].sort());
});
