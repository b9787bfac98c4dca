/**
 * Property tests of replication (issue 12) on the in-process cluster (test/helpers/inproc-cluster.ts):
 * fast-check draws schedules of acks=all / acks=1 produces, dropped or delayed Fetch and
 * LeaderAndIsr between chosen brokers, held LeaderAndIsr, kills and restarts, and leader moves,
 * on a fresh partition (replication factor 3, min.insync.replicas=2) per run. After every step
 * the invariants of CLUSTER.md that can be read at one instant are checked on every running
 * broker's Partition objects (a synchronous snapshot: one process, so it is atomic):
 *  - no two brokers lead the partition in the same leader epoch;
 *  - a leader's ISR contains the leader; HW <= LEO on every replica;
 *  - a leader's high watermark never decreases within its epoch;
 *  - a broker's leader epoch never decreases while it runs, nor the epoch in ZooKeeper;
 *  - the high watermark never passes the log end of an ISR member following the same epoch;
 *  - the leader ZooKeeper names (once it acts on that epoch) holds every acks=all-acknowledged
 *    offset, and every record another replica holds below its high watermark, at the same offset.
 * At the end of a run every fault is healed, every broker restarted, and once the replicas
 * converge (all in the ISR, same log end) every replica's log is byte-identical (so each
 * follower's is a prefix of the leader's after truncation) and holds every acks=all-acknowledged
 * record at the offset it was acknowledged with.
 *
 * Short in npm test (FJORD_PROP_RUNS=4 runs of FJORD_PROP_STEPS=25 steps); longer with, e.g.,
 * FJORD_PROP_RUNS=200 FJORD_PROP_STEPS=60. A failure prints fast-check's seed and path: replay it
 * with FJORD_PROP_SEED=<seed> FJORD_PROP_PATH=<path> (the interleavings depend on timing, so a
 * replay reruns the same schedule, not always the same race). FJORD_PROP_SHRINK=1 lets
 * fast-check shrink a failure (each shrink step reruns a schedule on the cluster: slow).
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import fc from 'fast-check';
import { InprocCluster, API } from '../helpers/inproc-cluster.js';
import { requirePeer } from '../helpers/peers.js';
import { ZOOKEEPER_JAR } from '../helpers/zookeeper.js';
import { Connection } from '../../src/client/connection.js';
import { Api } from '../../src/client/apis.js';
import { decodeBatch, encodeBatch, iterateBatches } from '../../src/protocol/records/index.js';
import type { Partition } from '../../src/replication/partition/partition.js';

const RUNS = Number(process.env.FJORD_PROP_RUNS ?? 4);
const STEPS = Number(process.env.FJORD_PROP_STEPS ?? 25);
const N = 3;

type Step =
  | { kind: 'produce'; acks: -1 | 1; count: number }
  | { kind: 'drop'; api: number; from: number; to: number }
  | { kind: 'delay'; api: number; from: number; to: number; ms: number }
  | { kind: 'hold'; to: number }
  | { kind: 'heal' }
  | { kind: 'kill'; id: number }
  | { kind: 'restart'; id: number }
  | { kind: 'elect'; target: number };

const broker = fc.integer({ min: 0, max: N - 1 });
const pair = fc.tuple(broker, broker).filter(([a, b]) => a !== b);
const interBrokerApi = fc.constantFrom(API.Fetch, API.LeaderAndIsr);
const stepArb: fc.Arbitrary<Step> = fc.oneof(
  {
    weight: 6,
    arbitrary: fc.record({ kind: fc.constant('produce' as const), acks: fc.constantFrom(-1 as const, 1 as const), count: fc.integer({ min: 1, max: 4 }) }),
  },
  { weight: 2, arbitrary: fc.tuple(interBrokerApi, pair).map(([api, [from, to]]): Step => ({ kind: 'drop', api, from, to })) },
  {
    weight: 1,
    arbitrary: fc.tuple(interBrokerApi, pair, fc.integer({ min: 20, max: 400 })).map(([api, [from, to], ms]): Step => ({ kind: 'delay', api, from, to, ms })),
  },
  { weight: 1, arbitrary: broker.map((to): Step => ({ kind: 'hold', to })) },
  { weight: 1, arbitrary: fc.constant({ kind: 'heal' as const }) },
  { weight: 1, arbitrary: broker.map((id): Step => ({ kind: 'kill', id })) },
  { weight: 2, arbitrary: broker.map((id): Step => ({ kind: 'restart', id })) },
  { weight: 2, arbitrary: broker.map((target): Step => ({ kind: 'elect', target })) },
);
const scheduleArb = fc.record({
  replicas: fc.constantFrom([0, 1, 2], [1, 2, 0], [2, 0, 1]),
  steps: fc.array(stepArb, { minLength: STEPS, maxLength: STEPS }),
});

let c: InprocCluster | undefined;
before(async () => {
  if (existsSync(ZOOKEEPER_JAR)) c = await InprocCluster.start({ brokers: N, props: { 'replica.lag.time.max.ms': '1000' } });
});
after(() => c?.stop());

function batchOf(values: string[]): Buffer {
  return encodeBatch({
    records: values.map((v, i) => ({ attributes: 0, timestampDelta: 0, offsetDelta: i, key: null, value: Buffer.from(v), headers: [] })),
    baseTimestamp: BigInt(Date.now()),
  });
}

/** Resolves with `p`'s value, or `undefined` once `ms` passed (p goes on in the background). */
async function within<T>(p: Promise<T>, ms: number): Promise<T | undefined> {
  let timer: NodeJS.Timeout | undefined;
  const r = await Promise.race([p.catch(() => undefined), new Promise<undefined>((resolve) => (timer = setTimeout(() => resolve(undefined), ms)))]);
  clearTimeout(timer);
  return r;
}

