/** What a fuzz run found, and how it is printed and judged (the figures issue 9 asks for). */
import type { MutationKind } from './mutate.js';
import type { TrickleResult } from './bombs.js';
import type { BrokerMemory } from './broker-process.js';

const MB = 1024 * 1024;

export interface BombOutcome {
  name: string;
  description: string;
  ok: boolean;
  reasons: string[];
  durationMs: number;
  timedOut: boolean;
  brokerSurvived: boolean;
  brokerExit?: string;
  sameConnectionProbe: 'answered' | 'closed by broker' | 'none' | string;
  freshProbe: 'answered' | string;
  rssPeakBytes: number | null;
  rssAfterBytes: number | null;
  loopDelayMs: number | null;
  probeLatencyMaxMs: number;
  answers: string[];
  notes: string[];
}

export interface SideRates {
  produced: number;
  consumed: number;
}

export interface FuzzReport {
  seed: number;
  inputsSent: number;
  mutations: Partial<Record<MutationKind, number>>;
  connectionsOpened: number;
  connectionsClosedByBroker: number;
  connectionsLeftOutOfSync: number;
  sameConnectionProbes: { answered: number; closedByBroker: number; parked: number; failed: number };
  freshProbes: { answered: number; failed: number };
  probeFailures: string[];
  probeLatencyMaxMs: number;
  probeLatencyP99Ms: number;
  probeLatencyP50Ms: number;
  brokerRss: { startBytes: number | null; minBytes: number | null; fuzzPeakBytes: number | null; peakBytes: number | null; endBytes: number | null };
  /** The last broker's own process.memoryUsage(): peaks over the run and the last report. */
  brokerMemory: { peak: BrokerMemory; end: BrokerMemory | null } | null;
  worstLoopDelayMs: { broker: number | null; fuzzPhaseBroker: number | null };
  crashes: { afterInputs: number; phase: string; exit: string; reproFile: string | null }[];
  bombs: BombOutcome[];
  trickle: (TrickleResult & { ok: boolean; reason: string }) | null;
  side: {
    baseline: SideRates;
    fuzz: SideRates | null;
    bombs: SideRates | null;
    keptDuringFuzz: boolean | null;
    keptDuringBombs: boolean | null;
    errors: number;
    lastError: string;
  } | null;
  /** Error lines the broker logged (the last ones), for the crashes and failures above. */
  brokerErrors: string[];
  /** Log directories a broker took offline (its error line for each), over every broker of the run. */
  logDirsOffline: string[];
  brokerUpAtEnd: boolean;
  brokerStoppedCleanly: boolean | null;
  durationMs: number;
}

export function mb(bytes: number | null): string {
  return bytes === null ? '-' : `${Math.round(bytes / MB)} MB`;
}

