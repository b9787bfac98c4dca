/**
 * The fuzzing harness: mutated corpus frames and random frames on many connections, each batch
 * followed by a probe on the same connection (when the bytes sent leave it in sync) and on a
 * fresh one; then the bombs, each under a deadline and followed by the same probes. Beside it a
 * well-behaved producer and consumer (side-clients.ts) measure their throughput, and a prober
 * measures the latency a client sees. The broker runs as a child process (broker-process.ts) so
 * that its RSS and its own event-loop delay can be read, and so that a crash is an outcome, not
 * the end of the run: the broker is restarted and the inputs that killed it are saved.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { writeFileSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { ALL_HANDLERS } from '../../src/server/handlers/index.js';
import type { CreateTopicsRequest } from '../../src/protocol/messages/index.js';
import { BrokerProcess } from './broker-process.js';
import { bombSet, trickle, TRICKLE_BOMB, type BombScale, type TrickleResult } from './bombs.js';
import { loadCorpus, mutate, Rng, type CorpusEntry } from './mutate.js';
import { probe, probeFresh } from './probe.js';
import { envelope } from './repro-file.js';
import { mb, type BombOutcome, type FuzzReport, type SideRates } from './report.js';
import { apiKeysOf, FuzzConnection, framingOf } from './wire.js';

const MB = 1024 * 1024;
const STEADY_TOPIC = 'fuzz-steady';
const STEADY_PARTITIONS = 3;
/**
 * APIs whose answer may legitimately wait, so a late probe answer behind them on the same
 * connection is not a failure: long-poll Fetch (1), group joins (11, 14), and topic creation,
 * growth and deletion (19, 37, 20), which Fjord answers once every log exists or is gone: a
 * mutated request for thousands of partitions takes seconds (adding 2,048 partitions took 24 s
 * here), and topic config changes (33, 44) wait for the same per-broker log sync. The
 * fresh-connection probe still checks the broker serves everyone else meanwhile.
 */
const MAY_PARK = new Set([1, 11, 14, 19, 20, 33, 37, 44]);
const MAX_FRAME = 100 * MB;

export interface FuzzOptions {
  inputs: number;
  seed: number;
  concurrency: number;
  /** Bomb names to run, or ['all'] / [] (none); the trickle is one of them. */
  bombs: readonly string[];
  bombScale: BombScale;
  /** host:port of a broker already running (no RSS, no restarts); default: start one. */
  bootstrapServer?: string;
  rssBoundBytes: number;
  /** The fuzzer kills its broker past this RSS (protects the machine from an unfixed bomb). */
  rssKillBytes: number;
  loopDelayBoundMs: number;
  probeTimeoutMs: number;
  /** A probe on a fresh connection after every Nth fuzzed connection (1: after each). */
  freshProbeEvery: number;
  bombDeadlineMs: number;
  trickleMs: number;
  sideRate: number;
  /** Extra broker properties. */
  brokerProps?: Record<string, string>;
  /** Appends the broker's once-a-second memory report (process.memoryUsage()) here as JSON lines. */
  memoryLog?: string;
  log: (line: string) => void;
}

export const DEFAULTS: Omit<FuzzOptions, 'log'> = {
  inputs: 20_000,
  seed: 1,
  concurrency: 8,
  bombs: ['all'],
  bombScale: 'short',
  rssBoundBytes: 512 * MB,
  rssKillBytes: 1024 * MB,
  loopDelayBoundMs: 1000,
  probeTimeoutMs: 10_000,
  freshProbeEvery: 1,
  bombDeadlineMs: 30_000,
  trickleMs: 15_000,
  sideRate: 1000,
};

interface SideSample {
  t: number;
  produced: number;
  consumed: number;
  errors: number;
  lastError: string;
}

