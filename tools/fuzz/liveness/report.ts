/** What the liveness soak found, how it is printed (a table per part), and its verdict. */
import type { LatencySummary } from './histogram.js';

const MB = 1024 * 1024;

export interface AttackRecord {
  round: number;
  name: string;
  broker: number;
  /** ms since the attacks began. */
  atMs: number;
  ms: number;
  ok: boolean;
  summary: string;
}

export interface BrokerFigures {
  id: number;
  rssStartBytes: number;
  rssPeakBytes: number;
  rssEndBytes: number | null;
  /** The worst event-loop delay the broker reported itself (debug log), over the attacks. */
  worstLoopDelayMs: number;
  sessionExpiredLines: number;
  controllerFailureLines: number;
  warnings: number;
  lastWarnings: string[];
  /** null while running; otherwise how it ended (killed past the RSS kill limit, crashed). */
  exited: string | null;
  stoppedCleanly: boolean | null;
}

export interface TimedEvent {
  /** s since the attacks began. */
  atS: number;
  kind: string;
  detail: string;
  /** The attack in flight and the one before it, when it ended within two session timeouts. */
  during: string;
}

export interface LivenessReport {
  seed: number;
  plannedAttackMs: number;
  minRounds: number;
  attackMs: number;
  durationMs: number;
  rounds: number;
  attacks: AttackRecord[];
  brokers: BrokerFigures[];
  events: TimedEvent[];
  counts: { session: number; leader: number; controller: number; isr: number };
  load: {
    acknowledged: number;
    notAcknowledged: number;
    stored: number;
    lost: number;
    duplicated: number;
    vanished: number;
    examples: string[];
    resumedAfterAttacks: boolean;
  };
  latency: { name: string; baseline: LatencySummary; attack: LatencySummary; failed: number; lastError: string }[];
  group: { consumed: number; rebalancesDuringAttacks: number; caughtUp: boolean; behind: string; errors: number; lastError: string };
  fuzz: { inputs: number; skipped: number; connections: number; closedByBroker: number; connectFailures: number };
  harnessLoopDelayMaxMs: number;
  bounds: { rssBoundBytes: number; p99BoundMs: number };
}

export const mb = (b: number | null): string => (b === null ? '-' : `${Math.round(b / MB)} MB`);
const s1 = (ms: number): string => `${(ms / 1000).toFixed(1)} s`;

/** Attacks by name: how many, how many answered in time, the slowest, and one example. */
function attackRows(r: LivenessReport): string[] {
  const by = new Map<string, AttackRecord[]>();
  for (const a of r.attacks) by.set(a.name, [...(by.get(a.name) ?? []), a]);
  const rows = [...by].map(([name, xs]) => {
    const slowest = xs.reduce((m, x) => (x.ms > m.ms ? x : m));
    const failed = xs.find((x) => !x.ok);
    return `| ${name} | ${xs.length} | ${xs.filter((x) => x.ok).length} | ${Math.round(slowest.ms)} ms | ${(failed ?? slowest).summary} |`;
  });
  return ['| attack | sent | answered/held | slowest | example (a failure if any, else the slowest) |', '|---|---|---|---|---|', ...rows];
}

