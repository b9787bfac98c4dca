/**
 * Transactions across broker failures in cluster mode (issue 14), with a real client and real
 * ZooKeeper: three broker processes, a topic with replication factor 3 and
 * min.insync.replicas=2, `__transaction_state` and `__consumer_offsets` with replication factor 3.
 * A confluent-kafka transactional producer runs a loop of transactions over three partitions
 * (every fourth one aborted on purpose after its records were acknowledged).
 *
 *  a. The leader of a data partition is killed -9 while a transaction is open (its records
 *     acknowledged, not yet committed). The producer carries on (a restarted one with the same
 *     transactional.id if it had to stop).
 *  b. The transaction coordinator (the leader of the id's `__transaction_state` partition) is
 *     killed -9 with one transaction in PrepareCommit (its markers held up by a paused data
 *     leader, seen with DescribeTransactions) and another id's transaction Ongoing. The new
 *     coordinator loads the state, completes the first and aborts the second at its timeout.
 *
 * In both: read_committed sees exactly the committed transactions' records, each once; the last
 * stable offset of every partition reaches the high watermark (ListOffsets isolation 1 vs 0, and
 * DescribeProducers lists no open transaction); read_uncommitted sees a superset, the aborted
 * records included; the killed broker, restarted, is back in every ISR with a log identical to
 * the leader's.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Cluster } from '../helpers/cluster.js';
import { PYTHON, requirePeer } from '../helpers/peers.js';
import { consumeAll } from '../interop/confluent-consume.js';
import { HANG, Lines, byTransaction, createTopic, startObserver, tagsOf } from '../interop/txn-helpers.js';
import { partitionForGroup } from '../../src/coordinator/runtime/partition-for-group.js';
import {
  HANG_TXN_TIMEOUT_MS,
  LoopRunner,
  OFFSETS,
  PARTITIONS,
  PER_TXN,
  TXN_PARTITIONS,
  TXN_STATE,
  checkOutcome,
  describeTxn,
  electPreferred,
  killDataLeader,
  leaders,
  waitCaughtUp,
} from './transactions-failover-helpers.js';

let c: Cluster | undefined;
let work: string | undefined;
before(async () => {
  if (!Cluster.available()) return;
  work = await mkdtemp(join(tmpdir(), 'fjord-txf-'));
  c = await Cluster.start({
    props: {
      'transaction.state.log.num.partitions': String(TXN_PARTITIONS),
      'transaction.state.log.replication.factor': '3',
      'transaction.state.log.min.isr': '2',
      'offsets.topic.replication.factor': '3',
      'transaction.abort.timed.out.transaction.cleanup.interval.ms': '500',
      'group.initial.rebalance.delay.ms': '0',
      // Case b pauses a broker until the ISR of __transaction_state drops it (so the commit's
      // PrepareCommit is durable while its markers wait): well within the 6 s session timeout.
      'replica.lag.time.max.ms': '2000',
    },
  });
});
after(async () => {
  await c?.stop();
  if (work) await rm(work, { recursive: true, force: true });
});

test('a: the leader of a data partition killed -9 mid-transaction, alone and with the producer: the transaction completes or is aborted; read_committed sees exactly the committed transactions; the LSO reaches the high watermark', {
  timeout: 300_000,
}, async (t) => {
  if (!requirePeer(t, 'zookeeper') || !requirePeer(t, 'python3-confluent-kafka')) return;
  const cluster = c!;
  const topic = 'txf-a';
  const tid = 'txf-a-tx';
  await createTopic(cluster.bootstrap(), topic, PARTITIONS, { replicationFactor: 3, configs: { 'min.insync.replicas': '2' } });
  const loop = new LoopRunner(cluster, topic, tid, 300, join(work!, 'stop-a'));
  const observer = startObserver(cluster.bootstrap(), topic, 'read_committed', PARTITIONS);
  try {
    await loop.until(() => loop.count() >= 5, 90_000, 'five committed transactions');
    const said: string[] = [];
    // Round 1: the producer lives on through the failover and commits its open transaction.
    // Round 2: producer and leader die together; the new producer (same transactional.id)
    // fences the old one, whose open transaction must be aborted, never shown.
    let unfinished = '';
    let lastVictim: number | undefined;
    for (const withProducer of [false, true]) {
      const k = await killDataLeader(cluster, loop, topic, tid, { withProducer, ...(lastVictim === undefined ? {} : { avoid: lastVictim }) });
      lastVictim = k.victim;
      if (withProducer) unfinished = k.open;
      const atKill = loop.count();
      await loop.until(() => loop.count() >= atKill + 3, 120_000, 'three transactions committed after the kill');
      const resumedMs = Date.now() - k.killedAt;
      await cluster.broker(k.victim).start();
      const catchUpMs = await waitCaughtUp(cluster, k.victim, [topic, TXN_STATE, OFFSETS]);
      // Leadership back where it was (the transaction state's too, for case b's coordinator).
      const moved = await electPreferred(cluster, k.victim, [topic, TXN_STATE, OFFSETS], work!);
      const afterRestart = loop.count();
      await loop.until(() => loop.count() >= afterRestart + 3, 60_000, 'transactions after the restart');
      // Logs converge (the killed broker's too).
      await waitCaughtUp(cluster, k.victim, [topic, TXN_STATE, OFFSETS]);
      const fate = tagsOf(loop.lines, 'COMMITTED').includes(k.open) ? 'committed' : 'not committed';
      said.push(
        `killed broker ${k.victim}${withProducer ? ' and the producer' : ''} (leader of ${topic} ${k.led.join(',')}) with ${k.open} open (then ${fate}); new leaders ${k.electedMs} ms after the kill, 3 more commits ${resumedMs} ms after it; ` +
          `the restarted broker caught up in ${catchUpMs} ms and led ${moved} partition(s) again`,
      );
      if (!withProducer) assert.equal(fate, 'committed', `the producer that lived on committed ${k.open}`);
    }
    await loop.stop();
    const out = await checkOutcome(cluster, topic, loop, observer, { abortedTags: [unfinished] });
    assert.ok(!tagsOf(loop.lines, 'COMMITTED').includes(unfinished), `the killed producer's ${unfinished} was never committed`);
    t.diagnostic(
      `${said.join('; ')}; ${out.committed} transactions committed, ${out.aborted} rolled back, ${loop.runs.length} producer runs; ` +
        `other lines: ${loop.lines.filter((l) => /^(ERROR|ABORTED|FATAL)/.test(l)).join(' | ')}`,
    );
  } finally {
    await observer.kill();
    await loop.kill();
  }
});

test('b: the transaction coordinator killed -9 with a transaction in PrepareCommit and another Ongoing: the new coordinator completes one and aborts the other', {
  timeout: 300_000,
}, async (t) => {
  if (!requirePeer(t, 'zookeeper') || !requirePeer(t, 'python3-confluent-kafka')) return;
  const cluster = c!;
  const topic = 'txf-b';
  const tid = 'txf-b-tx';
  const txnPartition = partitionForGroup(tid, TXN_PARTITIONS);
  // A second transactional id on the same __transaction_state partition, left Ongoing.
  let hangId = '';
  for (let i = 0; ; i++)
    if (partitionForGroup(`txf-b-hang-${i}`, TXN_PARTITIONS) === txnPartition) {
      hangId = `txf-b-hang-${i}`;
      break;
    }
  await createTopic(cluster.bootstrap(), topic, PARTITIONS, { replicationFactor: 3, configs: { 'min.insync.replicas': '2' } });
  const loop = new LoopRunner(cluster, topic, tid, 300, join(work!, 'stop-b'));
  const observer = startObserver(cluster.bootstrap(), topic, 'read_committed', PARTITIONS);
  let hang: Lines | undefined;
  let paused: number | undefined;
  try {
    await loop.until(() => loop.count() >= 5, 90_000, 'five committed transactions');
    hang = new Lines(PYTHON, ['-c', HANG, cluster.bootstrap(), topic, String(HANG_TXN_TIMEOUT_MS), hangId, String(PARTITIONS)]);
    await hang.until((l) => l.includes('FLUSHED'), 60_000, 'the Ongoing transaction to be flushed');
    const coordinator = (await leaders(cluster, TXN_STATE))[txnPartition]!;
    const data = await leaders(cluster, topic);
    const stall = data.find((l) => l !== coordinator);
    assert.ok(stall !== undefined, `some data partition is led elsewhere than the coordinator ${coordinator} (leaders ${data.join(',')})`);
    // Records acknowledged, then the leader of one of its partitions paused: once the ISR of
    // __transaction_state has dropped it (replica.lag.time.max.ms), PrepareCommit is durable and
    // EndTxn answered, but the markers cannot all be written: the transaction stays in PrepareCommit.
    const prepared = await loop.nextFlushedToCommit(30_000);
    cluster.broker(stall).pause();
    paused = stall;
    const coordPort = cluster.broker(coordinator).port;
    await cluster.waitFor(
      `${tid} in PrepareCommit`,
      30_000,
      async () => tagsOf(loop.lines, 'COMMITTED').includes(prepared) && (await describeTxn(coordPort, tid)).transactionState === 'PrepareCommit',
    );
    assert.equal((await describeTxn(coordPort, hangId)).transactionState, 'Ongoing');
    const killedAt = Date.now();
    await cluster.broker(coordinator).kill();
    cluster.broker(stall).resume();
    paused = undefined;
    await cluster.expireDead(coordinator); // its session closed at once, not after the timeout
    // The new coordinator: another broker leads the partition, has loaded it, and has completed the commit.
    let newCoordinator = -1;
    const state = await cluster.waitFor('a new coordinator with the commit completed', 90_000, async () => {
      const l = (await leaders(cluster, TXN_STATE))[txnPartition]!;
      if (l < 0 || l === coordinator) return undefined;
      const d = await describeTxn(cluster.broker(l).port, tid);
      if (d.errorCode !== 0 || d.transactionState === 'PrepareCommit' || d.transactionState === 'PrepareAbort') return undefined;
      newCoordinator = l;
      return d.transactionState;
    });
    const recoveredMs = Date.now() - killedAt;
    const hangState = await cluster.waitFor(`${hangId} aborted by the new coordinator`, 60_000, async () => {
      const d = await describeTxn(cluster.broker(newCoordinator).port, hangId);
      return d.errorCode === 0 && d.transactionState === 'CompleteAbort' ? d.transactionState : undefined;
    });
    const hangAbortedMs = Date.now() - killedAt;
    await loop.until(() => tagsOf(loop.lines, 'COMMITTED').includes(prepared) || loop.count() >= 8, 60_000, 'the loop to go on');
    const atKill = loop.count();
    await loop.until(() => loop.count() >= atKill + 3, 120_000, 'three transactions committed after the kill');
    await cluster.broker(coordinator).start();
    const catchUpMs = await waitCaughtUp(cluster, coordinator, [topic, TXN_STATE, OFFSETS]);
    // The restarted broker coordinates the id again (and leads its data partitions): it loads
    // the state from its own log, which it recovered and then fetched from the others.
    const moved = await electPreferred(cluster, coordinator, [topic, TXN_STATE, OFFSETS], work!);
    assert.equal((await leaders(cluster, TXN_STATE))[txnPartition], coordinator, 'the restarted broker coordinates the id again');
    const reloaded = await cluster.waitFor('the restarted coordinator to answer', 30_000, async () => {
      const d = await describeTxn(cluster.broker(coordinator).port, tid);
      return d.errorCode === 0 ? d.transactionState : undefined;
    });
    const afterMove = loop.count();
    await loop.until(() => loop.count() >= afterMove + 3, 60_000, 'transactions after the restarted broker took its partitions back');
    await loop.stop();
    await hang.kill();
    await waitCaughtUp(cluster, coordinator, [topic, TXN_STATE, OFFSETS]);
    const out = await checkOutcome(cluster, topic, loop, observer, { abortedTags: ['hang'] });
    const rc = byTransaction(await consumeAll(cluster.bootstrap(), topic, 'read_committed', PARTITIONS));
    assert.equal(rc.get(prepared), PER_TXN, `the transaction in PrepareCommit at the kill (${prepared}) is committed whole`);
    assert.equal(rc.get('hang'), undefined, 'the Ongoing transaction was aborted');
    t.diagnostic(
      `killed coordinator ${coordinator} with ${prepared} in PrepareCommit (markers held by paused broker ${stall}) and ${hangId} Ongoing; ` +
        `broker ${newCoordinator} coordinated ${tid} in state ${state} ${recoveredMs} ms after the kill, ${hangId} ${hangState} ${hangAbortedMs} ms after it; ` +
        `LSO at the high watermark ${out.stableMs} ms after the loop stopped; restarted broker caught up in ${catchUpMs} ms, led ${moved} partition(s) again, the coordinator's included (it answered ${reloaded}); ` +
        `${out.committed} transactions committed, ${out.aborted} rolled back, ${loop.runs.length} producer run(s); ` +
        `other lines: ${loop.lines.filter((l) => /^(ERROR|ABORTED|FATAL)/.test(l)).join(' | ')}`,
    );
  } finally {
    if (paused !== undefined) cluster.broker(paused).resume();
    await observer.kill();
    await hang?.kill();
    await loop.kill();
  }
});
