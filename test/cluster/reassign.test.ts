/**
 * Partition reassignment and preferred leader election on a three-broker cluster, with the tools
 * an operator uses: kafka-reassign-partitions.sh --generate/--execute/--list/--verify moves a
 * topic from brokers [0, 1] to [1, 2] (the controller waits until the new replica is in the ISR,
 * then moves leadership and deletes the old replica), and kafka-leader-election.sh moves
 * leadership back to the preferred replica after that broker restarted. kcat shows what clients
 * see. New replicas join the ISR through replication: the follower fetches, the leader adds it
 * to the ISR in ZooKeeper. To hold a reassignment pending (for --cancel, and across a controller
 * failover) the test freezes the new replica's broker (SIGSTOP), so it cannot catch up.
 * kafka-preferred-replica-election.sh (Kafka 2.x) elects the preferred replica of a partition
 * whose replicas were reordered, through ZooKeeper and through the controller.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Cluster } from '../helpers/cluster.js';
import { requirePeer } from '../helpers/peers.js';
import { runCli } from '../cli/helpers.js';
import { kafkaTopics, kcatMetadata, waitForTopic, zkTopic } from './cluster-clients.js';

/** This file's ZooKeeper session timeout (see before()). */
const SESSION_MS = 15_000;
const NOTICE_MS = SESSION_MS * 5;
const TOPIC = 'moving';

let c: Cluster | undefined;
let dir = '';
before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'fjord-reassign-'));
  // The tests freeze a broker (SIGSTOP) to look at a move half-way. On a loaded machine that can
  // outlast the cluster helper's 6 s session, which drops the broker's registration and with it the
  // StopReplica that deletes a cancelled replica (Kafka's ZooKeeper mode loses it too, leaving a
  // stray log); a 15 s session keeps the freeze a freeze.
  if (Cluster.available()) c = await Cluster.start({ props: { 'zookeeper.session.timeout.ms': String(SESSION_MS) } });
});
after(async () => {
  await c?.stop();
  await rm(dir, { recursive: true, force: true });
});

const reassign = (...args: string[]) => runCli('kafka-reassign-partitions', args, { timeoutMs: 90_000 });
const elect = (...args: string[]) => runCli('kafka-leader-election', args, { timeoutMs: 90_000 });
const hasPartitionDir = (broker: number): boolean => existsSync(c!.broker(broker).dir) && readdirSync(c!.broker(broker).dir).includes(`${TOPIC}-0`);

/** Waits until the leader has taken `add` (caught up by fetching) into the ISR of the topic's partition 0. */
async function leaderExpandsIsr(add: number, topic = TOPIC): Promise<void> {
  await c!.waitFor(`broker ${add} in the ISR of ${topic}-0`, 60_000, async () => (await zkTopic(c!, topic))?.partitions[0]?.isr.includes(add));
}

