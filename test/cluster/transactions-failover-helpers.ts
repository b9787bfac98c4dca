/**
 * What transactions-failover.test.ts drives and checks: the cluster's settings, a confluent-kafka
 * transactional loop (LoopRunner), kills of a data leader, waits for a restarted broker to catch
 * up and lead again, and the check of what read_committed and read_uncommitted saw.
 */
import assert from 'node:assert/strict';
import { readFile, readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Kafka, logLevel } from 'kafkajs';
import type { Cluster } from '../helpers/cluster.js';
import { PYTHON } from '../helpers/peers.js';
import { RawClient } from '../helpers/raw-client.js';
import { zkTopic } from './cluster-clients.js';
import { consumeAll } from '../interop/confluent-consume.js';
import { Lines, TXN_LOOP, byTransaction, observed, tagsOf, waitStable } from '../interop/txn-helpers.js';
import { runCli } from '../cli/helpers.js';
import { partitionForGroup } from '../../src/coordinator/runtime/partition-for-group.js';
import {
  DescribeProducersRequestCodec,
  DescribeProducersResponseCodec,
  DescribeTransactionsRequestCodec,
  DescribeTransactionsResponseCodec,
} from '../../src/protocol/messages/index.js';

export const TXN_PARTITIONS = 3;
export const PARTITIONS = 3;
export const PER_TXN = 6;
export const ABORT_EVERY = 4;
/** Long enough that no transaction of the loop times out during a failover. */
export const LOOP_TXN_TIMEOUT_MS = 60_000;
/** The Ongoing transaction of case b: the new coordinator aborts it at this timeout. */
export const HANG_TXN_TIMEOUT_MS = 8000;
export const TXN_STATE = '__transaction_state';
export async function ask<T>(port: number, fn: (client: RawClient) => Promise<T>): Promise<T> {
  const client = await RawClient.connect(port);
  try {
    return await fn(client);
  } finally {
    client.close();
  }
}

/** The leader ZooKeeper names for each partition of `topic` (-1: none). */
export async function leaders(cluster: Cluster, topic: string): Promise<number[]> {
  const t = await zkTopic(cluster, topic);
  if (!t) throw new Error(`${topic} is not in ZooKeeper`);
  return t.partitions.map((p) => p.leader);
}

/** ListOffsets and DescribeProducers go to each partition's current leader. */
export const leaderPort =
  (cluster: Cluster, topic: string) =>
  async (partition: number): Promise<number> => {
    const l = (await leaders(cluster, topic))[partition]!;
    if (l < 0 || !cluster.broker(l).running) throw new Error(`${topic}-${partition} has no live leader`);
    return cluster.broker(l).port;
  };

export async function describeTxn(port: number, id: string): Promise<{ errorCode: number; transactionState: string }> {
  const r = await ask(port, (cl) => cl.request(65, DescribeTransactionsRequestCodec, DescribeTransactionsResponseCodec, 0, { transactionalIds: [id] }));
  return r.transactionStates[0]!;
}

/** Open transactions DescribeProducers lists on each partition's leader ("topic-p: producer from offset"). */
export async function openTransactions(cluster: Cluster, topic: string): Promise<string[]> {
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
export async function waitCaughtUp(cluster: Cluster, id: number, topics: string[]): Promise<number> {
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
export async function electPreferred(cluster: Cluster, id: number, topics: string[], work: string): Promise<number> {
  const partitions: { topic: string; partition: number }[] = [];
  for (const topic of topics) {
    for (const p of (await zkTopic(cluster, topic))!.partitions)
      if (p.replicas[0] === id && p.leader !== id) partitions.push({ topic, partition: p.partition });
  }
  if (partitions.length === 0) return 0;
  const file = join(work, `elect-${id}-${Date.now()}.json`);
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
export async function logBytes(cluster: Cluster, brokerId: number, topic: string, partition: number): Promise<Buffer> {
  const dir = join(cluster.broker(brokerId).dir, `${topic}-${partition}`);
  const files = (await readdir(dir)).filter((f) => f.endsWith('.log')).sort();
  return Buffer.concat(await Promise.all(files.map((f) => readFile(join(dir, f)))));
}

/** The consumer group whose offsets the loop commits in its transactions. */
export const groupOf = (tid: string): string => `${tid}-group`;
export const OFFSETS = '__consumer_offsets';

/** The number of a loop transaction's tag ('<tid>.<run>_<n>'). */
export const txnNumber = (tag: string): number => Number(tag.slice(tag.lastIndexOf('_') + 1));

/** Runs the loop; if it stops (a fatal error), starts another with the same transactional.id. */
export class LoopRunner {
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
export async function checkOutcome(
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
export async function killDataLeader(
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
  // The victim's session closed at once: the new leaders come without waiting out the session timeout.
  await Promise.all([cluster.killAndExpire(victim), opts.withProducer ? loop.current.kill() : undefined]);
  if (opts.withProducer) loop.restart();
  const led = data.flatMap((l, p) => (l === victim ? [p] : []));
  await cluster.waitFor(`new leaders for ${topic} ${led.join(',')}`, 60_000, async () => {
    const now = await leaders(cluster, topic);
    return led.every((p) => now[p]! >= 0 && now[p] !== victim);
  });
  return { victim, led, open, killedAt, electedMs: Date.now() - killedAt };
}
