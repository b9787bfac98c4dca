/**
 * Broker failures on a three-broker cluster, as Kafka's ZooKeeper-mode controller handles them:
 * kill -9 of the controller (another is elected, its partitions get new leaders, topics can be
 * created again within seconds), a dead broker's partitions in `kafka-topics --describe
 * --under-replicated-partitions / --unavailable-partitions`, a topic deleted while one of its
 * replicas is down (finished when the broker returns), and a broker whose ZooKeeper session
 * expired under SIGSTOP (it registers again and the controller tells everyone).
 * The tests share one cluster and run in order; each leaves all three brokers running.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { Cluster, SESSION_TIMEOUT_MS } from '../helpers/cluster.js';
import { requirePeer } from '../helpers/peers.js';
import { closeDeadSession } from '../helpers/zk-dead-session.js';
import { kafkaTopics, kafkajsMetadata, kcatMetadata, waitForTopic, zkTopic } from './cluster-clients.js';
import { leaderMovesAway, readLogLines, stateChangeLines } from '../helpers/log-lines.js';

/** A dead broker is noticed when its session times out; then the controller acts. */
const NOTICE_MS = SESSION_TIMEOUT_MS * 5;

let c: Cluster | undefined;
before(async () => {
  if (Cluster.available()) c = await Cluster.start();
});
after(() => c?.stop());

async function createWithZk(topic: string, ...args: string[]): Promise<void> {
  const r = await kafkaTopics('--create', '--topic', topic, '--zookeeper', c!.zkConnect, ...args);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stdout, `Created topic "${topic}".\n`);
  await waitForTopic(c!, topic);
}

/** Two brokers other than the controller: [x, y]. */
async function nonControllers(): Promise<[number, number]> {
  const ctl = (await c!.waitForController()).brokerId;
  const [x, y] = [0, 1, 2].filter((id) => id !== ctl) as [number, number];
  return [x, y];
}

const partitionDirs = (dir: string, topic: string): string[] => readdirSync(dir).filter((n) => n.startsWith(`${topic}-`));