test('kafka-reassign-partitions.sh moves a topic from [0, 1] to [1, 2]; kafka-leader-election.sh restores the preferred leader', {
  timeout: 600_000,
}, async (t) => {
  if (!requirePeer(t, 'zookeeper') || !requirePeer(t, 'kcat')) return;
  const bootstrap = c!.bootstrap();
  const created = await kafkaTopics('--create', '--topic', TOPIC, '--bootstrap-server', bootstrap, '--replica-assignment', '0:1');
  assert.equal(created.code, 0, created.stderr);
  await waitForTopic(c!, TOPIC);
  await c!.waitFor('the replica on broker 1', 30_000, () => hasPartitionDir(1));

  // --generate: the current assignment and a proposal over brokers 1 and 2.
  const topicsFile = join(dir, 'topics.json');
  await writeFile(topicsFile, JSON.stringify({ topics: [{ topic: TOPIC }], version: 1 }));
  const gen = await reassign('--bootstrap-server', bootstrap, '--generate', '--topics-to-move-json-file', topicsFile, '--broker-list', '1,2');
  assert.equal(gen.code, 0, gen.stderr);
  const lines = gen.stdout.split('\n');
  assert.deepEqual(lines.slice(0, 4), [
    'Current partition replica assignment',
    `{"version":1,"partitions":[{"topic":"${TOPIC}","partition":0,"replicas":[0,1],"log_dirs":["any","any"]}]}`,
    '',
    'Proposed partition reassignment configuration',
  ]);
  const proposal = JSON.parse(lines[4]!) as { partitions: { replicas: number[] }[] };
  const target = proposal.partitions[0]!.replicas;
  assert.deepEqual([...target].sort(), [1, 2]);
  const plan = join(dir, 'plan.json');
  await writeFile(plan, lines[4]!);

  // --execute: started, not completed: broker 2 must first be in the ISR. With replication an
  // empty partition catches up at once, so broker 2 is frozen (SIGSTOP) to look at the move
  // half-way, unless it is the controller the tools must reach.
  const holdPending = (await c!.waitForController()).brokerId !== 2;
  const live = holdPending ? c!.bootstrap([0, 1]) : bootstrap;
  if (holdPending) c!.broker(2).pause();
  try {
    await executeAndLookHalfWay(plan, live, target, lines[1]!, holdPending);
  } finally {
    if (holdPending) c!.broker(2).resume();
  }
  await c!.waitFor('the new replica created on broker 2', 60_000, () => hasPartitionDir(2));
  await leaderExpandsIsr(2);

  const zk = await c!.zk();
  const done = await c!.waitFor('the reassignment completed in ZooKeeper', 60_000, async () => {
    const tp = await zkTopic(c!, TOPIC);
    const node = JSON.parse((await zk.get(`/brokers/topics/${TOPIC}`)).data.toString()) as { adding_replicas: object };
    return tp &&
      tp.partitions[0]!.replicas.join() === target.join() &&
      Object.keys(node.adding_replicas).length === 0 &&
      !(await zk.exists('/admin/reassign_partitions'))
      ? tp
      : undefined;
  });
  const p0 = done.partitions[0]!;
  assert.equal(p0.leader, target[0], 'leadership moved to the first target replica in the ISR');
  assert.deepEqual([...p0.isr].sort(), [1, 2], 'broker 0 left the ISR');
  const verified = await reassign('--bootstrap-server', bootstrap, '--verify', '--reassignment-json-file', plan);
  assert.equal(
    verified.stdout,
    `Status of partition reassignment:\nReassignment of partition ${TOPIC}-0 is complete.\n\nClearing broker-level throttles on brokers 0,1,2\nClearing topic-level throttles on topic ${TOPIC}\n`,
    verified.stderr,
  );
  assert.equal((await reassign('--bootstrap-server', bootstrap, '--list')).stdout, 'No partition reassignments found.\n');
  await c!.waitFor('the old replica deleted on broker 0', 30_000, () => !hasPartitionDir(0));
  // Every broker tells clients the new replicas, broker 0 included.
  const seen = await c!.waitFor('kcat sees the new assignment from broker 0', 30_000, async () => {
    const md = await kcatMetadata(c!.broker(0).bootstrap, TOPIC);
    return md.partitions[0]?.replicas.join() === target.join() && md.partitions[0]!.leader === target[0] ? md : undefined;
  });
  assert.deepEqual([...seen.partitions[0]!.isr].sort(), [1, 2]);

  // The preferred replica's broker restarts: leadership moves away, and stays away after its return.
  const preferred = target[0]!;
  const other = target[1]!;
  await c!.killAndExpire(preferred); // its session closed at once: no 15 s wait for the expiry
  await c!.waitFor('leadership moved off the dead preferred replica', NOTICE_MS, async () => (await zkTopic(c!, TOPIC))?.partitions[0]?.leader === other);
  await c!.broker(preferred).start();
  await c!.waitForRegistered([0, 1, 2]);
  // It catches up (issue 12's replication; simulated) and is in the ISR again, still a follower.
  await leaderExpandsIsr(preferred);
  assert.equal((await zkTopic(c!, TOPIC))!.partitions[0]!.leader, other);

  const elected = await elect('--bootstrap-server', bootstrap, '--election-type', 'PREFERRED', '--topic', TOPIC, '--partition', '0');
  assert.equal(elected.code, 0, elected.stderr);
  assert.equal(elected.stdout, `Successfully completed leader election (PREFERRED) for partitions ${TOPIC}-0\n`);
  assert.equal((await zkTopic(c!, TOPIC))!.partitions[0]!.leader, preferred);
  await c!.waitFor(
    'kcat sees the preferred leader',
    30_000,
    async () => (await kcatMetadata(c!.broker(other).bootstrap, TOPIC)).partitions[0]?.leader === preferred,
  );
  const again = await elect('--bootstrap-server', bootstrap, '--election-type', 'preferred', '--all-topic-partitions');
  assert.equal(again.code, 0, again.stderr);
  assert.match(again.stdout, new RegExp(`^Valid replica already elected for partitions (.*, )?${TOPIC}-0(, .*)?\\n$`));
});