class SideClients {
  samples: SideSample[] = [];
  private constructor(private readonly child: ChildProcess) {
    createInterface({ input: child.stdout! }).on('line', (line) => {
      try {
        const s = JSON.parse(line) as SideSample;
        this.samples.push({ ...s, t: Date.now() });
      } catch {
        /* not a sample */
      }
    });
    child.stderr!.resume();
  }
  static start(bootstrap: string, rate: number): SideClients {
    const child = spawn(process.execPath, ['--import', 'tsx', resolve(import.meta.dirname, 'side-clients.ts'), bootstrap, STEADY_TOPIC, String(STEADY_PARTITIONS), String(rate)], {
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    return new SideClients(child);
  }
  last(): SideSample | undefined {
    return this.samples[this.samples.length - 1];
  }
  async waitFor(pred: (s: SideSample) => boolean, ms: number): Promise<boolean> {
    const end = Date.now() + ms;
    while (Date.now() < end) {
      const s = this.last();
      if (s && pred(s)) return true;
      await new Promise((r) => setTimeout(r, 100));
    }
    return false;
  }
  /** Records per second between two wall-clock times. */
  rates(from: number, to: number): SideRates {
    const a = [...this.samples].reverse().find((s) => s.t <= from) ?? this.samples[0];
    const b = [...this.samples].reverse().find((s) => s.t <= to) ?? this.last();
    if (!a || !b || b.t <= a.t) return { produced: 0, consumed: 0 };
    const secs = (b.t - a.t) / 1000;
    return { produced: (b.produced - a.produced) / secs, consumed: (b.consumed - a.consumed) / secs };
  }
  async stop(): Promise<void> {
    this.child.kill('SIGTERM');
    await new Promise<void>((r) => {
      const timer = setTimeout(() => {
        this.child.kill('SIGKILL');
        r();
      }, 5000);
      this.child.once('exit', () => {
        clearTimeout(timer);
        r();
      });
    });
  }
}

function percentile(xs: number[], p: number): number {
  if (xs.length === 0) return 0;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]!;
}

export async function runFuzz(opts: FuzzOptions): Promise<FuzzReport> {
  const t0 = Date.now();
  const log = opts.log;
  const corpus: CorpusEntry[] = loadCorpus();
  const servedKeys = ALL_HANDLERS.map((h) => h.apiKey);
  const report: FuzzReport = {
    seed: opts.seed,
    inputsSent: 0,
    mutations: {},
    connectionsOpened: 0,
    connectionsClosedByBroker: 0,
    connectionsLeftOutOfSync: 0,
    sameConnectionProbes: { answered: 0, closedByBroker: 0, parked: 0, failed: 0 },
    freshProbes: { answered: 0, failed: 0 },
    probeFailures: [],
    probeLatencyMaxMs: 0,
    probeLatencyP99Ms: 0,
    probeLatencyP50Ms: 0,
    brokerRss: { startBytes: null, minBytes: null, fuzzPeakBytes: null, peakBytes: null, endBytes: null },
    brokerMemory: null,
    worstLoopDelayMs: { broker: null, fuzzPhaseBroker: null },
    crashes: [],
    bombs: [],
    trickle: null,
    side: null,
    brokerErrors: [],
    brokerUpAtEnd: false,
    brokerStoppedCleanly: null,
    durationMs: 0,
  };
  const reproDir = mkdtempSync(join(tmpdir(), 'fjord-fuzz-repro-'));

  // --- the broker -------------------------------------------------------------------------------
  let host = '127.0.0.1';
  let port = 0;
  let broker: BrokerProcess | null = null;
  // The trickled frame must be cut well within the trickle's time: the frame deadline
  // (socket.request.receive.timeout.ms, 30 s by default) and the idle timer are both shortened.
  const cut = String(Math.max(1000, Math.floor(opts.trickleMs / 3)));
  const props = { 'connections.max.idle.ms': cut, 'socket.request.receive.timeout.ms': cut, ...opts.brokerProps };
  let overallPeak = 0;
  let overallMin = Number.POSITIVE_INFINITY;
  let worstLoop = 0;
  const absorb = (b: BrokerProcess): void => {
    overallMin = Math.min(overallMin, b.minRss);
    report.brokerErrors = [...report.brokerErrors, ...b.errors.filter((e) => e.trim() !== '')].slice(-20);
    overallPeak = Math.max(overallPeak, b.peakRss);
    worstLoop = Math.max(worstLoop, b.worstLoopDelayMs);
  };
  let generation = 0; // brokers started so far: a restart closes every connection
  const startBroker = async (): Promise<void> => {
    generation++;
    broker = await BrokerProcess.start({ props: port === 0 ? props : { ...props, listeners: `PLAINTEXT://127.0.0.1:${port}` }, rssKillBytes: opts.rssKillBytes, ...(opts.memoryLog ? { memoryLog: opts.memoryLog } : {}) });
    port = broker.port;
  };
  if (opts.bootstrapServer) {
    const [h, p] = opts.bootstrapServer.split(':');
    host = h!;
    port = Number(p);
  } else {
    await startBroker();
    report.brokerRss.startBytes = broker!.startRss;
    log(`broker pid ${broker!.pid} on port ${port}, RSS ${mb(broker!.startRss)}`);
  }
  const currentBroker = (): BrokerProcess | null => broker;

  const setup = await FuzzConnection.connect(port, host);
  await setup.request<CreateTopicsRequest>(19, 7, { topics: [{ name: STEADY_TOPIC, numPartitions: STEADY_PARTITIONS, replicationFactor: 1 }], timeoutMs: 30_000 }, opts.probeTimeoutMs, 1);
  setup.close();

  /** After a failed probe: is the broker still there? If not, save the evidence and restart it. */
  let restarting: Promise<void> | null = null;
  const recent: Buffer[] = [];
  const checkBroker = async (phase: string): Promise<void> => {
    if (restarting) return restarting;
    restarting = (async () => {
      const again = await probeFresh(host, port, STEADY_TOPIC, STEADY_PARTITIONS, opts.probeTimeoutMs);
      const b = currentBroker();
      if (again.ok && (!b || !b.exited)) return;
      if (!b) {
        report.crashes.push({ afterInputs: report.inputsSent, phase, exit: `broker unreachable: ${again.error}`, reproFile: null });
        return;
      }
      let reproFile: string | null = null;
      if (phase === 'fuzzing') {
        reproFile = join(reproDir, `crash-${report.crashes.length}-after-${report.inputsSent}.bin`);
        writeFileSync(reproFile, Buffer.concat(recent));
      }
      await b.waitExit(2000); // a refused connection usually means it is exiting right now
      const exit = b.exited ? b.describeExit() : `unresponsive (${again.error}), stopped by the fuzzer`;
      report.crashes.push({ afterInputs: report.inputsSent, phase, exit, reproFile });
      log(`broker down during ${phase} after ${report.inputsSent} inputs (${exit})${reproFile ? `; recent inputs in ${reproFile}` : ''}; restarting`);
      await replaceBroker(b);
    })().finally(() => (restarting = null));
    return restarting;
  };
  /** A new broker on the same port with a fresh log dir and the steady topic. */
  let replacedPeak = 0; // peak RSS and loop delay of the brokers replaced during the current phase
  let replacedLoop = 0;
  const replaceBroker = async (b: BrokerProcess): Promise<void> => {
    const w = b.takeWindow();
    replacedPeak = Math.max(replacedPeak, w.peakRss);
    replacedLoop = Math.max(replacedLoop, w.loopDelayMs);
    await b.stop(5000);
    absorb(b);
    await startBroker();
    const s = await FuzzConnection.connect(port, host);
    await s.request<CreateTopicsRequest>(19, 7, { topics: [{ name: STEADY_TOPIC, numPartitions: STEADY_PARTITIONS, replicationFactor: 1 }], timeoutMs: 30_000 }, opts.probeTimeoutMs, 1);
    s.close();
  };

  // --- the prober beside everything: the latency a client sees ----------------------------------
  const latencies: number[] = [];
  let proberStop = false;
  let phaseProbeMax = 0;
  const prober = (async () => {
    while (!proberStop) {
      if (restarting) await restarting;
      const r = await probeFresh(host, port, STEADY_TOPIC, STEADY_PARTITIONS, opts.probeTimeoutMs);
      // a failed probe counts too: the client waited that long for nothing
      latencies.push(r.latencyMs);
      phaseProbeMax = Math.max(phaseProbeMax, r.latencyMs);
      await new Promise((res) => setTimeout(res, 100));
    }
  })();

  // --- side clients: baseline ----------------------------------------------------------------
  const side = SideClients.start(`${host}:${port}`, opts.sideRate);
  const sideUp = await side.waitFor((s) => s.produced > opts.sideRate && s.consumed > opts.sideRate, 30_000);
  if (!sideUp) log(`side clients did not get going: ${JSON.stringify(side.last())}`);
  await new Promise((r) => setTimeout(r, 1000)); // past the start-up burst
  const baseFrom = Date.now();
  await new Promise((r) => setTimeout(r, 3000));
  const baseline = side.rates(baseFrom, Date.now());
  log(`side clients baseline: ${baseline.produced.toFixed(0)} produced/s, ${baseline.consumed.toFixed(0)} consumed/s`);

  const wanted = (name: string): boolean => opts.bombs.includes('all') || opts.bombs.includes(name);

  // --- the trickle runs beside the fuzzing -----------------------------------------------------
  const trickleStop = { stopped: false };
  const runTrickle = (): Promise<TrickleResult & { error?: string }> =>
    trickle(host, port, opts.trickleMs, trickleStop).catch((e: unknown) => ({ closedByBroker: false, afterMs: 0, bytesSent: 0, error: String(e) }));
  const trickleGeneration = generation;
  const trickleRun = wanted(TRICKLE_BOMB) ? runTrickle() : null;

  // --- fuzzing -----------------------------------------------------------------------------------
  const fuzzFrom = Date.now();
  currentBroker()?.takeWindow();
  replacedPeak = 0;
  replacedLoop = 0;
  let nextLog = Date.now() + 5000;
  let nextBatch = 0;
  const worker = async (): Promise<void> => {
    while (report.inputsSent < opts.inputs) {
      if (restarting) await restarting;
      // One PRNG per batch, from the seed and the batch's number: batch k is the same bytes in
      // every run with this seed, whatever the interleaving of the workers.
      const batch = nextBatch++;
      const rng = new Rng(batchSeed(opts.seed, batch));
      const n = Math.min(1 + rng.int(4), opts.inputs - report.inputsSent);
      report.inputsSent += n;
      const inputs: Buffer[] = [];
      for (let i = 0; i < n; i++) {
        const m = mutate(rng, corpus, servedKeys);
        report.mutations[m.kind] = (report.mutations[m.kind] ?? 0) + 1;
        inputs.push(m.bytes);
        recent.push(envelope(m.bytes));
        if (recent.length > 256) recent.shift();
      }
      const mayPark = mayParkBehind(Buffer.concat(inputs));
      let conn: FuzzConnection;
      try {
        conn = await FuzzConnection.connect(port, host, opts.probeTimeoutMs);
      } catch (e) {
        report.freshProbes.failed++;
        report.probeFailures.push(`connect after ${report.inputsSent} inputs: ${e instanceof Error ? e.message : String(e)}`);
        await checkBroker('fuzzing');
        continue;
      }
      report.connectionsOpened++;
      try {
        const all = Buffer.concat(inputs);
        if (rng.next() < 0.1) {
          // fragmented: the frames arrive in small pieces
          for (let p = 0; p < all.length; ) {
            const len = 1 + rng.int(64);
            await conn.write(all.subarray(p, p + len));
            p += len;
          }
        } else for (const b of inputs) await conn.write(b);
        const { inSync } = framingOf(all, MAX_FRAME);
        if (!inSync) {
          report.connectionsLeftOutOfSync++;
          // the broker waits for a frame's rest, or closes the connection on a size it refuses
          await conn.waitClosed(20);
        } else if (!conn.closed) {
          const r = await probe(conn, STEADY_TOPIC, STEADY_PARTITIONS, mayPark ? 2000 : opts.probeTimeoutMs);
          if (r.ok) report.sameConnectionProbes.answered++;
          else if (conn.closedByPeer) report.sameConnectionProbes.closedByBroker++;
          else if (mayPark) report.sameConnectionProbes.parked++;
          else {
            report.sameConnectionProbes.failed++;
            if (report.probeFailures.length < 50) {
              const file = join(reproDir, `probe-failure-${report.sameConnectionProbes.failed}.bin`);
              writeFileSync(file, Buffer.concat(inputs.map(envelope)));
              report.probeFailures.push(`same connection after ${report.inputsSent} inputs: ${r.error} (inputs in ${file})`);
            }
          }
        }
        if (conn.closedByPeer) report.connectionsClosedByBroker++;
      } finally {
        conn.close();
      }
      if (report.connectionsOpened % opts.freshProbeEvery !== 0) continue;
      const fresh = await probeFresh(host, port, STEADY_TOPIC, STEADY_PARTITIONS, opts.probeTimeoutMs);
      if (fresh.ok) {
        report.freshProbes.answered++;
        latencies.push(fresh.latencyMs);
        phaseProbeMax = Math.max(phaseProbeMax, fresh.latencyMs);
      } else {
        report.freshProbes.failed++;
        if (report.probeFailures.length < 50) report.probeFailures.push(`fresh connection after ${report.inputsSent} inputs: ${fresh.error}`);
        await checkBroker('fuzzing');
      }
      if (Date.now() > nextLog) {
        nextLog = Date.now() + 5000;
        const b = currentBroker();
        log(`${report.inputsSent} inputs, ${report.connectionsClosedByBroker} connections closed by the broker${b ? `, RSS ${mb(b.sample() ?? 0)}` : ''}`);
      }
    }
  };
  await Promise.all(Array.from({ length: opts.concurrency }, worker));
  const fuzzTo = Date.now();
  const fuzzRates = opts.inputs > 0 ? side.rates(fuzzFrom, fuzzTo) : null;
  {
    const b = currentBroker();
    if (b) {
      const w = b.takeWindow();
      report.brokerRss.fuzzPeakBytes = Math.max(w.peakRss, replacedPeak);
      report.worstLoopDelayMs.fuzzPhaseBroker = Math.max(w.loopDelayMs, replacedLoop);
    }
  }
  log(`fuzzing done: ${report.inputsSent} inputs in ${((fuzzTo - fuzzFrom) / 1000).toFixed(1)} s`);

  // --- bombs -------------------------------------------------------------------------------------
  const bombsFrom = Date.now();
  let previousHurt = false;
  for (const bomb of bombSet(opts.bombScale).filter((b) => wanted(b.name))) {
    if (restarting) await restarting;
    const hurt = currentBroker();
    if (previousHurt && hurt && !hurt.exited) {
      // judge each bomb on a broker the previous one did not leave bloated or busy
      log('  restarting the broker for the next bomb');
      await replaceBroker(hurt);
    }
    const b0 = currentBroker();
    b0?.takeWindow();
    phaseProbeMax = 0;
    const started = Date.now();
    const notes: string[] = [];
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<void>((r) => (timer = setTimeout(r, opts.bombDeadlineMs)));
    let timedOut = false;
    let run: Awaited<ReturnType<typeof bomb.run>> | undefined;
    log(`bomb ${bomb.name}: ${bomb.description}`);
    try {
      run = await Promise.race([bomb.run({ host, port, scale: opts.bombScale, deadline, deadlineMs: opts.bombDeadlineMs, note: (s) => notes.push(s) }), deadline.then(() => undefined)]);
      if (run === undefined) timedOut = true;
    } catch (e) {
      notes.push(`bomb error: ${e instanceof Error ? e.message : String(e)}`);
    }
    clearTimeout(timer);
    const reasons: string[] = [];
    let same: string = 'none';
    if (run?.conn) {
      if (run.conn.closed) same = run.conn.closedByPeer ? 'closed by broker' : 'closed';
      else {
        const r = await probe(run.conn, STEADY_TOPIC, STEADY_PARTITIONS, opts.probeTimeoutMs);
        same = r.ok ? 'answered' : run.conn.closedByPeer ? 'closed by broker' : `failed: ${r.error}`;
        if (!r.ok && !run.conn.closedByPeer) reasons.push(`probe on the same connection: ${r.error}`);
      }
      run.conn.close();
    }
    const fresh = await probeFresh(host, port, STEADY_TOPIC, STEADY_PARTITIONS, opts.probeTimeoutMs);
    run?.cleanup?.();
    const b = currentBroker();
    const survived = b ? !b.exited && fresh.ok : fresh.ok;
    if (timedOut) reasons.push(`no outcome within ${opts.bombDeadlineMs} ms`);
    if (!fresh.ok) reasons.push(`probe on a fresh connection: ${fresh.error}`);
    if (b?.exited) reasons.push(`broker ${b.describeExit()}`);
    let rssPeak: number | null = null;
    let loopDelay: number | null = null;
    let rssAfter: number | null = null;
    if (b) {
      await new Promise((r) => setTimeout(r, 1100)); // the broker's next loop-delay line
      rssAfter = b.sample();
      const w = b.takeWindow();
      rssPeak = w.peakRss;
      loopDelay = w.loopDelayMs;
      if (rssPeak > opts.rssBoundBytes) reasons.push(`RSS peaked at ${mb(rssPeak)} (bound ${mb(opts.rssBoundBytes)})`);
      if (rssAfter !== null && rssAfter > opts.rssBoundBytes) reasons.push(`RSS still ${mb(rssAfter)} after the bomb's connections closed`);
      if (loopDelay > opts.loopDelayBoundMs) reasons.push(`event loop blocked ${Math.round(loopDelay)} ms (bound ${opts.loopDelayBoundMs} ms)`);
    }
    if (phaseProbeMax > opts.loopDelayBoundMs * 2) reasons.push(`a client beside it waited ${Math.round(phaseProbeMax)} ms for an answer`);
    reasons.push(...(run?.failures ?? []));
    const outcome: BombOutcome = {
      name: bomb.name,
      description: bomb.description,
      ok: reasons.length === 0,
      reasons,
      durationMs: Date.now() - started,
      timedOut,
      brokerSurvived: survived,
      ...(b?.exited ? { brokerExit: b.describeExit() } : {}),
      sameConnectionProbe: same,
      freshProbe: fresh.ok ? 'answered' : (fresh.error ?? 'failed'),
      rssPeakBytes: rssPeak,
      rssAfterBytes: rssAfter,
      loopDelayMs: loopDelay,
      probeLatencyMaxMs: Math.round(phaseProbeMax),
      answers: run?.answers ?? [],
      notes,
    };
    report.bombs.push(outcome);
    log(`  ${outcome.ok ? 'survived' : 'FAILED'} in ${outcome.durationMs} ms; RSS peak ${rssPeak === null ? '-' : mb(rssPeak)}, loop delay ${loopDelay ?? '-'} ms; ${[...outcome.answers, ...reasons].join('; ')}`);
    if (!survived || timedOut) await checkBroker(`bomb ${bomb.name}`);
    previousHurt = !outcome.ok;
  }
  const bombsTo = Date.now();
  const ranBombs = report.bombs.length > 0;

  // --- the trickle's outcome -----------------------------------------------------------------------
  if (trickleRun) {
    let t = await trickleRun;
    if (generation !== trickleGeneration) {
      // the broker was restarted under it, which closed it: that proves nothing, so again alone
      log('trickle: the broker was restarted meanwhile; trickling again');
      t = await runTrickle();
    }
    const ok = t.closedByBroker;
    report.trickle = { ...t, ok, reason: ok ? `closed by the broker after ${t.afterMs} ms` : t.error ? `trickle error: ${t.error}` : `still open after ${t.afterMs} ms and ${t.bytesSent} bytes (connections.max.idle.ms ${props['connections.max.idle.ms']})` };
    log(`trickle: ${report.trickle.reason}`);
  }

  // --- the end -------------------------------------------------------------------------------------
  proberStop = true;
  await prober;
  const bombRates = ranBombs ? side.rates(bombsFrom, bombsTo) : null;
  const last = side.last();
  await side.stop();
  const kept = (r: SideRates): boolean => r.produced >= baseline.produced * 0.5 && r.consumed >= baseline.consumed * 0.5 && baseline.produced > 0;
  report.side = {
    baseline,
    fuzz: fuzzRates,
    bombs: bombRates,
    keptDuringFuzz: fuzzRates ? kept(fuzzRates) : null,
    keptDuringBombs: bombRates ? kept(bombRates) : null,
    errors: last?.errors ?? 0,
    lastError: last?.lastError ?? '',
  };
  const end = await probeFresh(host, port, STEADY_TOPIC, STEADY_PARTITIONS, opts.probeTimeoutMs);
  const b = currentBroker() as BrokerProcess | null;
  report.brokerUpAtEnd = end.ok && (!b || !b.exited);
  // A loop, not Math.max(...latencies): a soak has more probes than the call stack has room for arguments.
  report.probeLatencyMaxMs = Math.round(latencies.reduce((m, x) => (x > m ? x : m), 0));
  report.probeLatencyP99Ms = Math.round(percentile(latencies, 99));
  report.probeLatencyP50Ms = Math.round(percentile(latencies, 50));
  if (b) {
    report.brokerRss.endBytes = b.sample();
    absorb(b);
    report.brokerRss.peakBytes = overallPeak;
    report.brokerRss.minBytes = Number.isFinite(overallMin) ? overallMin : null;
    report.brokerMemory = { peak: { ...b.memoryPeak }, end: b.memory };
    report.worstLoopDelayMs.broker = worstLoop;
    report.brokerStoppedCleanly = await b.stop(15_000);
  }
  FuzzConnection.closeAll();
  report.durationMs = Date.now() - t0;
  return report;
}

/**
 * Whether a probe sent after `sent` on the same connection may legitimately wait: any frame the
 * broker parses out of it, not only the first (pipelined and spliced inputs hide a CreateTopics
 * or a long-poll Fetch behind an ApiVersions), is one whose answer may take long.
 */
export function mayParkBehind(sent: Buffer): boolean {
  return apiKeysOf(sent, MAX_FRAME).some((k) => MAY_PARK.has(k));
}

/** A stable per-batch seed (splitmix-style mixing of the run's seed and the batch number). */
export function batchSeed(seed: number, batch: number): number {
  let h = (Math.imul(seed ^ 0x9e3779b9, 0x85ebca6b) ^ Math.imul(batch + 1, 0xc2b2ae35)) >>> 0;
  h = Math.imul(h ^ (h >>> 16), 0x7feb352d) >>> 0;
  return (h ^ (h >>> 15)) >>> 0;
}

export { envelope, readEnvelopes } from './repro-file.js';
export { mb, formatReport, verdict, type BombOutcome, type FuzzReport, type SideRates } from './report.js';
