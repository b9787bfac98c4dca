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
import { mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Kafka, logLevel } from 'kafkajs';
import { Cluster } from '../helpers/cluster.js';
import { PYTHON, requirePeer } from '../helpers/peers.js';
import { RawClient } from '../helpers/raw-client.js';
import { zkTopic } from './cluster-clients.js';
import { consumeAll } from '../interop/confluent-consume.js';
import { HANG, Lines, TXN_LOOP, byTransaction, createTopic, observed, startObserver, tagsOf, waitStable } from '../interop/txn-helpers.js';
import { runCli } from '../cli/helpers.js';
import { partitionForGroup } from '../../src/coordinator/runtime/partition-for-group.js';
import {
  DescribeProducersRequestCodec,
  DescribeProducersResponseCodec,
  DescribeTransactionsRequestCodec,
  DescribeTransactionsResponseCodec,
} from '../../src/protocol/messages/index.js';

const TXN_PARTITIONS = 3;
const PARTITIONS = 3;
const PER_TXN = 6;
const ABORT_EVERY = 4;
/** Long enough that no transaction of the loop times out during a failover. */
const LOOP_TXN_TIMEOUT_MS = 60_000;
/** The Ongoing transaction of case b: the new coordinator aborts it at this timeout. */
const HANG_TXN_TIMEOUT_MS = 8000;
const TXN_STATE = '__transaction_state';

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

async function ask<T>(port: number, fn: (client: RawClient) => Promise<T>): Promise<T> {
  const client = await RawClient.connect(port);
  try {
    return await fn(client);
  } finally {
    client.close();
  }
}

/** The leader ZooKeeper names for each partition of `topic` (-1: none). */
async function leaders(cluster: Cluster, topic: string): Promise<number[]> {
  const t = await zkTopic(cluster, topic);
  if (!t) throw new Error(`${topic} is not in ZooKeeper`);
  return t.partitions.map((p) => p.leader);
}

/** ListOffsets and DescribeProducers go to each partition's current leader. */
const leaderPort =
  (cluster: Cluster, topic: string) =>
  async (partition: number): Promise<number> => {
    const l = (await leaders(cluster, topic))[partition]!;
    if (l < 0 || !cluster.broker(l).running) throw new Error(`${topic}-${partition} has no live leader`);
    return cluster.broker(l).port;
  };

async function describeTxn(port: number, id: string): Promise<{ errorCode: number; transactionState: string }> {
  const r = await ask(port, (cl) => cl.request(65, DescribeTransactionsRequestCodec, DescribeTransactionsResponseCodec, 0, { transactionalIds: [id] }));
  return r.transactionStates[0]!;
}

/** Open transactions DescribeProducers lists on each partition's leader ("topic-p: producer from offset"). */
async function openTransactions(cluster: Cluster, topic: string): Promise<string[]> {
  const open: string[] = [];
  for (let p = 0; p < PARTITIONS; p++) {
    const port = await leaderPort(cluster, topic)(p);
    const r = await ask(port, (cl) =>
      cl.request(61, DescribeProducersRequestCodec, DescribeProducersResponseCodec, 0, { topics: [{ name: topic, partitionIndexes: [p] }] }),
    );
    const part = r.topics[0]!.partitions[0]!;
    assert.equal(part.errorCode, 0, `DescribeProducers ${topic}-${p}`);
    for (const s of part.activeProducers)
      if (s.currentTxnStartOffset >= 0n) open.push(`${topic}-${p}: producer ${s.producerId} from ${s.currentTxnStartOffset}`);
  }
  return open;
}

/** Waits until `id` is in every ISR of the topics and each partition's replicas hold byte-identical logs. */
async function waitCaughtUp(cluster: Cluster, id: number, topics: string[]): Promise<number> {
  const start = Date.now();
  for (const topic of topics) {
    await cluster.waitFor(`broker ${id} back in every ISR of ${topic}`, 90_000, async () =>
      (await zkTopic(cluster, topic))?.partitions.every((p) => p.isr.includes(id)),
    );
    const t = (await zkTopic(cluster, topic))!;
    for (const p of t.partitions) {
      await cluster.waitFor(`${topic}-${p.partition}: the replicas' logs identical`, 60_000, async () => {
        const logs = await Promise.all(p.replicas.map((r) => logBytes(cluster, r, topic, p.partition)));
        return logs.every((l) => l.equals(logs[0]!));
      });
    }
  }
  return Date.now() - start;
}

/**
 * Gives back the partitions of `topics` whose preferred replica is `id` (kafka-leader-election.sh
 * PREFERRED), so the end checks read from the restarted broker's own log; returns how many moved.
 */
