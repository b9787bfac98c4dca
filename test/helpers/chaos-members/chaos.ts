/**
 * The KIP-848 chaos run (issue 24): a group of five members (child processes: Fjord's client and
 * @platformatic/kafka, alternating) over a 12-partition topic on one broker; while a producer
 * runs, members are killed -9 and restarted at random (seeded). Checked all along and at the end:
 * - no record skipped: every acknowledged record (values `p:seq`, a sequence per partition) is
 *   consumed by some member once the chaos ends and the group settles;
 * - never two owners: the members report each change of their partitions with a CLOCK_MONOTONIC
 *   time; replayed in time order (a killed member's partitions released at its kill), no
 *   partition is owned by two live members at once, and no member consumes a record of a
 *   partition it does not own;
 * - committed offsets only go forward (OffsetFetch polled all along), and reach the end of every
 *   partition once settled.
 * Used by test/interop/kip848-chaos.test.ts (short) and test/faults/main.ts (long).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { hrtime } from 'node:process';
import { fileURLToPath } from 'node:url';
import { startTestBroker } from '../broker.js';
import { kip848BrokerProps } from '../kip848-props.js';
import { Admin, Producer } from '../../../src/client/index.js';
import { waitFor } from '../wait-for.js';

export const CHAOS_TOPIC = 'kip848-chaos';
const GROUP = 'kip848-chaos-group';
const PARTITIONS = 12;
const SLOTS = 5;
const KINDS = ['fjord', 'platformatic'] as const;
type Kind = (typeof KINDS)[number];
const SCRIPTS: Record<Kind, string> = {
  fjord: fileURLToPath(new URL('./fjord-member.ts', import.meta.url)),
  platformatic: fileURLToPath(new URL('./platformatic-member.ts', import.meta.url)),
};

export interface ChaosOptions {
  /** How long members are killed and restarted. */
  seconds: number;
  /** Picks the kill and restart times and the victims (seeded: the same seed, the same choices). */
  random(): number;
  log(line: string): void;
  /** Which clients the members run (default: both, alternating). */
  kinds?: readonly Kind[];
  /** How long the group may take to consume everything after the chaos (default 60 s). */
  settleMs?: number;
}

export interface ChaosResult {
  acked: number;
  consumed: number;
  /** Members killed during the chaos (not counting the ones stopped at the end). */
  kills: number;
  starts: number;
  ownershipChanges: number;
  commitSamples: number;
  /** Empty when every check held; otherwise what broke, first ones first. */
  violations: string[];
}

/** One process of a member slot (a restart is a new incarnation, a new member of the group). */
interface Incarnation {
  name: string;
  kind: Kind;
  child: ChildProcess;
  ready: boolean;
  exited: boolean;
  /** CLOCK_MONOTONIC ns when the harness sent SIGKILL. */
  killedAt: bigint | null;
  /** Partitions it owns by its own reports, in line order (for the record check). */
  owned: Set<number>;
  stderr: string;
}

/** Who reports ownership, as overlaps() needs it. */
export interface Owner {
  name: string;
  /** CLOCK_MONOTONIC ns when it was killed, or null. */
  killedAt: bigint | null;
}