test('kill -9 of the controller: a new controller with a larger epoch, new leaders, topic creation works again', async (t) => {
  if (!requirePeer(t, 'zookeeper')) return;
  await createWithZk('before-failover', '--partitions', '3', '--replication-factor', '2');
  const first = await c!.waitForController();
  const dead = first.brokerId;
  const before = (await zkTopic(c!, 'before-failover'))!;
  const killedAt = Date.now();
  // Its session closed at once (the harness test has a controller noticed by the session timeout).
  await c!.killAndExpire(dead);

  const next = await c!.waitForController((x) => x.brokerId !== dead && x.epoch > first.epoch, NOTICE_MS);
  t.diagnostic(`controller ${dead} (epoch ${first.epoch}) -> ${next.brokerId} (epoch ${next.epoch}) after ${Date.now() - killedAt} ms`);
  // Partitions the dead broker led move to the other ISR member, one leader epoch later, with
  // an ISR of the live members (Kafka's OfflinePartitionLeaderElection at controller failover).
  // Where it was only a follower, the leader stays; the new controller takes the dead broker out
  // of the ISR there too (its replicas go through OfflineReplica at failover, as Kafka's).
  const moved = await c!.waitFor("new leaders for the dead broker's partitions", NOTICE_MS, async () => {
    const tp = await zkTopic(c!, 'before-failover');
    return tp?.partitions.every((p) => p.leader >= 0 && p.leader !== dead && (before.partitions[p.partition]!.leader !== dead || !p.isr.includes(dead)))
      ? tp
      : undefined;
  });
  for (const p of before.partitions) {
    const now = moved.partitions[p.partition]!;
    if (p.leader === dead) {
      assert.equal(
        now.leader,
        p.replicas.find((r) => r !== dead),
      );
      // At least one epoch later: Kafka's failover first takes the dead broker's replicas
      // offline (leaderless, epoch + 1), then elects (epoch + 1 again).
      assert.ok(moved.epochs.get(p.partition)!.leaderEpoch > before.epochs.get(p.partition)!.leaderEpoch, `partition ${p.partition}'s leader epoch grew`);
      assert.equal(moved.epochs.get(p.partition)!.controllerEpoch, next.epoch);
    } else {
      assert.equal(now.leader, p.leader, `partition ${p.partition} keeps its live leader`);
    }
  }

  const createdAt = Date.now();
  await createWithZk('after-failover', '--partitions', '2', '--replication-factor', '2');
  const created = (await zkTopic(c!, 'after-failover'))!;
  for (const p of created.partitions) assert.ok(!p.replicas.includes(dead), 'replicas only on live brokers');
  // Through the admin API too, bootstrapping from a broker that is not the controller.
  const other = [0, 1, 2].find((id) => id !== dead && id !== next.brokerId)!;
  const viaApi = await kafkaTopics(
    '--create',
    '--topic',
    'after-failover-api',
    '--bootstrap-server',
    c!.broker(other).bootstrap,
    '--partitions',
    '2',
    '--replication-factor',
    '2',
  );
  assert.equal(viaApi.code, 0, viaApi.stderr);
  assert.equal(viaApi.stdout, 'Created topic after-failover-api.\n');
  await waitForTopic(c!, 'after-failover-api', 10_000);
  const tookMs = Date.now() - createdAt;
  t.diagnostic(`two topics created in ${tookMs} ms after the failover`);
  assert.ok(tookMs < 30_000, `topic creation after failover took ${tookMs} ms`);
  for (const id of [0, 1, 2].filter((x) => x !== dead)) {
    await c!.waitFor(`broker ${id} to name controller ${next.brokerId}`, 15_000, async () => {
      const md = await kafkajsMetadata(c!.broker(id).bootstrap, 'after-failover');
      return md.partitions.length === 2 && md.brokers.join() === [0, 1, 2].filter((x) => x !== dead).join();
    });
  }

  await c!.broker(dead).restart();
  await c!.waitForRegistered([0, 1, 2]);
});

let downBroker = -1;
let peer = -1;