async function electPreferred(cluster: Cluster, id: number, topics: string[]): Promise<number> {
  const partitions: { topic: string; partition: number }[] = [];
  for (const topic of topics) {
    for (const p of (await zkTopic(cluster, topic))!.partitions)
      if (p.replicas[0] === id && p.leader !== id) partitions.push({ topic, partition: p.partition });
  }
  if (partitions.length === 0) return 0;
  const file = join(work!, `elect-${id}-${Date.now()}.json`);
  await writeFile(file, JSON.stringify({ partitions }));
  const r = await runCli('kafka-leader-election', ['--bootstrap-server', cluster.bootstrap(), '--election-type', 'PREFERRED', '--path-to-json-file', file], {
    timeoutMs: 60_000,
  });
  assert.equal(r.code, 0, r.stderr);
  await cluster.waitFor(`broker ${id} leading ${partitions.map((x) => `${x.topic}-${x.partition}`).join(', ')} again`, 30_000, async () => {
    for (const x of partitions) if ((await zkTopic(cluster, x.topic))!.partitions[x.partition]!.leader !== id) return false;
    return true;
  });
  return partitions.length;
}

/** A replica's log of one partition: its segments' .log files in offset order, concatenated. */
async function logBytes(cluster: Cluster, brokerId: number, topic: string, partition: number): Promise<Buffer> {
  const dir = join(cluster.broker(brokerId).dir, `${topic}-${partition}`);
  const files = (await readdir(dir)).filter((f) => f.endsWith('.log')).sort();
  return Buffer.concat(await Promise.all(files.map((f) => readFile(join(dir, f)))));
}

/** The consumer group whose offsets the loop commits in its transactions. */
const groupOf = (tid: string): string => `${tid}-group`;
const OFFSETS = '__consumer_offsets';

/** The number of a loop transaction's tag ('<tid>.<run>_<n>'). */
const txnNumber = (tag: string): number => Number(tag.slice(tag.lastIndexOf('_') + 1));

/** Runs the loop; if it stops (a fatal error), starts another with the same transactional.id. */
class LoopRunner {
  readonly runs: Lines[] = [];
  constructor(
    private readonly cluster: Cluster,
    private readonly topic: string,
    readonly tid: string,
    private readonly hold: number,
    private readonly stopFile: string,
  ) {
    this.spawn();
  }
  private spawn(): void {
    const tag = `${this.tid}.${this.runs.length}_`;
    this.runs.push(
      new Lines(PYTHON, [
        '-c',
        TXN_LOOP,
        this.cluster.bootstrap(),
        this.topic,
        String(PER_TXN),
        this.tid,
        String(PARTITIONS),
        String(ABORT_EVERY),
        String(this.hold),
        this.stopFile,
        tag,
        String(LOOP_TXN_TIMEOUT_MS),
        groupOf(this.tid),
      ]),
    );
  }
  get lines(): string[] {
    return this.runs.flatMap((r) => r.lines);
  }
  get current(): Lines {
    return this.runs[this.runs.length - 1]!;
  }
  count(kind = 'COMMITTED'): number {
    return tagsOf(this.lines, kind).length;
  }
  /** Waits for `pred`, restarting the loop if it stopped with an error. */
  async until(pred: () => boolean, timeoutMs: number, what: string): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!pred()) {
      if (Date.now() > deadline)
        throw new Error(
          `timed out waiting for ${what}; lines: ${this.lines.slice(-10).join(' | ')}; stderr: ${this.current.stderr}\n${this.cluster.logTails(15)}`,
        );
      if (this.current.exited) {
        if (this.current.lines.includes('DONE')) throw new Error(`the loop ended while waiting for ${what}`);
        this.spawn();
      }
      await new Promise((r) => setTimeout(r, 50));
    }
  }
  /** Waits for the next transaction with its records acknowledged that the loop means to commit (not one it rolls back); its tag. */
  async nextFlushedToCommit(timeoutMs: number): Promise<string> {
    const seen = this.count('FLUSHED');
    let tag: string | undefined;
    await this.until(
      () =>
        (tag = tagsOf(this.lines, 'FLUSHED')
          .slice(seen)
          .find((x) => txnNumber(x) % ABORT_EVERY !== 0)) !== undefined,
      timeoutMs,
      'a transaction to commit with its records acknowledged',
    );
    return tag!;
  }
  async stop(): Promise<void> {
    await writeFile(this.stopFile, '');
    await this.until(() => this.current.exited && this.current.lines.includes('DONE'), 120_000, 'the loop to finish its last transaction');
  }
  /** A new producer with the same transactional.id (after the current one was killed). */
  restart(): void {
    this.spawn();
  }
  async kill(): Promise<void> {
    for (const r of this.runs) await r.kill();
  }
}

/**
 * The end checks of both cases: the LSO reaches the high watermark, no open transaction left,
 * read_committed = exactly the committed transactions (each record once), read_uncommitted a
 * superset holding the aborted ones. Returns how long the LSO took.
 */
