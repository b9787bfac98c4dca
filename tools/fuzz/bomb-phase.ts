/**
 * The bomb phase: each bomb (bombs.ts) runs under a deadline, then the same two probes as the
 * fuzzing (its own connection, if it left one open, and a fresh one), and is judged on whether the
 * broker survived, answered, stayed under the RSS bound and kept its event loop moving. A broker a
 * bomb hurt is replaced before the next bomb. The trickle (a frame sent at one byte a second)
 * runs beside the fuzzing instead, and is judged at the end.
 */
import { bombSet, trickle, TRICKLE_BOMB, type Bomb, type BombRun, type TrickleResult } from './bombs.js';
import { STEADY_PARTITIONS, STEADY_TOPIC, wantsBomb } from './options.js';
import { probe, type ProbeResult } from './probe.js';
import { mb, type BombOutcome } from './report.js';
import type { FuzzRun } from './run-context.js';

/** Wait for the broker's next once-a-second loop-delay line before reading a bomb's figures. */
const NEXT_LOOP_REPORT_MS = 1100;

interface Detonation {
  run: BombRun | undefined;
  timedOut: boolean;
  notes: string[];
}

/** Runs the bomb until it ends or its deadline passes. */
async function detonate(run: FuzzRun, bomb: Bomb): Promise<Detonation> {
  const opts = run.opts;
  const notes: string[] = [];
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<void>((r) => (timer = setTimeout(r, opts.bombDeadlineMs)));
  let result: BombRun | undefined;
  let timedOut = false;
  try {
    const ctx = { host: run.host, port: run.port, scale: opts.bombScale, deadline, deadlineMs: opts.bombDeadlineMs, note: (s: string) => notes.push(s) };
    result = await Promise.race([bomb.run(ctx), deadline.then(() => undefined)]);
    if (result === undefined) timedOut = true;
  } catch (e) {
    notes.push(`bomb error: ${e instanceof Error ? e.message : String(e)}`);
  }
  clearTimeout(timer);
  return { run: result, timedOut, notes };
}

/** The probe on the connection the bomb left open: what it saw, and a failure reason if any. */
async function probeBombConnection(run: FuzzRun, bombRun: BombRun | undefined): Promise<{ same: string; reason?: string }> {
  const conn = bombRun?.conn;
  if (!conn) return { same: 'none' };
  try {
    if (conn.closed) return { same: conn.closedByPeer ? 'closed by broker' : 'closed' };
    const r = await probe(conn, STEADY_TOPIC, STEADY_PARTITIONS, run.opts.probeTimeoutMs);
    if (r.ok) return { same: 'answered' };
    if (conn.closedByPeer) return { same: 'closed by broker' };
    return { same: `failed: ${r.error}`, reason: `probe on the same connection: ${r.error}` };
  } finally {
    conn.close();
  }
}

interface BrokerFigures {
  rssPeak: number | null;
  rssAfter: number | null;
  loopDelay: number | null;
}

/** RSS and loop delay over the bomb's window, with the reasons they fail it. */
async function brokerFigures(run: FuzzRun, reasons: string[]): Promise<BrokerFigures> {
  const b = run.broker;
  if (!b) return { rssPeak: null, rssAfter: null, loopDelay: null };
  const opts = run.opts;
  await new Promise((r) => setTimeout(r, NEXT_LOOP_REPORT_MS));
  const rssAfter = b.sample();
  const w = b.takeWindow();
  if (w.peakRss > opts.rssBoundBytes) reasons.push(`RSS peaked at ${mb(w.peakRss)} (bound ${mb(opts.rssBoundBytes)})`);
  if (rssAfter !== null && rssAfter > opts.rssBoundBytes) reasons.push(`RSS still ${mb(rssAfter)} after the bomb's connections closed`);
  if (w.loopDelayMs > opts.loopDelayBoundMs) reasons.push(`event loop blocked ${Math.round(w.loopDelayMs)} ms (bound ${opts.loopDelayBoundMs} ms)`);
  return { rssPeak: w.peakRss, rssAfter, loopDelay: w.loopDelayMs };
}

/** Reasons the broker's state after the bomb fails it (before the RSS and loop figures). */
function survivalReasons(run: FuzzRun, d: Detonation, fresh: ProbeResult, sameReason: string | undefined): string[] {
  const reasons: string[] = [];
  if (sameReason) reasons.push(sameReason);
  if (d.timedOut) reasons.push(`no outcome within ${run.opts.bombDeadlineMs} ms`);
  if (!fresh.ok) reasons.push(`probe on a fresh connection: ${fresh.error}`);
  if (run.broker?.exited) reasons.push(`broker ${run.broker.describeExit()}`);
  return reasons;
}

