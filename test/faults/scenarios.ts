/**
 * Fault scenarios against a real cluster (test/helpers/cluster.ts: Debian's ZooKeeper and
 * brokers as child processes). Each runs on a topic of its own (3 partitions, replication
 * factor 3, min.insync.replicas=2) under the Workload's producers and observer, injects its
 * faults at moments chosen by a seeded random count of acknowledgements (not by sleeping),
 * waits until the cluster is whole again (every broker back, every partition's ISR complete),
 * and is judged by verify.ts.
 */
import kafkajs from 'kafkajs';
import { Admin } from '../../src/client/index.js';
import type { Cluster } from '../helpers/cluster.js';
import { zkTopic, type PartitionView } from '../cluster/cluster-clients.js';
import { judge, readLog, type Verdict } from './verify.js';
import { Workload } from './workload.js';

export interface ScenarioContext {
  cluster: Cluster;
  workload: Workload;
  topic: string;
  partitions: number;
  rounds: number;
  random: () => number;
  log: (line: string) => void;
}

export interface ScenarioResult extends Verdict {
  scenario: string;
  faults: number;
  /** Per fault: ms from the fault to the next acknowledgement of an affected partition. */
  recoveryMs: number[];
}

export interface Scenario {
  name: string;
  /** Replica lists per partition (first = preferred leader); default: 3 partitions spread by the broker. */
  assignment?: number[][];
  /** Injects the faults; returns how many and the recovery time of each. */
  run(ctx: ScenarioContext): Promise<{ faults: number; recoveryMs: number[] }>;
}

const PARTITIONS = 3;
const RECOVERY_TIMEOUT_MS = 60_000;
const REJOIN_TIMEOUT_MS = 120_000;

/** seeded PRNG (mulberry32): the same seed injects faults at the same points of the load. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const pick = <T>(xs: readonly T[], random: () => number): T => xs[Math.floor(random() * xs.length)]!;

async function partitionsOf(ctx: ScenarioContext): Promise<PartitionView[]> {
  const t = await zkTopic(ctx.cluster, ctx.topic);
  if (!t) throw new Error(`${ctx.topic} is not in ZooKeeper`);
  return t.partitions;
}

/** Lets a random amount of load through (200 to 2,000 acknowledgements) before the next fault. */
function randomMoment(ctx: ScenarioContext): Promise<void> {
  return ctx.workload.waitForAcks(200 + Math.floor(ctx.random() * 1800), RECOVERY_TIMEOUT_MS);
}

/**
 * Waits for a leader other than `not` on `partition`, then for the first acknowledgement after
 * that (acknowledgements already on their way when the leader died arrive after the kill too, so
 * they do not count); returns ms since `since`.
 */
async function recovery(ctx: ScenarioContext, partition: number, not: readonly number[], since: number): Promise<number> {
  await ctx.cluster.waitFor(`a new leader of ${ctx.topic}-${partition}`, RECOVERY_TIMEOUT_MS, async () => {
    const p = (await partitionsOf(ctx)).find((x) => x.partition === partition);
    return p !== undefined && p.leader >= 0 && !not.includes(p.leader);
  });
  const elected = Date.now();
  const after = await ctx.cluster.waitFor(`acknowledgements on ${ctx.topic}-${partition} after the fault`, RECOVERY_TIMEOUT_MS, () =>
    ctx.workload.firstAckAfter(elected, partition),
  );
  return elected - since + after;
}

/** Waits until `victim` left the ISR of `partition`, then for the next acknowledgement; returns ms since `since`. */
async function isrRecovery(ctx: ScenarioContext, partition: number, victim: number, since: number): Promise<number> {
  await ctx.cluster.waitFor(`broker ${victim} to leave the ISR of ${ctx.topic}-${partition}`, RECOVERY_TIMEOUT_MS, async () =>
    (await partitionsOf(ctx)).some((x) => x.partition === partition && !x.isr.includes(victim)),
  );
  const shrunk = Date.now();
  const after = await ctx.cluster.waitFor(`acknowledgements on ${ctx.topic}-${partition} after the ISR shrank`, RECOVERY_TIMEOUT_MS, () =>
    ctx.workload.firstAckAfter(shrunk, partition),
  );
  return shrunk - since + after;
}

/**
 * Starts a killed broker again once ZooKeeper has expired its old session: as Kafka, a broker
 * refuses to start while /brokers/ids/<id> is still held by its previous life.
 */