export function formatReport(r: LivenessReport): string[] {
  const lines = [
    `seed ${r.seed}; ${r.rounds} rounds of attacks in ${s1(r.attackMs)} (planned ${s1(r.plannedAttackMs)}, ${r.minRounds} rounds at least); whole run ${s1(r.durationMs)}`,
    '',
    ...attackRows(r),
    '',
    '| broker | RSS start | RSS peak | RSS end | worst loop delay (own) | session-expired lines | controller failures | warnings | end |',
    '|---|---|---|---|---|---|---|---|---|',
    ...r.brokers.map(
      (b) =>
        `| ${b.id} | ${mb(b.rssStartBytes)} | ${mb(b.rssPeakBytes)}${b.rssPeakBytes > r.bounds.rssBoundBytes ? ' OVER' : ''} | ${mb(b.rssEndBytes)} | ${b.worstLoopDelayMs} ms | ${b.sessionExpiredLines} | ${b.controllerFailureLines} | ${b.warnings} | ${b.exited ?? (b.stoppedCleanly === false ? 'running (killed 5 s after SIGTERM)' : 'running')} |`,
    ),
    '',
    '| side client | baseline p50 / p99 / max | attacks p50 / p99 / max | samples (attacks) | failed |',
    '|---|---|---|---|---|',
    ...r.latency.map(
      (l) =>
        `| ${l.name} | ${l.baseline.p50Ms} / ${l.baseline.p99Ms} / ${l.baseline.maxMs} ms | ${l.attack.p50Ms} / ${l.attack.p99Ms}${l.attack.p99Ms > r.bounds.p99BoundMs ? ' OVER' : ''} / ${l.attack.maxMs} ms | ${l.attack.count} | ${l.failed}${l.lastError ? ` (${l.lastError.slice(0, 80)})` : ''} |`,
    ),
    '',
    `load (2 idempotent acks=all producers, RF 3, min.insync.replicas 2): ${r.load.acknowledged} acknowledged, ${r.load.lost} lost, ${r.load.duplicated} duplicated, ${r.load.vanished} seen then vanished, ${r.load.notAcknowledged} given up by a producer; ${r.load.stored} records stored${r.load.resumedAfterAttacks ? '' : '; the load did NOT carry on after the attacks'}`,
    ...r.load.examples.map((e) => `  ${e}`),
    `consumer group: ${r.group.consumed} records consumed, ${r.group.rebalancesDuringAttacks} rebalances during the attacks, caught up at the end: ${r.group.caughtUp ? 'yes' : `NO (${r.group.behind})`}${r.group.errors ? `; ${r.group.errors} errors, last: ${r.group.lastError}` : ''}`,
    `ZooKeeper: ${r.counts.session} registration changes (session expiries), ${r.counts.leader} leader or leader-epoch changes of the load's partitions, ${r.counts.controller} controller changes, ${r.counts.isr} ISR changes`,
    ...r.events.slice(0, 20).map((e) => `  +${e.atS.toFixed(1)} s ${e.kind}: ${e.detail}${e.during ? ` (${e.during})` : ''}`),
    ...(r.events.length > 20 ? [`  ... ${r.events.length - 20} more`] : []),
    `fuzz stream: ${r.fuzz.inputs} inputs on ${r.fuzz.connections} connections (${r.fuzz.closedByBroker} closed by the broker, ${r.fuzz.connectFailures} could not connect), ${r.fuzz.skipped} not sent (denied APIs)`,
    `harness's own worst event-loop delay: ${r.harnessLoopDelayMaxMs} ms`,
  ];
  for (const b of r.brokers) for (const w of b.lastWarnings) lines.push(`broker ${b.id} warning: ${w}`);
  return lines;
}

/** The issue's assertions, one item per failure (empty: the cluster passed). */
export function verdict(r: LivenessReport): string[] {
  const problems: string[] = [];
  if (r.load.lost > 0) problems.push(`${r.load.lost} acknowledged records lost`);
  if (r.load.duplicated > 0) problems.push(`${r.load.duplicated} records duplicated`);
  if (r.load.vanished > 0) problems.push(`${r.load.vanished} records seen by a consumer then vanished`);
  if (r.load.acknowledged === 0) problems.push('nothing acknowledged: the load did not run');
  if (!r.load.resumedAfterAttacks) problems.push('the load did not carry on after the attacks');
  if (r.counts.session > 0) problems.push(`${r.counts.session} ZooKeeper registration changes (a broker's session expired)`);
  if (r.counts.leader > 0) problems.push(`${r.counts.leader} leader or leader-epoch changes of the load's partitions`);
  if (r.counts.controller > 0) problems.push(`${r.counts.controller} controller changes`);
  for (const b of r.brokers) {
    if (b.rssPeakBytes > r.bounds.rssBoundBytes) problems.push(`broker ${b.id} RSS peak ${mb(b.rssPeakBytes)} over ${mb(r.bounds.rssBoundBytes)}`);
    if (b.exited !== null) problems.push(`broker ${b.id} ${b.exited}`);
  }
  for (const l of r.latency) {
    if (l.attack.count === 0) problems.push(`${l.name}: no latency samples during the attacks`);
    else if (l.attack.p99Ms > r.bounds.p99BoundMs) problems.push(`${l.name} p99 ${l.attack.p99Ms} ms over ${r.bounds.p99BoundMs} ms`);
  }
  if (!r.group.caughtUp) problems.push(`consumer group did not catch up (${r.group.behind})`);
  if (r.rounds === 0) problems.push('no round of attacks ran');
  return problems;
}