async function checkOutcome(
  cluster: Cluster,
  topic: string,
  loop: LoopRunner,
  observer: Lines,
  extra: { abortedTags?: string[] } = {},
): Promise<{ stableMs: number; committed: number; aborted: number }> {
  // No broker answer made the producer give up (a fatal error): it lived through every failover.
  assert.deepEqual(
    loop.lines.filter((l) => l.startsWith('FATAL')),
    [],
    'the producer never failed fatally',
  );
  const stableMs = await waitStable(leaderPort(cluster, topic), topic, PARTITIONS, 60_000);
  assert.deepEqual(await openTransactions(cluster, topic), [], 'DescribeProducers lists no open transaction');
  const committedTags = tagsOf(loop.lines, 'COMMITTED');
  const rolledBack = tagsOf(loop.lines, 'ROLLEDBACK');
  const rc = await consumeAll(cluster.bootstrap(), topic, 'read_committed', PARTITIONS);
  assert.equal(
    new Set(rc).size,
    rc.length,
    `read_committed saw a record twice: ${rc
      .filter((v, i) => rc.indexOf(v) !== i)
      .slice(0, 5)
      .join(', ')}`,
  );
  const seen = byTransaction(rc);
  for (const [tag, n] of seen) assert.equal(n, PER_TXN, `transaction ${tag}: read_committed saw ${n} of ${PER_TXN} records`);
  assert.deepEqual([...seen.keys()].sort(), [...committedTags].sort(), 'read_committed sees exactly the committed transactions');
  const ru = await consumeAll(cluster.bootstrap(), topic, 'read_uncommitted', PARTITIONS);
  const all = new Set(ru);
  assert.deepEqual(
    rc.filter((v) => !all.has(v)),
    [],
    'read_uncommitted sees every committed record',
  );
  const ruBy = byTransaction(ru);
  for (const tag of [...rolledBack, ...(extra.abortedTags ?? [])]) assert.ok((ruBy.get(tag) ?? 0) > 0, `read_uncommitted sees the aborted transaction ${tag}`);
  assert.ok(ru.length > rc.length, 'read_uncommitted sees more (the aborted records)');
  // The read_committed consumer that ran through the failures saw the same, each record once.
  await cluster.waitFor('the observer to catch up', 60_000, () => observed(observer).length >= rc.length);
  const live = observed(observer);
  assert.equal(
    new Set(live).size,
    live.length,
    `the observer saw a record twice: ${live
      .filter((v, i) => live.indexOf(v) !== i)
      .slice(0, 5)
      .join(', ')}`,
  );
  assert.deepEqual([...live].sort(), [...rc].sort(), 'what read_committed showed during the failures is exactly the committed records');
  assert.deepEqual(
    observer.lines.filter((l) => l.startsWith('E ')),
    [],
    'the observer got no errors',
  );
  // The group offset committed in the transactions: the number of the last committed one.
  const kafka = new Kafka({ brokers: cluster.bootstrap().split(','), logLevel: logLevel.NOTHING });
  const admin = kafka.admin();
  await admin.connect();
  try {
    const [offsets] = await admin.fetchOffsets({ groupId: groupOf(loop.tid), topics: [topic] });
    const p0 = offsets!.partitions.find((x) => x.partition === 0)!;
    assert.equal(Number(p0.offset), txnNumber(committedTags.at(-1)!), `${groupOf(loop.tid)}'s offset is the last committed transaction's`);
  } finally {
    await admin.disconnect();
  }
  return { stableMs, committed: committedTags.length, aborted: rolledBack.length };
}

/**
 * Kills -9 a broker leading some of `topic`'s partitions, neither the transaction coordinator
 * nor (if it can be helped, else `avoid`) the controller, right after a transaction's records
 * were acknowledged (so it is open); waits for new leaders. With `withProducer` the producer dies
 * at the same moment and a new one with the same transactional.id takes over.
 */
async function killDataLeader(
  cluster: Cluster,
  loop: LoopRunner,
  topic: string,
  tid: string,
  opts: { avoid?: number; withProducer?: boolean },
): Promise<{ victim: number; led: number[]; open: string; killedAt: number; electedMs: number }> {
  const coordinator = (await leaders(cluster, TXN_STATE))[partitionForGroup(tid, TXN_PARTITIONS)]!;
  const controller = (await cluster.controller())?.brokerId;
  const data = await leaders(cluster, topic);
  const candidates = data.filter((l) => l !== coordinator);
  assert.ok(candidates.length > 0, `some data partition is led elsewhere than the coordinator ${coordinator} (leaders ${data.join(',')})`);
  const victim = candidates.find((l) => l !== controller && l !== opts.avoid) ?? candidates.find((l) => l !== opts.avoid) ?? candidates[0]!;
  const open = await loop.nextFlushedToCommit(30_000);
  const killedAt = Date.now();
  await Promise.all([cluster.broker(victim).kill(), opts.withProducer ? loop.current.kill() : undefined]);
  if (opts.withProducer) loop.restart();
  const led = data.flatMap((l, p) => (l === victim ? [p] : []));
  await cluster.waitFor(`new leaders for ${topic} ${led.join(',')}`, 60_000, async () => {
    const now = await leaders(cluster, topic);
    return led.every((p) => now[p]! >= 0 && now[p] !== victim);
  });
  return { victim, led, open, killedAt, electedMs: Date.now() - killedAt };
}

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
      const moved = await electPreferred(cluster, k.victim, [topic, TXN_STATE, OFFSETS]);
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
    const moved = await electPreferred(cluster, coordinator, [topic, TXN_STATE, OFFSETS]);
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