/** --execute, then (when the move is held pending) what ZooKeeper and the tools show half-way. */
async function executeAndLookHalfWay(plan: string, bootstrap: string, target: number[], current: string, pending: boolean): Promise<void> {
  const exec = await reassign('--bootstrap-server', bootstrap, '--execute', '--reassignment-json-file', plan);
  assert.equal(exec.code, 0, exec.stderr);
  assert.equal(
    exec.stdout,
    `Current partition replica assignment\n\n${current}\n\nSave this to use as the --reassignment-json-file option during rollback\nSuccessfully started partition reassignment for ${TOPIC}-0\n`,
  );
  if (!pending) return;
  const zk = await c!.zk();
  const topicNode = JSON.parse((await zk.get(`/brokers/topics/${TOPIC}`)).data.toString()) as {
    partitions: Record<string, number[]>;
    adding_replicas: Record<string, number[]>;
    removing_replicas: Record<string, number[]>;
  };
  const midState = (await zkTopic(c!, TOPIC))!.partitions[0]!;
  assert.ok(!midState.isr.includes(2), 'a frozen broker cannot catch up');
  assert.deepEqual(topicNode.partitions['0'], [...target, 0], 'RS = TRS + ORS');
  assert.deepEqual(topicNode.adding_replicas, { '0': [2] });
  assert.deepEqual(topicNode.removing_replicas, { '0': [0] });
  assert.equal(midState.leader, 0, 'the old leader keeps leading while the new replica catches up');
  const listed = await reassign('--bootstrap-server', bootstrap, '--list');
  assert.equal(listed.stdout, `Current partition reassignments:\n${TOPIC}-0: replicas: ${[...target, 0].join(',')}. adding: 2. removing: 0.\n`, listed.stderr);
  const verifying = await reassign('--bootstrap-server', bootstrap, '--verify', '--reassignment-json-file', plan);
  assert.equal(verifying.stdout, `Status of partition reassignment:\nReassignment of partition ${TOPIC}-0 is still in progress.\n\n`, verifying.stderr);
  assert.equal(hasPartitionDir(0), true, 'the old replica stays until the reassignment completes');
}

async function createOn(topic: string, replicas: number[]): Promise<void> {
  const r = await kafkaTopics('--create', '--topic', topic, '--bootstrap-server', c!.bootstrap(), '--replica-assignment', replicas.join(':'));
  assert.equal(r.code, 0, r.stderr);
  await waitForTopic(c!, topic);
}

async function planFile(name: string, topic: string, replicas: number[]): Promise<string> {
  const p = join(dir, name);
  await writeFile(p, JSON.stringify({ version: 1, partitions: [{ topic, partition: 0, replicas }] }));
  return p;
}

