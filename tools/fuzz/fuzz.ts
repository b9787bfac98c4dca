/**
 * The fuzzing harness: mutated corpus frames and random frames on many connections, each batch
 * followed by a probe on the same connection (when the bytes sent leave it in sync) and on a
 * fresh one (probe-loop.ts); then the bombs, each under a deadline and followed by the same
 * probes (bomb-phase.ts). Beside it a well-behaved producer and consumer (side-monitor.ts)
 * measure their throughput, and a prober measures the latency a client sees. The broker runs as
 * a child process (broker-process.ts, driven by run-context.ts) so that its RSS and its own
 * event-loop delay can be read, and so that a crash is an outcome, not the end of the run: the
 * broker is restarted and the inputs that killed it are saved.
 */
import { startTrickle, runBombPhase } from './bomb-phase.js';
import type { BrokerProcess } from './broker-process.js';
import { STEADY_PARTITIONS, STEADY_TOPIC, type FuzzOptions } from './options.js';
import { runProbeLoop } from './probe-loop.js';
import type { FuzzReport, SideRates } from './report.js';
import { emptyReport, FuzzRun } from './run-context.js';
import { keptThroughput, startSideClients, type SideClients } from './side-monitor.js';
import { FuzzConnection } from './wire.js';

function percentile(xs: number[], p: number): number {
  if (xs.length === 0) return 0;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]!;
}

/** The fuzzing phase, with the broker's figures over it (the replaced brokers' included). */
async function fuzzPhase(run: FuzzRun, side: SideClients): Promise<SideRates | null> {
  const fuzzFrom = Date.now();
  run.beginPhase();
  await runProbeLoop(run);
  const fuzzTo = Date.now();
  const rates = run.opts.inputs > 0 ? side.rates(fuzzFrom, fuzzTo) : null;
  const b = run.broker;
  if (b) {
    const w = b.takeWindow();
    run.report.brokerRss.fuzzPeakBytes = Math.max(w.peakRss, run.replacedPeak);
    run.report.worstLoopDelayMs.fuzzPhaseBroker = Math.max(w.loopDelayMs, run.replacedLoop);
  }
  run.log(`fuzzing done: ${run.report.inputsSent} inputs in ${((fuzzTo - fuzzFrom) / 1000).toFixed(1)} s`);
  return rates;
}

/** The bombs, with the side clients' throughput over them (null when none ran). */
async function bombsPhase(run: FuzzRun, side: SideClients): Promise<SideRates | null> {
  const bombsFrom = Date.now();
  await runBombPhase(run);
  return run.report.bombs.length > 0 ? side.rates(bombsFrom, Date.now()) : null;
}

async function reportSideClients(run: FuzzRun, side: SideClients, baseline: SideRates, fuzz: SideRates | null, bombs: SideRates | null): Promise<void> {
  const last = side.last();
  await side.stop();
  run.report.side = {
    baseline,
    fuzz,
    bombs,
    keptDuringFuzz: fuzz ? keptThroughput(fuzz, baseline) : null,
    keptDuringBombs: bombs ? keptThroughput(bombs, baseline) : null,
    errors: last?.errors ?? 0,
    lastError: last?.lastError ?? '',
  };
}

/** The end: is the broker up, the latencies, its final figures, and a clean stop. */
async function finish(run: FuzzRun): Promise<void> {
  const report = run.report;
  const end = await run.probeFresh();
  const b = run.broker as BrokerProcess | null;
  report.brokerUpAtEnd = end.ok && (!b || !b.exited);
  // A loop, not Math.max(...latencies): a soak has more probes than the call stack has room for arguments.
  report.probeLatencyMaxMs = Math.round(run.latencies.reduce((m, x) => (x > m ? x : m), 0));
  report.probeLatencyP99Ms = Math.round(percentile(run.latencies, 99));
  report.probeLatencyP50Ms = Math.round(percentile(run.latencies, 50));
  if (b) {
    report.brokerRss.endBytes = b.sample();
    run.absorb(b);
    report.brokerRss.peakBytes = run.peakRss;
    report.brokerRss.minBytes = run.minRss;
    report.brokerMemory = { peak: { ...b.memoryPeak }, end: b.memory };
    report.worstLoopDelayMs.broker = run.worstLoopDelayMs;
    report.brokerStoppedCleanly = await b.stop(15_000);
  }
}

export async function runFuzz(opts: FuzzOptions): Promise<FuzzReport> {
  const t0 = Date.now();
  const run = new FuzzRun(opts, emptyReport(opts.seed));
  await run.start();
  run.startProber();
  const { side, baseline } = await startSideClients(`${run.host}:${run.port}`, STEADY_TOPIC, STEADY_PARTITIONS, opts.sideRate, opts.log);
  const trickle = startTrickle(run);
  const fuzzRates = await fuzzPhase(run, side);
  const bombRates = await bombsPhase(run, side);
  await trickle?.finish();
  await run.stopProber();
  await reportSideClients(run, side, baseline, fuzzRates, bombRates);
  await finish(run);
  FuzzConnection.closeAll();
  run.report.durationMs = Date.now() - t0;
  return run.report;
}

export { batchSeed, mayParkBehind } from './probe-loop.js';
export { DEFAULTS, type FuzzOptions } from './options.js';
export { envelope, readEnvelopes } from './repro-file.js';
export { mb, formatReport, verdict, type BombOutcome, type FuzzReport, type SideRates } from './report.js';