/** Runs that converged with a follower on a stale high watermark (reported, see converge()). */
const staleFollowerHw: string[] = [];

/** What one run learned; the checks compare against it. */
class RunState {
  /** offset -> value of every acks=all-acknowledged record. */
  readonly acked = new Map<number, string>();
  /** "broker:epoch" -> the last high watermark that broker had as leader of that epoch. */
  readonly leaderHw = new Map<string, number>();
  /** broker -> the last leader epoch its replica had (reset when it is killed). */
  readonly epochOf = new Map<number, number>();
  zkEpoch = -1;
  seq = 0;
  readonly log: string[] = [];
}

function replicaOf(cl: InprocCluster, id: number, topic: string): Partition | undefined {
  return cl.partition(id, topic);
}

/** The invariants that hold at every instant, on a synchronous snapshot of every running replica. */
function checkInstant(cl: InprocCluster, topic: string, s: RunState, where: string): void {
  const replicas = new Map<number, Partition>();
  for (const b of cl.running()) {
    const p = replicaOf(cl, b.id, topic);
    if (p) replicas.set(b.id, p);
  }
  const leaderOfEpoch = new Map<number, number>();
  for (const [id, p] of replicas) {
    const ctx = `${where}: broker ${id} (leader=${p.isLeader} epoch=${p.leaderEpoch} hw=${p.highWatermark} leo=${p.logEndOffset} isr=${p.isr.join(',')})`;
    assert.ok(p.highWatermark <= p.logEndOffset, `${ctx}: high watermark past the log end`);
    const lastEpoch = s.epochOf.get(id);
    assert.ok(lastEpoch === undefined || p.leaderEpoch >= lastEpoch, `${ctx}: leader epoch went back from ${lastEpoch}`);
    s.epochOf.set(id, p.leaderEpoch);
    if (!p.isLeader) continue;
    const other = leaderOfEpoch.get(p.leaderEpoch);
    assert.equal(other, undefined, `${ctx}: brokers ${other} and ${id} both lead epoch ${p.leaderEpoch}`);
    leaderOfEpoch.set(p.leaderEpoch, id);
    assert.ok(p.isr.includes(id), `${ctx}: the leader is not in its own ISR`);
    const key = `${id}:${p.leaderEpoch}`;
    const lastHw = s.leaderHw.get(key);
    assert.ok(lastHw === undefined || p.highWatermark >= lastHw, `${ctx}: high watermark went back from ${lastHw} within epoch ${p.leaderEpoch}`);
    s.leaderHw.set(key, p.highWatermark);
    for (const f of p.isr) {
      const fp = replicas.get(f);
      if (f === id || !fp || fp.isLeader || fp.leaderEpoch !== p.leaderEpoch) continue;
      assert.ok(p.highWatermark <= fp.logEndOffset, `${ctx}: high watermark past the log end ${fp.logEndOffset} of ISR member ${f}`);
    }
  }
}