/** The figures the issue asks for, as lines. */
export function formatReport(r: FuzzReport): string[] {
  const lines = [
    `seed ${r.seed}; ${r.inputsSent} inputs sent on ${r.connectionsOpened} connections in ${(r.durationMs / 1000).toFixed(1)} s`,
    `connections closed by the broker: ${r.connectionsClosedByBroker}; left waiting for a frame's rest: ${r.connectionsLeftOutOfSync}`,
    `probes on the same connection: ${r.sameConnectionProbes.answered} answered, ${r.sameConnectionProbes.closedByBroker} closed by broker, ${r.sameConnectionProbes.parked} behind a parked request, ${r.sameConnectionProbes.failed} FAILED`,
    `probes on a fresh connection: ${r.freshProbes.answered} answered, ${r.freshProbes.failed} failed; client-side latency max ${r.probeLatencyMaxMs} ms, p99 ${r.probeLatencyP99Ms} ms, p50 ${r.probeLatencyP50Ms} ms`,
    `broker RSS: start ${mb(r.brokerRss.startBytes)}, min ${mb(r.brokerRss.minBytes)}, peak while fuzzing ${mb(r.brokerRss.fuzzPeakBytes)}, peak ${mb(r.brokerRss.peakBytes)}, end ${mb(r.brokerRss.endBytes)}`,
    `worst event-loop delay (broker's own): ${r.worstLoopDelayMs.broker ?? '-'} ms (while fuzzing ${r.worstLoopDelayMs.fuzzPhaseBroker ?? '-'} ms)`,
  ];
  if (r.brokerMemory) {
    const m = (x: BrokerMemory): string =>
      `heap used ${mb(x.heapUsed)} of ${mb(x.heapTotal)}, external ${mb(x.external)} (array buffers ${mb(x.arrayBuffers)})`;
    lines.push(`broker memory (its own report, last broker): peak ${m(r.brokerMemory.peak)}${r.brokerMemory.end ? `; end ${m(r.brokerMemory.end)}` : ''}`);
  }
  if (r.side) {
    const f = (x: SideRates): string => `${x.produced.toFixed(0)}/${x.consumed.toFixed(0)}`;
    lines.push(
      `side producer/consumer records/s: baseline ${f(r.side.baseline)}${r.side.fuzz ? `, fuzzing ${f(r.side.fuzz)}` : ''}${r.side.bombs ? `, bombs ${f(r.side.bombs)}` : ''}; kept throughput:${r.side.keptDuringFuzz === null ? '' : ` fuzzing ${r.side.keptDuringFuzz ? 'yes' : 'NO'}`}${r.side.keptDuringBombs === null ? '' : `, bombs ${r.side.keptDuringBombs ? 'yes' : 'NO'}`}${r.side.errors ? `; ${r.side.errors} errors, last: ${r.side.lastError}` : ''}`,
    );
  }
  for (const c of r.crashes)
    lines.push(`CRASH during ${c.phase} after ${c.afterInputs} inputs: ${c.exit}${c.reproFile ? ` (recent inputs: ${c.reproFile})` : ''}`);
  for (const f of r.probeFailures.slice(0, 10)) lines.push(`probe failure: ${f}`);
  for (const e of r.brokerErrors.slice(-5)) lines.push(`broker error: ${e}`);
  lines.push(r.logDirsOffline.length === 0 ? 'log dirs offline: none' : `LOG DIR OFFLINE (${r.logDirsOffline.length}): ${r.logDirsOffline.join(' | ')}`);
  for (const b of r.bombs) {
    lines.push(
      `bomb ${b.name}: ${b.ok ? 'ok' : 'FAILED'} — ${b.brokerSurvived ? 'broker survived' : 'broker DOWN'}, RSS peak ${mb(b.rssPeakBytes)} (after ${mb(b.rssAfterBytes)}), loop delay ${b.loopDelayMs ?? '-'} ms, client wait max ${b.probeLatencyMaxMs} ms, same-connection probe ${b.sameConnectionProbe}; ${[...b.answers, ...b.reasons].join('; ')}`,
    );
  }
  if (r.trickle) lines.push(`bomb trickle: ${r.trickle.ok ? 'ok' : 'FAILED'} — ${r.trickle.reason}`);
  lines.push(
    `broker up at end: ${r.brokerUpAtEnd ? 'yes' : 'NO'}${r.brokerStoppedCleanly === null ? '' : `; stopped on SIGTERM: ${r.brokerStoppedCleanly ? 'yes' : 'NO'}`}`,
  );
  return lines;
}

/** What went wrong, one item per problem (empty: the broker passed). */
export function verdict(r: FuzzReport, opts: { rssBoundBytes: number }): string[] {
  const problems: string[] = [];
  if (!r.brokerUpAtEnd) problems.push('broker not up at the end');
  if (r.crashes.length > 0) problems.push(`${r.crashes.length} broker crash(es)`);
  if (r.logDirsOffline.length > 0) problems.push(`${r.logDirsOffline.length} log dir(s) went offline`);
  if (r.freshProbes.failed > 0) problems.push(`${r.freshProbes.failed} fresh-connection probes failed`);
  if (r.sameConnectionProbes.failed > 0) problems.push(`${r.sameConnectionProbes.failed} same-connection probes failed`);
  if (r.brokerRss.fuzzPeakBytes !== null && r.brokerRss.fuzzPeakBytes > opts.rssBoundBytes) problems.push('RSS over its bound while fuzzing');
  if (r.side && r.side.keptDuringFuzz === false) problems.push('side clients lost throughput while fuzzing');
  if (r.side && r.side.keptDuringBombs === false) problems.push('side clients lost throughput during the bombs');
  for (const b of r.bombs) if (!b.ok) problems.push(`bomb ${b.name}`);
  if (r.trickle && !r.trickle.ok) problems.push('bomb trickle');
  return problems;
}