async function runBomb(run: FuzzRun, bomb: Bomb): Promise<BombOutcome> {
  run.broker?.takeWindow();
  run.phaseProbeMax = 0;
  const started = Date.now();
  run.log(`bomb ${bomb.name}: ${bomb.description}`);
  const d = await detonate(run, bomb);
  const { same, reason } = await probeBombConnection(run, d.run);
  const fresh = await run.probeFresh();
  d.run?.cleanup?.();
  const b = run.broker;
  const survived = b ? !b.exited && fresh.ok : fresh.ok;
  const reasons = survivalReasons(run, d, fresh, reason);
  const figures = await brokerFigures(run, reasons);
  if (run.phaseProbeMax > run.opts.loopDelayBoundMs * 2) reasons.push(`a client beside it waited ${Math.round(run.phaseProbeMax)} ms for an answer`);
  reasons.push(...(d.run?.failures ?? []));
  return {
    name: bomb.name,
    description: bomb.description,
    ok: reasons.length === 0,
    reasons,
    durationMs: Date.now() - started,
    timedOut: d.timedOut,
    brokerSurvived: survived,
    ...(b?.exited ? { brokerExit: b.describeExit() } : {}),
    sameConnectionProbe: same,
    freshProbe: fresh.ok ? 'answered' : (fresh.error ?? 'failed'),
    rssPeakBytes: figures.rssPeak,
    rssAfterBytes: figures.rssAfter,
    loopDelayMs: figures.loopDelay,
    probeLatencyMaxMs: Math.round(run.phaseProbeMax),
    answers: d.run?.answers ?? [],
    notes: d.notes,
  };
}

/** Runs the bombs the options ask for, one after the other, into the report. */
export async function runBombPhase(run: FuzzRun): Promise<void> {
  let previousHurt = false;
  for (const bomb of bombSet(run.opts.bombScale).filter((b) => wantsBomb(run.opts, b.name))) {
    if (run.restarting) await run.restarting;
    const hurt = run.broker;
    if (previousHurt && hurt && !hurt.exited) {
      // judge each bomb on a broker the previous one did not leave bloated or busy
      run.log('  restarting the broker for the next bomb');
      await run.replaceBroker(hurt);
    }
    const outcome = await runBomb(run, bomb);
    run.report.bombs.push(outcome);
    const rss = outcome.rssPeakBytes === null ? '-' : mb(outcome.rssPeakBytes);
    run.log(
      `  ${outcome.ok ? 'survived' : 'FAILED'} in ${outcome.durationMs} ms; RSS peak ${rss}, loop delay ${outcome.loopDelayMs ?? '-'} ms; ${[...outcome.answers, ...outcome.reasons].join('; ')}`,
    );
    if (!outcome.brokerSurvived || outcome.timedOut) await run.checkBroker(`bomb ${bomb.name}`);
    previousHurt = !outcome.ok;
  }
}

type TrickleOutcome = TrickleResult & { error?: string };

/** The trickle, started beside the fuzzing; `finish` judges it (again alone if the broker was restarted under it). */
export function startTrickle(run: FuzzRun): { finish(): Promise<void> } | null {
  if (!wantsBomb(run.opts, TRICKLE_BOMB)) return null;
  const stop = { stopped: false };
  const once = (): Promise<TrickleOutcome> =>
    trickle(run.host, run.port, run.opts.trickleMs, stop).catch((e: unknown) => ({ closedByBroker: false, afterMs: 0, bytesSent: 0, error: String(e) }));
  const generation = run.generation;
  const first = once();
  return {
    async finish(): Promise<void> {
      let t = await first;
      if (run.generation !== generation) {
        // the broker was restarted under it, which closed it: that proves nothing, so again alone
        run.log('trickle: the broker was restarted meanwhile; trickling again');
        t = await once();
      }
      const ok = t.closedByBroker;
      const reason = ok
        ? `closed by the broker after ${t.afterMs} ms`
        : t.error
          ? `trickle error: ${t.error}`
          : `still open after ${t.afterMs} ms and ${t.bytesSent} bytes (connections.max.idle.ms ${run.props['connections.max.idle.ms']})`;
      run.report.trickle = { ...t, ok, reason };
      run.log(`trickle: ${reason}`);
    },
  };
}