async function restart(ctx: ScenarioContext, id: number): Promise<void> {
  await ctx.cluster.waitFor(`broker ${id}'s old registration to expire`, RECOVERY_TIMEOUT_MS, async () => !(await ctx.cluster.registeredIds()).includes(id));
  await ctx.cluster.broker(id).start();
}

/** Waits until every broker is registered and every partition's ISR holds all its replicas. */
export async function waitWhole(ctx: ScenarioContext): Promise<void> {
  await ctx.cluster.waitForRegistered(
    ctx.cluster.brokers.map((b) => b.id),
    REJOIN_TIMEOUT_MS,
  );
  try {
    await ctx.cluster.waitFor(`every replica of ${ctx.topic} back in the ISR`, REJOIN_TIMEOUT_MS, async () =>
      (await partitionsOf(ctx)).every((p) => p.isr.length === p.replicas.length),
    );
  } catch (err) {
    // The states ZooKeeper holds say which partition and replica did not come back.
    const states = (await partitionsOf(ctx)).map(
      (p) => `${ctx.topic}-${p.partition}: leader ${p.leader} replicas [${p.replicas.join()}] isr [${p.isr.join()}]`,
    );
    if (err instanceof Error) err.message = `${states.join('\n')}\n${err.message}`;
    throw err;
  }
}

/** Kill -9 a replica (the leader, or a follower) of a random partition, restart it, wait until it rejoined. */
function killReplica(role: 'leader' | 'follower'): Scenario {
  return {
    name: `kill -9 ${role}`,
    async run(ctx) {
      const recoveryMs: number[] = [];
      for (let round = 0; round < ctx.rounds; round++) {
        await randomMoment(ctx);
        const p = pick(await partitionsOf(ctx), ctx.random);
        const victim =
          role === 'leader'
            ? p.leader
            : pick(
                p.replicas.filter((r) => r !== p.leader),
                ctx.random,
              );
        const since = Date.now();
        await ctx.cluster.broker(victim).kill();
        // A leader's death is healed by an election; a follower's stalls acks=all until it has left the ISR.
        recoveryMs.push(role === 'leader' ? await recovery(ctx, p.partition, [victim], since) : await isrRecovery(ctx, p.partition, victim, since));
        ctx.log(`round ${round + 1}: killed broker ${victim} (${role} of ${ctx.topic}-${p.partition}), acks resumed after ${recoveryMs.at(-1)} ms`);
        await restart(ctx, victim);
        await waitWhole(ctx);
      }
      return { faults: ctx.rounds, recoveryMs };
    },
  };
}

/** The controller dies together with the leader of a partition it does not lead (alone, if it leads them all). */
const controllerAndLeader: Scenario = {
  name: 'kill -9 controller + leader',
  async run(ctx) {
    await randomMoment(ctx);
    const controller = (await ctx.cluster.waitForController()).brokerId;
    const parts = await partitionsOf(ctx);
    const other = parts.find((x) => x.leader !== controller) ?? parts[0]!;
    const victims = [...new Set([controller, other.leader])];
    const since = Date.now();
    await Promise.all(victims.map((id) => ctx.cluster.broker(id).kill()));
    await ctx.cluster.waitFor(`a new leader of ${ctx.topic}-${other.partition}`, RECOVERY_TIMEOUT_MS, async () => {
      const p = (await partitionsOf(ctx)).find((x) => x.partition === other.partition);
      return p !== undefined && p.leader >= 0 && !victims.includes(p.leader);
    });
    const electedMs = Date.now() - since;
    // Two of three brokers dead leave an ISR of one, below min.insync.replicas=2: acks=all
    // writes wait (NOT_ENOUGH_REPLICAS, retried) until a victim is back and has caught up.
    for (const id of victims) await restart(ctx, id);
    const restarted = Date.now();
    const after = await ctx.cluster.waitFor(`acknowledgements on ${ctx.topic}-${other.partition} after the restart`, RECOVERY_TIMEOUT_MS, () =>
      ctx.workload.firstAckAfter(restarted, other.partition),
    );
    const ms = restarted - since + after;
    ctx.log(
      `killed brokers ${victims.join(' and ')} (controller ${controller}): new leader of ${ctx.topic}-${other.partition} after ${electedMs} ms, acks resumed ${ms} ms after the kill (victims restarted)`,
    );
    await waitWhole(ctx);
    return { faults: victims.length, recoveryMs: [ms] };
  },
};