test('a dead broker: its partitions under-replicated, its sole replica unavailable, in kafka-topics --describe', async (t) => {
  if (!requirePeer(t, 'zookeeper')) return;
  const [x, y] = await nonControllers();
  downBroker = x;
  peer = y;
  await createWithZk('urp', '--replica-assignment', `${x}:${y},${y}:${x}`);
  await createWithZk('lonely', '--replica-assignment', `${x}`);
  await createWithZk('doomed', '--replica-assignment', `${x}:${y},${y}:${x}`);
  // LeaderAndIsr opens the logs a moment after the states are in ZooKeeper.
  await c!.waitFor(`broker ${x}'s doomed partition dirs`, 15_000, () => partitionDirs(c!.broker(x).dir, 'doomed').sort().join() === 'doomed-0,doomed-1');

  await c!.killAndExpire(x);
  await c!.waitFor(`the controller to take broker ${x} out`, NOTICE_MS, async () => {
    const lonely = await zkTopic(c!, 'lonely');
    const urp = await zkTopic(c!, 'urp');
    return lonely?.partitions[0]?.leader === -1 && urp?.partitions.every((p) => p.leader === y && p.isr.join() === `${y}`);
  });
  // Kafka keeps the last ISR member of a partition that lost its only replica.
  assert.deepEqual((await zkTopic(c!, 'lonely'))!.partitions[0]!.isr, [x]);

  // The controller's state-change log (issue 23): one line per moved partition with its old and
  // new leader and the cause, the ISR shrinks, the partition left offline; a summary at info.
  const ctlLog = c!.broker((await c!.waitForController()).brokerId).logFile;
  const moves = leaderMovesAway(ctlLog, x, ['urp', 'doomed', 'lonely']);
  assert.deepEqual(moves.elected.map((l) => [l.topic, l.partition, l.newLeader, l.newIsr, l.cause]).sort(), [
    ['doomed', 0, y, [y], 'broker failure'],
    ['urp', 0, y, [y], 'broker failure'],
  ]);
  assert.ok(moves.elected.every((l) => typeof l.leaderEpoch === 'number' && (l.leaderEpoch as number) > (l.oldLeaderEpoch as number)));
  assert.deepEqual(
    moves.lost.map((l) => [l.topic, l.partition, l.newLeader, l.cause]),
    [['lonely', 0, -1, 'broker failure']],
  );
  // Kafka's order: the dead leader's partitions go offline, then online once elected; lonely stays.
  assert.deepEqual(moves.offline.map((l) => `${l.topic}-${l.partition}`).sort(), ['doomed-0', 'lonely-0', 'urp-0']);
  assert.deepEqual(moves.online.map((l) => `${l.topic}-${l.partition}:${l.leader}`).sort(), [`doomed-0:${y}`, `urp-0:${y}`]);
  const shrinks = stateChangeLines(ctlLog).filter((l) => l.msg === 'ISR shrink' && (l.topic === 'urp' || l.topic === 'doomed') && l.partition === 1);
  assert.deepEqual(shrinks.map((l) => [l.topic, l.oldIsr, l.newIsr, l.newLeader, l.cause]).sort(), [
    ['doomed', [y, x], [y], y, 'broker failure'],
    ['urp', [y, x], [y], y, 'broker failure'],
  ]);
  const summary = readLogLines(ctlLog).filter((l) => l.event === 'BrokerChange' && /partitions moved leader, \d+ offline$/.test(String(l.msg)));
  assert.ok(
    summary.some((l) => (l.leaderMoves as number) >= 2 && (l.offlinePartitions as number) >= 1),
    JSON.stringify(summary),
  );
  // The new leader applied it: "become leader" in its own state-change lines.
  await c!.waitFor(`broker ${y} to log becoming urp-0's leader`, 15_000, () =>
    stateChangeLines(c!.broker(y).logFile).some((l) => l.msg === 'become leader' && l.topic === 'urp' && l.partition === 0 && l.leader === y),
  );

  const bs = c!.bootstrap();
  const describe = async (...args: string[]): Promise<string[]> => {
    // Brokers learn of the change through UpdateMetadata a moment after ZooKeeper.
    return c!.waitFor(`describe ${args.join(' ')}`, 15_000, async () => {
      const r = await kafkaTopics('--describe', '--bootstrap-server', bs, ...args);
      assert.equal(r.code, 0, r.stderr);
      const lines = r.stdout.split('\n').filter((l) => l !== '');
      return lines.length > 0 ? lines : undefined;
    });
  };
  assert.deepEqual(await describe('--under-replicated-partitions', '--topic', 'urp'), [
    `\tTopic: urp\tPartition: 0\tLeader: ${y}\tReplicas: ${x},${y}\tIsr: ${y}\tOffline: ${x}`,
    `\tTopic: urp\tPartition: 1\tLeader: ${y}\tReplicas: ${y},${x}\tIsr: ${y}\tOffline: ${x}`,
  ]);
  assert.deepEqual(await describe('--unavailable-partitions', '--topic', 'lonely'), [
    `\tTopic: lonely\tPartition: 0\tLeader: none\tReplicas: ${x}\tIsr: ${x}\tOffline: ${x}`,
  ]);
  const none = await kafkaTopics('--describe', '--bootstrap-server', bs, '--unavailable-partitions', '--topic', 'urp');
  assert.equal(none.stdout, '', 'urp still has a leader');
});