test('--cancel reverts to the original replicas and deletes the one being added', { timeout: 300_000 }, async (t) => {
  if (!requirePeer(t, 'zookeeper')) return;
  await c!.waitForRegistered([0, 1, 2]);
  const controller = (await c!.waitForController()).brokerId;
  const added = [1, 2].find((id) => id !== controller)!;
  const live = c!.bootstrap([0, 1, 2].filter((id) => id !== added));
  await createOn('cancelled', [0]);
  const plan = await planFile('cancel.json', 'cancelled', [0, added]);
  // Frozen, the new replica's broker cannot catch up: the reassignment stays pending.
  c!.broker(added).pause();
  try {
    const exec = await reassign('--bootstrap-server', live, '--execute', '--reassignment-json-file', plan);
    assert.equal(exec.code, 0, exec.stderr);
    await cancelWhilePending(live, plan, added);
  } finally {
    c!.broker(added).resume();
  }
  await c!.waitForRegistered([0, 1, 2]);
  await c!.waitFor(`the cancelled replica gone from broker ${added}`, 30_000, () => !readdirSync(c!.broker(added).dir).includes('cancelled-0'));
  const none = await reassign('--bootstrap-server', c!.bootstrap(), '--cancel', '--reassignment-json-file', plan, '--preserve-throttles');
  assert.equal(none.stdout, 'None of the specified partition reassignments are active.\n');
});

async function cancelWhilePending(live: string, plan: string, added: number): Promise<void> {
  // kafka-topics --describe shows the move as Kafka 3.x does; a partition being moved is not under-replicated.
  const desc = await kafkaTopics('--describe', '--topic', 'cancelled', '--bootstrap-server', live);
  assert.equal(desc.code, 0, desc.stderr);
  const descLines = desc.stdout.split('\n');
  assert.match(descLines[0]!, /\tPartitionCount: 1\tReplicationFactor: 1\t/);
  assert.equal(descLines[1], `\tTopic: cancelled\tPartition: 0\tLeader: 0\tReplicas: 0,${added}\tIsr: 0\tAdding Replicas: ${added}\tRemoving Replicas: `);
  const under = await kafkaTopics('--describe', '--topic', 'cancelled', '--under-replicated-partitions', '--bootstrap-server', live);
  assert.equal(under.stdout, '');
  const busy = await reassign('--bootstrap-server', live, '--execute', '--reassignment-json-file', plan);
  assert.equal(busy.code, 1);
  assert.match(busy.stderr, /Cannot execute because there is an existing partition assignment/);
  const cancel = await reassign('--bootstrap-server', live, '--cancel', '--reassignment-json-file', plan);
  assert.equal(cancel.code, 0, cancel.stderr);
  assert.equal(
    cancel.stdout,
    'Successfully cancelled partition reassignment for: cancelled-0\nClearing broker-level throttles on brokers 0,1,2\nClearing topic-level throttles on topic cancelled\n',
  );
  const tp = (await zkTopic(c!, 'cancelled'))!;
  assert.deepEqual(tp.partitions[0]!.replicas, [0]);
  assert.deepEqual(tp.partitions[0]!.isr, [0]);
}

test('a reassignment pending when the controller is killed is resumed and completed by the next controller', { timeout: 300_000 }, async (t) => {
  if (!requirePeer(t, 'zookeeper')) return;
  const first = await c!.waitForController();
  const [a, b] = [0, 1, 2].filter((id) => id !== first.brokerId) as [number, number];
  await createOn('resumed', [a]);
  // Kafka 2.x's way: the request znode, written by --zookeeper. The new replica's broker is
  // frozen so the reassignment is still pending when the controller dies.
  const plan = await planFile('resume.json', 'resumed', [b]);
  c!.broker(b).pause();
  const exec = await reassign('--zookeeper', c!.zkConnect, '--execute', '--reassignment-json-file', plan);
  assert.equal(exec.code, 0, exec.stderr);
  const zk = await c!.zk();
  await c!.waitFor('phase A (adding_replicas) in the topic znode', 30_000, async () => {
    const node = JSON.parse((await zk.get('/brokers/topics/resumed')).data.toString()) as { adding_replicas: Record<string, number[]> };
    return node.adding_replicas['0']?.join() === String(b);
  });
  await c!.killAndExpire(first.brokerId); // its session closed at once: b stays frozen for seconds, not 15 s
  const next = await c!.waitForController((x) => x.brokerId !== first.brokerId && x.epoch > first.epoch, NOTICE_MS);
  t.diagnostic(`controller ${first.brokerId} -> ${next.brokerId}`);
  assert.ok(await zk.exists('/admin/reassign_partitions'), 'still pending: the new replica is not in the ISR');
  // Thawed, b catches up by fetching from a, which takes it into the ISR; the new controller completes the move.
  c!.broker(b).resume();
  const done = await c!.waitFor('the new controller completed it', 60_000, async () => {
    const tp = await zkTopic(c!, 'resumed');
    return tp && tp.partitions[0]!.replicas.join() === String(b) && !(await zk.exists('/admin/reassign_partitions')) ? tp : undefined;
  });
  assert.equal(done.partitions[0]!.leader, b);
  assert.deepEqual(done.partitions[0]!.isr, [b]);
  await c!.broker(first.brokerId).start();
  await c!.waitForRegistered([0, 1, 2]);
});