/** ZooKeeper stops mid-load and comes back; leaders keep serving meanwhile. */
const zookeeperRestart: Scenario = {
  name: 'ZooKeeper restart',
  async run(ctx) {
    await randomMoment(ctx);
    const since = Date.now();
    await ctx.cluster.stopZooKeeper();
    await ctx.workload.waitForAcks(500, RECOVERY_TIMEOUT_MS); // production goes on without ZooKeeper
    const down = Date.now() - since;
    await ctx.cluster.startZooKeeper();
    await waitWhole(ctx);
    // Production never stops (the data path needs no ZooKeeper): nothing to recover from.
    ctx.log(`ZooKeeper down for ${down} ms under load; 500 acknowledgements arrived meanwhile`);
    return { faults: 1, recoveryMs: [0] };
  },
};

/** A broker (not the controller) freezes past its session timeout, so its session expires, then thaws. */
const sessionExpiry: Scenario = {
  name: 'session expiry (SIGSTOP)',
  async run(ctx) {
    await randomMoment(ctx);
    const controller = (await ctx.cluster.waitForController()).brokerId;
    const victim = pick(
      ctx.cluster.brokers.map((b) => b.id).filter((id) => id !== controller),
      ctx.random,
    );
    const led = (await partitionsOf(ctx)).filter((p) => p.leader === victim).map((p) => p.partition);
    const since = Date.now();
    ctx.cluster.broker(victim).pause();
    const recoveryMs: number[] = [];
    try {
      await ctx.cluster.waitFor(
        `broker ${victim}'s registration to expire`,
        RECOVERY_TIMEOUT_MS,
        async () => !(await ctx.cluster.registeredIds()).includes(victim),
      );
      // Its partitions get new leaders; the others had it as a follower and wait for the ISR to drop it.
      for (const p of await partitionsOf(ctx)) {
        recoveryMs.push(led.includes(p.partition) ? await recovery(ctx, p.partition, [victim], since) : await isrRecovery(ctx, p.partition, victim, since));
      }
    } finally {
      ctx.cluster.broker(victim).resume();
    }
    await waitWhole(ctx);
    ctx.log(`broker ${victim} paused until its session expired (led ${led.length} partitions); acks resumed after ${recoveryMs.join(', ')} ms`);
    return { faults: 1, recoveryMs: [Math.max(...recoveryMs)] };
  },
};

/** The ISR of every partition, by partition. */
async function isrs(ctx: ScenarioContext): Promise<number[][]> {
  return (await partitionsOf(ctx)).map((p) => [...p.isr].sort());
}

/** One produce with acks=all by kafkajs without retries: the error type it gets, or 'NONE'. */
async function produceOnce(bootstrap: string, topic: string): Promise<string> {
  const kafka = new kafkajs.Kafka({ brokers: bootstrap.split(','), clientId: 'fault-probe', logLevel: kafkajs.logLevel.NOTHING, retry: { retries: 0 } });
  const producer = kafka.producer({ allowAutoTopicCreation: false, retry: { retries: 0 } });
  await producer.connect();
  try {
    await producer.send({ topic, acks: -1, timeout: 5000, messages: [{ value: 'probe', partition: 0 }] });
    return 'NONE';
  } catch (err) {
    const e = err as { type?: string; cause?: { type?: string } };
    return e.type ?? e.cause?.type ?? String(err);
  } finally {
    await producer.disconnect();
  }
}

/**
 * Followers cut off by freezing them (SIGSTOP) while broker 0 leads every partition: with one of
 * three gone the ISR shrinks and acks=all carries on with two; with both gone the ISR is the
 * leader alone, below min.insync.replicas=2, and a produce gets NOT_ENOUGH_REPLICAS; thawed, they
 * catch up and rejoin. Nothing acknowledged may be lost meanwhile.
 */