test("a topic deleted while a replica's broker is down is finished when the broker returns", async (t) => {
  if (!requirePeer(t, 'zookeeper')) return;
  assert.ok(downBroker >= 0 && !c!.broker(downBroker).running, 'the previous test left a broker down');
  const [x, y] = [downBroker, peer];
  const r = await kafkaTopics('--delete', '--topic', 'doomed', '--zookeeper', c!.zkConnect);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /^Topic doomed is marked for deletion\.\n/);
  const zk = await c!.zk();
  // The live replica goes; the topic cannot be finished while broker x holds the other.
  await c!.waitFor(`broker ${y} to delete its doomed partitions`, 20_000, () => partitionDirs(c!.broker(y).dir, 'doomed').length === 0);
  assert.deepEqual(await zk.children('/admin/delete_topics'), ['doomed']);
  assert.ok(await zk.exists('/brokers/topics/doomed'), 'the topic stays until every replica is deleted');

  await c!.broker(x).restart();
  await c!.waitForRegistered([0, 1, 2]);
  await c!.waitFor(
    'the deletion to finish',
    NOTICE_MS,
    async () => (await zk.children('/admin/delete_topics')).length === 0 && (await zk.exists('/brokers/topics/doomed')) === null,
  );
  assert.equal(await zk.exists('/config/topics/doomed'), null);
  await c!.waitFor(`broker ${x}'s doomed partition dirs to go`, 20_000, () => partitionDirs(c!.broker(x).dir, 'doomed').length === 0);
  assert.deepEqual(await c!.zkCliLs('/admin/delete_topics'), []);
  // The partition that had only broker x comes back online with it as leader.
  await c!.waitFor('lonely-0 led by its returning replica', 20_000, async () => (await zkTopic(c!, 'lonely'))?.partitions[0]?.leader === x);
  const md = await kafkajsMetadata(c!.broker(y).bootstrap, 'lonely');
  assert.equal(md.partitions[0]!.leader, x);
});

test('a broker whose session expired while it was frozen (SIGSTOP) registers again; the controller tells every broker', async (t) => {
  // kcat shows a partition's leader even while it has none (kafkajs throws instead).
  if (!requirePeer(t, 'zookeeper') || !requirePeer(t, 'kcat')) return;
  const [z, w] = await nonControllers();
  await createWithZk('frozen', '--replica-assignment', `${z}:${w}`);
  const zk = await c!.zk();
  const owner = (await zk.exists(`/brokers/ids/${z}`))!.ephemeralOwner;
  const frozen = c!.broker(z);
  frozen.pause();
  try {
    // Its session ended by the server at once rather than the timeout later (the harness test has
    // a freeze past the timeout); the broker finds it expired when it thaws, as after a timeout.
    await closeDeadSession(`127.0.0.1:${c!.zkPort}`, owner);
    await c!.waitForRegistered(
      [0, 1, 2].filter((id) => id !== z),
      NOTICE_MS,
    );
    // Its partition moves to the other ISR member; the other brokers drop it from Metadata.
    await c!.waitFor('frozen-0 led by the other replica', NOTICE_MS, async () => {
      const tp = await zkTopic(c!, 'frozen');
      return tp?.partitions[0]?.leader === w && tp.partitions[0]!.isr.join() === `${w}` && tp.epochs.get(0)!.leaderEpoch === 1;
    });
    await c!.waitFor(
      `broker ${w}'s Metadata without broker ${z}`,
      15_000,
      async () => (await kcatMetadata(c!.broker(w).bootstrap, 'frozen')).brokers.join() === [0, 1, 2].filter((id) => id !== z).join(),
    );
  } finally {
    frozen.resume();
  }
  const stat = await c!.waitFor(`broker ${z} to register again`, NOTICE_MS, async () => (await zk.exists(`/brokers/ids/${z}`)) ?? undefined);
  assert.notEqual(stat.ephemeralOwner, owner, 'registered under a new session');
  await c!.waitFor(
    `broker ${w}'s Metadata with broker ${z} again`,
    15_000,
    async () => (await kcatMetadata(c!.broker(w).bootstrap, 'frozen')).brokers.join() === '0,1,2',
  );
  // The thawed broker must not go on claiming the partition it led before it froze.
  await c!.waitFor(
    `broker ${z} to know frozen-0's new leader`,
    15_000,
    async () => (await kcatMetadata(frozen.bootstrap, 'frozen')).partitions[0]?.leader === w,
  );
});