export interface OwnEvent {
  ts: bigint;
  who: Owner;
  /** The partitions owned from ts on; null for the kill. */
  partitions: number[] | null;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const until = (what: string, deadlineMs: number, cond: () => boolean | Promise<boolean>, explain: () => string) =>
  waitFor(what, deadlineMs, cond, { pollMs: 50, explain });

export async function runKip848Chaos(opts: ChaosOptions): Promise<ChaosResult> {
  const kinds = opts.kinds ?? KINDS;
  const random = opts.random;
  const violations: string[] = [];
  const events: OwnEvent[] = [];
  const seen = new Set<string>();
  const acked = new Set<string>();
  /** Per partition, one past the highest acknowledged offset: where the commits must get to. */
  const ackedEnd = new Map<number, bigint>();
  const slots: (Incarnation | null)[] = Array.from({ length: SLOTS }, () => null);
  const everyone: Incarnation[] = [];
  let kills = 0;
  let commitSamples = 0;

  const b = await startTestBroker(kip848BrokerProps({ heartbeatMs: 1000, sessionMs: 6000, offsetsPartitions: 1 }));
  const admin = new Admin({ bootstrapServers: b.bootstrap });
  // Every commit the coordinator accepts, seen from inside the broker: one that lowers a
  // partition's offset is named with its member (the client id tells the process), epoch and
  // partitions, which the polled OffsetFetch below cannot say. CHAOS_TRACE=1 prints them all.
  const gc = b.broker.services.groupCoordinator;
  const commitOffsets = gc.commitOffsets.bind(gc);
  const accepted = new Map<number, bigint>();
  gc.commitOffsets = async (req) => {
    const member = gc.runtime.activeShards()[0]?.consumerGroups.get(req.groupId)?.members.get(req.memberId);
    const who = member
      ? `${member.clientId} (epoch ${req.generationId}, member epoch ${member.memberEpoch}, owning [${[...member.assigned.values()].join(';')}], revoking [${[...member.pendingRevocation.values()].join(';')}])`
      : `${req.memberId} (epoch ${req.generationId}, not a member)`;
    const response = await commitOffsets(req);
    for (const t of req.topics) {
      for (const p of t.partitions) {
        const code = response.find((r) => r.name === t.name)?.partitions.find((r) => r.partitionIndex === p.partitionIndex)?.errorCode;
        if (process.env.CHAOS_TRACE)
          process.stderr.write(`${hrtime.bigint()} commit ${t.name}-${p.partitionIndex}=${p.committedOffset} by ${who}: error ${code}\n`);
        if (t.name !== CHAOS_TOPIC || code !== 0) continue;
        const before = accepted.get(p.partitionIndex) ?? -1n;
        if (p.committedOffset < before)
          violations.push(`${CHAOS_TOPIC}-${p.partitionIndex}: commit of ${p.committedOffset} after ${before} accepted, by ${who}`);
        else accepted.set(p.partitionIndex, p.committedOffset);
      }
    }
    return response;
  };
  const producer = new Producer({ bootstrapServers: b.bootstrap, lingerMs: 5 });

  const start = (slot: number): Incarnation => {
    const kind = kinds[slot % kinds.length]!;
    const child = spawn(process.execPath, ['--import', 'tsx', SCRIPTS[kind], b.bootstrap, GROUP, CHAOS_TOPIC], { stdio: ['ignore', 'pipe', 'pipe'] });
    const who: Incarnation = {
      name: `${kind}#${everyone.length}(slot ${slot}, pid ${child.pid})`,
      kind,
      child,
      ready: false,
      exited: false,
      killedAt: null,
      owned: new Set(),
      stderr: '',
    };
    everyone.push(who);
    slots[slot] = who;
    child.stderr!.on('data', (d: Buffer) => {
      who.stderr = (who.stderr + d.toString()).slice(-2000);
    });
    createInterface({ input: child.stdout! }).on('line', (line) => {
      if (process.env.CHAOS_TRACE && !line.includes('"rec"')) process.stderr.write(`${hrtime.bigint()} ${who.name} pid ${child.pid} ${line.slice(0, 200)}\n`);
      const msg = JSON.parse(line) as { e: string; ts?: string; p?: number[]; r?: [number, string, string][] };
      if (msg.e === 'ready') who.ready = true;
      else if (msg.e === 'own') {
        who.owned = new Set(msg.p);
        events.push({ ts: BigInt(msg.ts!), who, partitions: msg.p! });
      } else if (msg.e === 'rec') {
        for (const [p, offset, value] of msg.r!) {
          if (!who.owned.has(p)) violations.push(`${who.name} consumed ${CHAOS_TOPIC}-${p}@${offset} while owning only [${[...who.owned]}]`);
          seen.add(value);
        }
      }
    });
    child.on('exit', (code, signal) => {
      who.exited = true;
      if (who.killedAt === null) violations.push(`${who.name} exited by itself (${code ?? signal}): ${who.stderr.trim().split('\n').slice(-3).join(' | ')}`);
    });
    return who;
  };
  const kill = (slot: number) => {
    const who = slots[slot]!;
    who.killedAt = hrtime.bigint();
    events.push({ ts: who.killedAt, who, partitions: null });
    if (process.env.CHAOS_TRACE) process.stderr.write(`${who.killedAt} KILL ${who.name} pid ${who.child.pid}\n`);
    who.child.kill('SIGKILL');
    slots[slot] = null;
  };
  const explain = () =>
    JSON.stringify({
      acked: acked.size,
      consumed: [...acked].filter((v) => seen.has(v)).length,
      missingExamples: [...acked].filter((v) => !seen.has(v)).slice(0, 5),
      members: slots.map((w) => w && [w.name, w.ready, [...w.owned].join(',')]),
    });

  // The topic first: a record sent before would create it with one partition.
  const created = await admin.createTopics([{ name: CHAOS_TOPIC, numPartitions: PARTITIONS, replicationFactor: 1 }]).catch((err: Error) => err);
  const createError = created instanceof Map ? created.get(CHAOS_TOPIC) : created;
  if (createError) {
    await Promise.all([admin.close(), producer.close()]).catch(() => undefined);
    await b.stop();
    throw new Error(`creating ${CHAOS_TOPIC}: ${createError.message}`);
  }
  let producing = true;
  let watching = true;
  const production = (async () => {
    const seq = new Array<number>(PARTITIONS).fill(0);
    while (producing) {
      await Promise.all(
        Array.from({ length: PARTITIONS }, async (_, p) => {
          const value = `${p}:${seq[p]!++}`;
          try {
            const md = await producer.send({ topic: CHAOS_TOPIC, partition: p, value });
            acked.add(value);
            if (md.offset + 1n > (ackedEnd.get(p) ?? 0n)) ackedEnd.set(p, md.offset + 1n);
          } catch {
            // not acknowledged: not required to be consumed
          }
        }),
      );
      await sleep(100); // a steady trickle (about 120 records a second), not a flood
    }
  })();
  const committed = new Map<number, bigint>();
  const commitWatch = (async () => {
    while (watching) {
      const offsets = await admin.listGroupOffsets(GROUP).catch(() => null);
      if (offsets) commitSamples++;
      for (const [p, o] of offsets?.get(CHAOS_TOPIC) ?? []) {
        const before = committed.get(p);
        if (before !== undefined && o.offset < before) violations.push(`${CHAOS_TOPIC}-${p}: committed offset went back from ${before} to ${o.offset}`);
        if (before === undefined || o.offset > before) committed.set(p, o.offset);
      }
      await sleep(200);
    }
  })();

  try {
    for (let slot = 0; slot < SLOTS; slot++) start(slot);
    await until(
      'five members owning all twelve partitions',
      60_000,
      () => slots.reduce((n, w) => n + (w?.owned.size ?? 0), 0) === PARTITIONS && slots.every((w) => w?.owned.size),
      explain,
    );
    opts.log(`chaos: five members own the twelve partitions; killing and restarting for ${opts.seconds} s`);

    const chaosEnd = Date.now() + opts.seconds * 1000;
    while (Date.now() < chaosEnd) {
      await sleep(500 + random() * 2000);
      const slot = Math.floor(random() * SLOTS);
      const alive = slots.filter((w) => w !== null).length;
      if (slots[slot] === null) start(slot);
      else if (alive > 2) {
        kill(slot);
        kills++;
      }
    }
    for (let slot = 0; slot < SLOTS; slot++) if (slots[slot] === null) start(slot);
    producing = false;
    await production;
    opts.log(`chaos: ${kills} kills, ${everyone.length} starts, ${acked.size} records acknowledged; settling`);
    const settleMs = opts.settleMs ?? 60_000;
    await until('every acknowledged record consumed', settleMs, () => [...acked].every((v) => seen.has(v)), explain);
    await until(
      'the committed offsets at the end of every partition',
      settleMs,
      () => [...ackedEnd].every(([p, end]) => (committed.get(p) ?? -1n) >= end),
      () =>
        JSON.stringify({
          ackedEnd: Object.fromEntries([...ackedEnd].map(([p, o]) => [p, String(o)])),
          committed: Object.fromEntries([...committed].map(([p, o]) => [p, String(o)])),
        }),
    );
  } catch (err) {
    violations.push((err as Error).message);
  } finally {
    producing = false;
    watching = false;
    for (let slot = 0; slot < SLOTS; slot++) if (slots[slot] !== null) kill(slot);
    await Promise.all([production, commitWatch]);
    await Promise.all(everyone.map((w) => (w.exited ? undefined : new Promise((r) => w.child.once('exit', r)))));
    await producer.close().catch(() => undefined);
    await admin.close().catch(() => undefined);
    await b.stop();
  }
  violations.push(...overlaps(events));
  return {
    acked: acked.size,
    consumed: [...acked].filter((v) => seen.has(v)).length,
    kills,
    starts: everyone.length,
    ownershipChanges: events.filter((e) => e.partitions !== null).length,
    commitSamples,
    violations,
  };
}

/** Replays the members' reports in time order: each partition has at most one live owner at a time. */
export function overlaps(events: readonly OwnEvent[]): string[] {
  const found: string[] = [];
  const owner = new Map<number, { who: Owner; since: bigint }>();
  const holding = new Map<Owner, Set<number>>();
  for (const e of [...events].sort((x, y) => (x.ts < y.ts ? -1 : x.ts > y.ts ? 1 : 0))) {
    // A report written after the kill signal went out (the process had not died yet) counts for nothing.
    if (e.partitions !== null && e.who.killedAt !== null && e.ts > e.who.killedAt) continue;
    const before = holding.get(e.who) ?? new Set<number>();
    const after = new Set(e.partitions ?? []);
    for (const p of before) if (!after.has(p) && owner.get(p)?.who === e.who) owner.delete(p);
    for (const p of after) {
      const o = owner.get(p);
      if (o !== undefined && o.who !== e.who && found.length < 20)
        found.push(`${CHAOS_TOPIC}-${p} owned by ${o.who.name} (since ${o.since}) and ${e.who.name} (from ${e.ts}) at once`);
      if (o === undefined || o.who !== e.who) owner.set(p, { who: e.who, since: e.ts });
    }
    holding.set(e.who, after);
  }
  return found;
}