const followersCutOff: Scenario = {
  name: 'followers cut off (SIGSTOP), min ISR',
  assignment: [
    [0, 1, 2],
    [0, 2, 1],
    [0, 1, 2],
  ],
  async run(ctx) {
    await randomMoment(ctx);
    const since = Date.now();
    ctx.cluster.broker(1).pause();
    try {
      await ctx.cluster.waitFor('the ISRs to drop broker 1', RECOVERY_TIMEOUT_MS, async () => (await isrs(ctx)).every((isr) => !isr.includes(1)));
      const shrunkMs = Date.now() - since;
      await ctx.workload.waitForAcks(500, RECOVERY_TIMEOUT_MS); // two of three in sync: acks=all goes on
      ctx.cluster.broker(2).pause();
      try {
        await ctx.cluster.waitFor('the ISRs to be the leader alone', RECOVERY_TIMEOUT_MS, async () => (await isrs(ctx)).every((isr) => isr.join() === '0'));
        const answer = await produceOnce(ctx.cluster.broker(0).bootstrap, ctx.topic);
        ctx.log(`ISR shrank without broker 1 after ${shrunkMs} ms; with broker 2 frozen too a produce got ${answer}`);
        if (answer !== 'NOT_ENOUGH_REPLICAS') throw new Error(`a produce below min.insync.replicas got ${answer}, not NOT_ENOUGH_REPLICAS`);
      } finally {
        ctx.cluster.broker(2).resume();
      }
    } finally {
      ctx.cluster.broker(1).resume();
    }
    const thawed = Date.now();
    await waitWhole(ctx);
    const ms = await ctx.cluster.waitFor('acknowledgements after the thaw', RECOVERY_TIMEOUT_MS, () => ctx.workload.firstAckAfter(thawed));
    ctx.log(`followers thawed: whole again after ${Date.now() - thawed} ms, acks resumed after ${ms} ms`);
    return { faults: 2, recoveryMs: [ms] };
  },
};

export const SCENARIOS: Record<string, Scenario> = {
  'kill-leader': killReplica('leader'),
  'kill-follower': killReplica('follower'),
  'controller-and-leader': controllerAndLeader,
  'zookeeper-restart': zookeeperRestart,
  'session-expiry': sessionExpiry,
  'followers-cut-off': followersCutOff,
};

/** Runs one scenario on a fresh topic and judges it. */
export async function runScenario(
  cluster: Cluster,
  scenario: Scenario,
  opts: { rounds: number; random: () => number; log: (l: string) => void; topic: string },
): Promise<ScenarioResult> {
  const admin = new Admin({ bootstrapServers: cluster.bootstrap(), connectTimeoutMs: 30_000 });
  try {
    const shape = scenario.assignment ? { replicaAssignment: scenario.assignment } : { numPartitions: PARTITIONS, replicationFactor: 3 };
    const created = await admin.createTopics([{ name: opts.topic, ...shape, configs: { 'min.insync.replicas': '2' } }]);
    const err = created.get(opts.topic);
    if (err) throw new Error(`cannot create ${opts.topic}: ${err.message}`);
  } finally {
    await admin.close();
  }
  const workload = Workload.start(cluster.bootstrap(), opts.topic, PARTITIONS);
  const ctx: ScenarioContext = { cluster, workload, topic: opts.topic, partitions: PARTITIONS, rounds: opts.rounds, random: opts.random, log: opts.log };
  let injected: { faults: number; recoveryMs: number[] };
  try {
    await workload.waitForAcks(1000, RECOVERY_TIMEOUT_MS);
    await waitWhole(ctx);
    injected = await scenario.run(ctx);
    await workload.waitForAcks(500, RECOVERY_TIMEOUT_MS); // the load carries on afterwards
  } finally {
    await workload.stop();
  }
  const verdict = judge(workload.acks, workload.seen, await readLog(cluster.bootstrap(), opts.topic));
  return { scenario: scenario.name, ...injected, ...verdict };
}

/** The table the suite prints. */
export function formatTable(rows: readonly ScenarioResult[]): string {
  const fmt = (ms: number[]): string => {
    if (ms.length === 0) return '-';
    const s = [...ms].sort((a, b) => a - b);
    return `${(s[Math.floor(s.length / 2)]! / 1000).toFixed(1)} s median, ${(s.at(-1)! / 1000).toFixed(1)} s max`;
  };
  const lines = rows.map((r) => `| ${r.scenario} | ${r.faults} | ${r.acknowledged} | ${r.lost} | ${r.duplicated} | ${r.vanished} | ${fmt(r.recoveryMs)} |`);
  return ['| scenario | faults | acknowledged | lost | duplicated | seen then vanished | time to recover |', '|---|---|---|---|---|---|---|', ...lines].join(
    '\n',
  );
}