/** ZooKeeper's epoch never decreases; the leader it names, once on that epoch, has every acknowledged offset. */
async function checkZk(cl: InprocCluster, topic: string, s: RunState, where: string): Promise<void> {
  const st = await cl.zkState(topic);
  if (!st) return;
  assert.ok(st.leader_epoch >= s.zkEpoch, `${where}: ZooKeeper's leader epoch went back from ${s.zkEpoch} to ${st.leader_epoch}`);
  s.zkEpoch = st.leader_epoch;
  if (st.leader < 0) return;
  const p = replicaOf(cl, st.leader, topic);
  if (!p || !p.isLeader || p.leaderEpoch !== st.leader_epoch) return;
  const maxAcked = Math.max(-1, ...s.acked.keys());
  assert.ok(
    p.logEndOffset > maxAcked,
    `${where}: leader ${st.leader} (epoch ${p.leaderEpoch}, ISR ${st.isr.join(',')}) ends at ${p.logEndOffset}, below acknowledged offset ${maxAcked}`,
  );
}

/**
 * Committed data agrees: every record a replica holds below its high watermark is, at the same
 * offset, in the log of the leader ZooKeeper names (once that leader acts on its epoch).
 */
async function checkCommittedPrefix(cl: InprocCluster, topic: string, where: string): Promise<void> {
  const st = await cl.zkState(topic);
  if (!st || st.leader < 0) return;
  const leader = replicaOf(cl, st.leader, topic);
  if (!leader || !leader.isLeader || leader.leaderEpoch !== st.leader_epoch) return;
  const reads = await Promise.all(
    cl.running().map(async (b) => {
      const p = replicaOf(cl, b.id, topic);
      // A log truncated or restarted under the read is caught at the next step.
      return p ? { id: b.id, hw: p.highWatermark, log: await readLog(p).catch(() => undefined) } : undefined;
    }),
  );
  const leaderRead = reads.find((r) => r?.id === st.leader)?.log;
  if (!leaderRead) return;
  for (const r of reads) {
    if (!r?.log || r.id === st.leader) continue;
    for (const [offset, value] of r.log.values) {
      if (offset >= r.hw) continue;
      assert.equal(
        leaderRead.values.get(offset),
        value,
        `${where}: broker ${r.id} holds ${value} at offset ${offset} below its high watermark ${r.hw}, leader ${st.leader} (epoch ${st.leader_epoch}) does not`,
      );
    }
  }
}

async function produce(cl: InprocCluster, topic: string, s: RunState, acks: -1 | 1, count: number): Promise<string> {
  const st = await cl.zkState(topic);
  if (!st || st.leader < 0 || !cl.broker(st.leader).broker) return 'no live leader';
  const values = Array.from({ length: count }, () => `${topic}-v${s.seq++}`);
  let conn: Connection | undefined;
  try {
    conn = await Connection.connect('127.0.0.1', cl.broker(st.leader).port, { clientId: 'prop', connectTimeoutMs: 2000, requestTimeoutMs: 5000 });
    const res = await conn.send(Api.Produce, { acks, timeoutMs: 1000, topicData: [{ name: topic, partitionData: [{ index: 0, records: batchOf(values) }] }] });
    const r = res.responses[0]!.partitionResponses[0]!;
    if (r.errorCode !== 0) return `error ${r.errorCode}`;
    if (acks === -1) values.forEach((v, i) => s.acked.set(Number(r.baseOffset) + i, v));
    return `ok @${r.baseOffset}`;
  } catch (err) {
    return `failed: ${err instanceof Error ? err.message : String(err)}`;
  } finally {
    conn?.close();
  }
}