test('kafka-preferred-replica-election.sh (Kafka 2.x) moves leadership back to the preferred replica, --zookeeper and --bootstrap-server', {
  timeout: 300_000,
}, async (t) => {
  if (!requirePeer(t, 'zookeeper')) return;
  await c!.waitForRegistered([0, 1, 2]);
  await createOn('preferred', [1, 2]);
  const json = join(dir, 'preferred-election.json');
  await writeFile(json, JSON.stringify({ partitions: [{ topic: 'preferred', partition: 0 }] }));
  const preferredElection = (...args: string[]) => runCli('kafka-preferred-replica-election', [...args, '--path-to-json-file', json], { timeoutMs: 90_000 });
  const deprecated = 'This tool is deprecated. Please use kafka-leader-election tool. Tracking issue: KAFKA-8405\n';

  // The same replicas in the other order: the leader stays, and is no longer the preferred replica.
  await reorder([2, 1], 1);
  const viaZk = await preferredElection('--zookeeper', c!.zkConnect);
  assert.equal(viaZk.code, 0, viaZk.stderr);
  assert.match(viaZk.stdout, /\nSuccessfully started preferred replica election for partitions Set\(preferred-0\)\n$/);
  const zk = await c!.zk();
  await c!.waitFor('the controller elected broker 2 and removed the znode', 60_000, async () => {
    return (await zkTopic(c!, 'preferred'))?.partitions[0]?.leader === 2 && !(await zk.exists('/admin/preferred_replica_election'));
  });

  await reorder([1, 2], 2);
  const viaController = await preferredElection('--bootstrap-server', c!.bootstrap());
  assert.equal(viaController.stdout, `${deprecated}Successfully completed preferred replica election for partitions preferred-0\n`, viaController.stderr);
  assert.equal(viaController.code, 0);
  assert.equal((await zkTopic(c!, 'preferred'))!.partitions[0]!.leader, 1, 'elected when the tool returns');
  const again = await preferredElection('--bootstrap-server', c!.bootstrap());
  assert.equal(again.stdout, `${deprecated}Preferred replica already elected for partitions preferred-0\n`, again.stderr);
});

/** Reassigns preferred-0 to the same replicas in `order`; the leader (`leader`) keeps leading. */
async function reorder(order: number[], leader: number): Promise<void> {
  const plan = await planFile(`reorder-${order.join('-')}.json`, 'preferred', order);
  const exec = await reassign('--bootstrap-server', c!.bootstrap(), '--execute', '--reassignment-json-file', plan);
  assert.equal(exec.code, 0, exec.stderr);
  const tp = await c!.waitFor(`preferred-0 reassigned to ${order}`, 60_000, async () => {
    const p = (await zkTopic(c!, 'preferred'))?.partitions[0];
    return p?.replicas.join() === order.join() ? p : undefined;
  });
  assert.equal(tp.leader, leader, 'a reordering keeps the leader (Kafka moves leadership only off a replica leaving)');
}
