/**
 * What the fuzzer's phases share: the broker under attack (started, watched, and replaced when a
 * phase finds it down), the inputs sent last (saved when the broker dies), the latencies a client
 * beside everything saw, and the report being filled in.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { CreateTopicsRequest } from '../../src/protocol/messages/index.js';
import { BrokerProcess } from './broker-process.js';
import { STEADY_PARTITIONS, STEADY_TOPIC, type FuzzOptions } from './options.js';
import { probeFresh, type ProbeResult } from './probe.js';
import { mb, type FuzzReport } from './report.js';
import { FuzzConnection } from './wire.js';

/** Inputs kept for the repro file written when the broker dies while fuzzing. */
const RECENT_INPUTS = 256;

export function emptyReport(seed: number): FuzzReport {
  return {
    seed,
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
    logDirsOffline: [],
    brokerUpAtEnd: false,
    brokerStoppedCleanly: null,
    durationMs: 0,
  };
}

export class FuzzRun {
  host = '127.0.0.1';
  port = 0;
  broker: BrokerProcess | null = null;
  /** Brokers started so far: a restart closes every connection. */
  generation = 0;
  readonly props: Record<string, string>;
  readonly reproDir = mkdtempSync(join(tmpdir(), 'fjord-fuzz-repro-'));
  /** Set while a broker found down is being replaced; every phase waits for it. */
  restarting: Promise<void> | null = null;
  /** Latencies of every fresh-connection probe (the prober's and the fuzz loop's). */
  readonly latencies: number[] = [];
  /** The longest a probe waited since the current phase (or bomb) began. */
  phaseProbeMax = 0;
  /** Peak RSS and loop delay of the brokers replaced during the current phase. */
  replacedPeak = 0;
  replacedLoop = 0;
  private readonly recent: Buffer[] = [];
  private overallPeak = 0;
  private overallMin = Number.POSITIVE_INFINITY;
  private worstLoop = 0;
  private proberStopped = false;
  private prober: Promise<void> | null = null;

  constructor(
    readonly opts: FuzzOptions,
    readonly report: FuzzReport,
  ) {
    // The trickled frame must be cut well within the trickle's time: the frame deadline
    // (socket.request.receive.timeout.ms, 30 s by default) and the idle timer are both shortened.
    const cut = String(Math.max(1000, Math.floor(opts.trickleMs / 3)));
    this.props = { 'connections.max.idle.ms': cut, 'socket.request.receive.timeout.ms': cut, ...opts.brokerProps };
  }

  log(line: string): void {
    this.opts.log(line);
  }

  /** Starts the broker (or targets the one given), and creates the steady topic. */
  async start(): Promise<void> {
    if (this.opts.bootstrapServer) {
      const [h, p] = this.opts.bootstrapServer.split(':');
      this.host = h!;
      this.port = Number(p);
    } else {
      await this.startBroker();
      this.report.brokerRss.startBytes = this.broker!.startRss;
      this.log(`broker pid ${this.broker!.pid} on port ${this.port}, RSS ${mb(this.broker!.startRss)}`);
    }
    await this.createSteadyTopic();
  }

  private async startBroker(): Promise<void> {
    this.generation++;
    const props = this.port === 0 ? this.props : { ...this.props, listeners: `PLAINTEXT://127.0.0.1:${this.port}` };
    this.broker = await BrokerProcess.start({
      props,
      rssKillBytes: this.opts.rssKillBytes,
      ...(this.opts.memoryLog ? { memoryLog: this.opts.memoryLog } : {}),
    });
    this.port = this.broker.port;
  }

  private async createSteadyTopic(): Promise<void> {
    const s = await FuzzConnection.connect(this.port, this.host);
    await s.request<CreateTopicsRequest>(
      19,
      7,
      { topics: [{ name: STEADY_TOPIC, numPartitions: STEADY_PARTITIONS, replicationFactor: 1 }], timeoutMs: 30_000 },
      this.opts.probeTimeoutMs,
      1,
    );
    s.close();
  }