async function runStep(cl: InprocCluster, topic: string, s: RunState, step: Step): Promise<string> {
  switch (step.kind) {
    case 'produce':
      return produce(cl, topic, s, step.acks, step.count);
    case 'drop':
      cl.faults.drop({ api: step.api, from: step.from, to: step.to });
      return 'rule added';
    case 'delay':
      cl.faults.delay({ api: step.api, from: step.from, to: step.to }, step.ms);
      return 'rule added';
    case 'hold':
      cl.faults.hold({ api: API.LeaderAndIsr, to: step.to });
      return 'rule added';
    case 'heal':
      cl.faults.clear();
      return 'healed';
    case 'kill':
      if (!cl.broker(step.id).broker || cl.running().length <= 1) return 'skipped';
      await cl.kill(step.id);
      s.epochOf.delete(step.id);
      return 'killed';
    case 'restart':
      if (cl.broker(step.id).broker) return 'skipped';
      await cl.restart(step.id);
      return 'restarted';
    case 'elect': {
      if (!cl.broker(step.target).broker) return 'skipped';
      const code = await within(cl.moveLeader(topic, 0, step.target, 2000), 5000);
      return `election ${code ?? 'timed out'}`;
    }
  }
}

/** Every record value by offset in `p`'s log, and the raw bytes of the whole log. */
async function readLog(p: Partition): Promise<{ bytes: Buffer; values: Map<number, string> }> {
  const r = await p.read(p.logStartOffset, 64 << 20, true, p.logEndOffset);
  const values = new Map<number, string>();
  for (const e of iterateBatches(r.records)) {
    const b = decodeBatch(r.records, e.start, { maxBytes: 1 << 30 });
    for (const rec of b.records) values.set(Number(b.baseOffset) + rec.offsetDelta, rec.value?.toString() ?? '');
  }
  return { bytes: r.records, values };
}

/** Heals everything, waits for the replicas to converge, then checks the logs. */
async function converge(cl: InprocCluster, topic: string, s: RunState, where: string): Promise<void> {
  cl.faults.clear();
  for (const b of cl.brokers) if (!b.broker) await cl.restart(b.id);
  const st = await cl
    .waitFor(`${topic}: all replicas in sync`, 60_000, async () => {
      const z = await cl.zkState(topic);
      if (!z || z.leader < 0 || z.isr.length !== N) return undefined;
      const ps = cl.brokers.map((b) => replicaOf(cl, b.id, topic));
      if (ps.some((p) => !p || p.leaderEpoch !== z.leader_epoch)) return undefined;
      const leader = ps[z.leader]!;
      if (!leader.isLeader || leader.isr.length !== N) return undefined;
      return leader.highWatermark === leader.logEndOffset && ps.every((p) => p!.logEndOffset === leader.logEndOffset) ? z : undefined;
    })
    .catch(async (err: unknown) => {
      throw new Error(`${where}: ${(err as Error).message}\n${await cl.describe(topic)}\n${s.log.join('\n')}`);
    });
  checkInstant(cl, topic, s, where);
  // Followers learn the high watermark from fetch answers that carry it; an incremental fetch
  // session carries it only when it moved, so a follower that dropped such an answer (its fetch
  // state was replaced by a LeaderAndIsr while the fetch was out, as Kafka's follower does too)
  // keeps a stale one until the next move. Not an invariant of CLUSTER.md: counted and reported,
  // then one more acks=all record moves the high watermark and every follower must follow it.
  const followersHw = (): boolean => cl.brokers.every((b) => replicaOf(cl, b.id, topic)!.highWatermark === replicaOf(cl, st.leader, topic)!.highWatermark);
  if (!(await cl.waitFor("followers on the leader's high watermark", 3000, followersHw).catch(() => false))) {
    staleFollowerHw.push(`${topic}: ${(await cl.describe(topic)).replace(/\n/g, ' | ')}`);
    await cl.waitFor(`${topic}: an acks=all record after convergence`, 20_000, async () => (await produce(cl, topic, s, -1, 1)).startsWith('ok'));
    await cl.waitFor(`${topic}: followers on the leader's high watermark once it moved`, 20_000, followersHw).catch(async (err: unknown) => {
      throw new Error(`${where}: ${(err as Error).message}\n${await cl.describe(topic)}\n${s.log.join('\n')}`);
    });
  }
  const leaderLog = await readLog(replicaOf(cl, st.leader, topic)!);
  for (const b of cl.brokers) {
    const log = await readLog(replicaOf(cl, b.id, topic)!);
    assert.ok(log.bytes.equals(leaderLog.bytes), `${where}: broker ${b.id}'s log differs from leader ${st.leader}'s\n${s.log.join('\n')}`);
  }
  for (const [offset, value] of s.acked) {
    assert.equal(leaderLog.values.get(offset), value, `${where}: acks=all record ${value} acknowledged at offset ${offset} is not there\n${s.log.join('\n')}`);
  }
}

