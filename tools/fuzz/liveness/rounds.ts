/**
 * One round of the soak: every attack of issue 21 in turn against one broker (the brokers take
 * turns), then one of the cheap bombs of tools/fuzz/bombs.ts. Each is bounded by the attack
 * timeout and recorded with its time window, so the report can say which attack was in flight
 * when ZooKeeper saw a session or a leader change.
 *
 * A bomb goes where it can do harm in a cluster: one that writes to its topic goes to that
 * topic's leader (the soak creates the topic beforehand, on the broker `bombTopicOwner` names),
 * one that creates topics or partitions to the controller (any other broker answers
 * NOT_CONTROLLER), the others to the round's broker.
 */
import { bombSet, type Bomb } from '../bombs.js';
import { describeConfigsRepeated, describeConfigsUnread, idleConnections, metadataAutoCreate, type AttackOutcome } from './attacks.js';
import type { LivenessOptions } from './options.js';
import type { AttackRecord } from './report.js';

export interface RoundTarget {
  id: number;
  port: number;
}

/** Bombs that produce to a topic named after themselves, which must be led by the broker attacked. */
export const TOPIC_BOMBS: ReadonlySet<string> = new Set(['legacy-gzip-100m', 'zstd-2g-list-offsets']);
/** Bombs whose requests only the controller acts on. */
const CONTROLLER_BOMBS: ReadonlySet<string> = new Set(['create-partitions-25k', 'create-topics-25k']);

/** The broker the soak creates a topic bomb's topic on (the k-th of `bombs`: broker k mod n). */
export function bombTopicOwner(bombs: readonly string[], name: string, brokers: number): number {
  return bombs.indexOf(name) % brokers;
}

/** Resolves with the attack's outcome, or a timeout outcome when it is not done by `ms`. */
async function bounded(p: Promise<AttackOutcome>, ms: number): Promise<AttackOutcome> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<AttackOutcome>((r) => (timer = setTimeout(() => r({ ok: false, summary: `not done in ${ms} ms` }), ms)));
  try {
    return await Promise.race([p, late]);
  } finally {
    clearTimeout(timer);
  }
}

async function runBomb(bomb: Bomb, port: number, deadlineMs: number): Promise<AttackOutcome> {
  const notes: string[] = [];
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<void>((r) => (timer = setTimeout(r, deadlineMs)));
  try {
    const run = await bomb.run({ host: '127.0.0.1', port, scale: 'short', deadline, deadlineMs, note: (s) => notes.push(s) });
    run.conn?.close();
    run.cleanup?.();
    return { ok: run.failures.length === 0, summary: [...notes, ...run.answers, ...run.failures].join('; ').slice(0, 300) };
  } finally {
    clearTimeout(timer);
  }
}

export class Rounds {
  readonly records: AttackRecord[] = [];
  private readonly t0 = Date.now();
  private readonly bombs: Bomb[];

  constructor(
    private readonly opts: LivenessOptions,
    private readonly ports: readonly number[],
    private readonly alive: (id: number) => boolean,
    private readonly controller: () => number | null,
  ) {
    const all = bombSet('short');
    this.bombs = opts.bombs.map((n) => {
      const b = all.find((x) => x.name === n);
      if (!b) throw new Error(`unknown bomb ${n}; known: ${all.map((x) => x.name).join(', ')}`);
      return b;
    });
  }

  private async attack(round: number, name: string, target: RoundTarget, run: () => Promise<AttackOutcome>, limitMs: number): Promise<void> {
    if (!this.alive(target.id)) return;
    const start = Date.now();
    const out = await bounded(run(), limitMs);
    const rec: AttackRecord = { round, name, broker: target.id, atMs: start - this.t0, ms: Date.now() - start, ok: out.ok, summary: out.summary };
    this.records.push(rec);
    this.opts.log(`round ${round} broker ${target.id} ${name}: ${out.summary}`);
  }

  async run(round: number, target: RoundTarget): Promise<void> {
    const o = this.opts;
    const names = Array.from({ length: o.f1Topics }, (_, i) => `liveness-f1-r${round}-${i}`);
    const t = o.attackTimeoutMs;
    await this.attack(round, 'F1 Metadata auto-create', target, () => metadataAutoCreate(target.port, names, t), t + 1000);
    await this.attack(round, 'F2 DescribeConfigs', target, () => describeConfigsRepeated(target.port, target.id, o.f2Names, t), t + 1000);
    await this.attack(
      round,
      'F2 DescribeConfigs unread',
      target,
      () => describeConfigsUnread(target.port, target.id, o.f2Names, o.f2Unread, o.holdMs),
      o.holdMs + t,
    );
    await this.attack(round, 'F5 idle connections', target, () => idleConnections(target.port, o.idleConnections, o.holdMs, 10_000), o.holdMs + t);
    const bomb = this.bombs[round % Math.max(1, this.bombs.length)];
    if (bomb) {
      const id = TOPIC_BOMBS.has(bomb.name)
        ? bombTopicOwner(o.bombs, bomb.name, this.ports.length)
        : CONTROLLER_BOMBS.has(bomb.name)
          ? (this.controller() ?? target.id)
          : target.id;
      const to = { id, port: this.ports[id]! };
      await this.attack(round, `bomb ${bomb.name}`, to, () => runBomb(bomb, to.port, Math.min(t, 30_000)), t + 5000);
    }
  }

  /**
   * Which attacks an event at `atMs` (epoch ms) may be due to: the one in flight, and the one
   * before it when that ended within `graceMs` (a session expires a timeout after the loop was
   * held, and a held loop delays the next attack too).
   */
  attribute(atMs: number, graceMs: number): string {
    const rel = atMs - this.t0;
    const i = this.records.findIndex((r) => r.atMs <= rel && rel <= r.atMs + r.ms);
    const name = (r: AttackRecord): string => `round ${r.round} ${r.name} on broker ${r.broker}`;
    const before = (j: number): AttackRecord | undefined => {
      const r = this.records[j];
      return r && rel - (r.atMs + r.ms) <= graceMs ? r : undefined;
    };
    if (i >= 0) {
      const prev = before(i - 1);
      return `during ${name(this.records[i]!)}${prev ? `, after ${name(prev)}` : ''}`;
    }
    // between attacks, or after the last one: the last one that ended before the event
    let last = -1;
    this.records.forEach((r, j) => r.atMs + r.ms <= rel && (last = j));
    const prev = before(last);
    return prev ? `after ${name(prev)}` : '';
  }

  get startedAt(): number {
    return this.t0;
  }
}