  /** Folds a broker's figures (before it is stopped or replaced) into the run's. */
  absorb(b: BrokerProcess): void {
    this.overallMin = Math.min(this.overallMin, b.minRss);
    this.report.brokerErrors = [...this.report.brokerErrors, ...b.errors.filter((e) => e.trim() !== '')].slice(-20);
    this.report.logDirsOffline.push(...b.offlineDirs);
    this.overallPeak = Math.max(this.overallPeak, b.peakRss);
    this.worstLoop = Math.max(this.worstLoop, b.worstLoopDelayMs);
  }

  get peakRss(): number {
    return this.overallPeak;
  }
  get minRss(): number | null {
    return Number.isFinite(this.overallMin) ? this.overallMin : null;
  }
  get worstLoopDelayMs(): number {
    return this.worstLoop;
  }

  /** Keeps an input (as a repro-file envelope) among the last ones sent. */
  remember(envelope: Buffer): void {
    this.recent.push(envelope);
    if (this.recent.length > RECENT_INPUTS) this.recent.shift();
  }

  probeFresh(): Promise<ProbeResult> {
    return probeFresh(this.host, this.port, STEADY_TOPIC, STEADY_PARTITIONS, this.opts.probeTimeoutMs);
  }

  noteLatency(ms: number): void {
    this.latencies.push(ms);
    this.phaseProbeMax = Math.max(this.phaseProbeMax, ms);
  }

  /** A new phase: the broker's window and the replaced brokers' figures start again. */
  beginPhase(): void {
    this.broker?.takeWindow();
    this.replacedPeak = 0;
    this.replacedLoop = 0;
  }

  /** After a failed probe: is the broker still there? If not, save the evidence and restart it. */
  checkBroker(phase: string): Promise<void> {
    if (this.restarting) return this.restarting;
    this.restarting = this.recoverBroker(phase).finally(() => (this.restarting = null));
    return this.restarting;
  }

  private async recoverBroker(phase: string): Promise<void> {
    const report = this.report;
    const again = await this.probeFresh();
    const b = this.broker;
    if (again.ok && (!b || !b.exited)) return;
    if (!b) {
      report.crashes.push({ afterInputs: report.inputsSent, phase, exit: `broker unreachable: ${again.error}`, reproFile: null });
      return;
    }
    let reproFile: string | null = null;
    if (phase === 'fuzzing') {
      reproFile = join(this.reproDir, `crash-${report.crashes.length}-after-${report.inputsSent}.bin`);
      writeFileSync(reproFile, Buffer.concat(this.recent));
    }
    await b.waitExit(2000); // a refused connection usually means it is exiting right now
    const exit = b.exited ? b.describeExit() : `unresponsive (${again.error}), stopped by the fuzzer`;
    report.crashes.push({ afterInputs: report.inputsSent, phase, exit, reproFile });
    this.log(`broker down during ${phase} after ${report.inputsSent} inputs (${exit})${reproFile ? `; recent inputs in ${reproFile}` : ''}; restarting`);
    await this.replaceBroker(b);
  }

  /** A new broker on the same port with a fresh log dir and the steady topic. */
  async replaceBroker(b: BrokerProcess): Promise<void> {
    const w = b.takeWindow();
    this.replacedPeak = Math.max(this.replacedPeak, w.peakRss);
    this.replacedLoop = Math.max(this.replacedLoop, w.loopDelayMs);
    await b.stop(5000);
    this.absorb(b);
    await this.startBroker();
    await this.createSteadyTopic();
  }

  /** The prober beside everything: a fresh-connection probe every 100 ms, the latency a client sees. */
  startProber(): void {
    this.prober = (async () => {
      while (!this.proberStopped) {
        if (this.restarting) await this.restarting;
        const r = await this.probeFresh();
        // a failed probe counts too: the client waited that long for nothing
        this.noteLatency(r.latencyMs);
        await new Promise((res) => setTimeout(res, 100));
      }
    })();
  }

  async stopProber(): Promise<void> {
    this.proberStopped = true;
    await this.prober;
  }
}