test(`replication invariants hold over random fault schedules (${RUNS} runs of ${STEPS} steps)`, { timeout: 30 * 60_000 }, async (t) => {
  if (!requirePeer(t, 'zookeeper') || !c) return;
  const cl = c;
  let run = 0;
  const seed = process.env.FJORD_PROP_SEED === undefined ? undefined : Number(process.env.FJORD_PROP_SEED);
  const path = process.env.FJORD_PROP_PATH;
  const started = Date.now();
  t.after(() => {
    for (const line of staleFollowerHw) t.diagnostic(`converged with a follower on a stale high watermark (fixed by the next move): ${line}`);
  });
  await fc.assert(
    fc.asyncProperty(scheduleArb, async ({ replicas, steps }) => {
      try {
        await oneRun(replicas, steps);
      } catch (err) {
        // fast-check's report names the seed and path; the reason is this message.
        t.diagnostic(`run failed: ${err instanceof Error ? err.message : String(err)}`);
        throw err;
      }
    }),
    { numRuns: RUNS, endOnFailure: process.env.FJORD_PROP_SHRINK !== '1', ...(seed !== undefined ? { seed } : {}), ...(path ? { path } : {}) },
  );
  t.diagnostic(`${RUNS} runs of ${STEPS} steps in ${Date.now() - started} ms`);

  async function oneRun(replicas: readonly number[], steps: Step[]): Promise<void> {
    const topic = `prop${run++}`;
    cl.faults.clear();
    for (const b of cl.brokers) if (!b.broker) await cl.restart(b.id);
    await cl.createTopic(topic, [...replicas], { 'min.insync.replicas': '2' });
    const s = new RunState();
    for (const [i, step] of steps.entries()) {
      const t0 = Date.now();
      const outcome = await runStep(cl, topic, s, step);
      s.log.push(`#${i} ${JSON.stringify(step)} -> ${outcome} (${Date.now() - t0} ms)`);
      const where = `${topic} after step #${i} ${JSON.stringify(step)}`;
      try {
        checkInstant(cl, topic, s, where);
        await checkZk(cl, topic, s, where);
        await checkCommittedPrefix(cl, topic, where);
      } catch (err) {
        throw new Error(`${(err as Error).message}\n${s.log.join('\n')}`);
      }
    }
    const t0 = Date.now();
    await converge(cl, topic, s, `${topic} at the end`);
    if (process.env.FJORD_PROP_VERBOSE === '1') t.diagnostic(`${topic}: converged in ${Date.now() - t0} ms\n${s.log.join('\n')}`);
  }
});
