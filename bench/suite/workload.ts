/**
 * The workload interface of `npm run bench` (bench/suite/run.ts): what a workload file provides,
 * and what the runner hands it. Keep this file stable: other workloads are written against it.
 *
 * ## Adding a workload
 * Write one file `bench/suite/workloads/NAME.ts` whose default export is a `Workload` (or an array
 * of them). The runner imports every `.ts` file in that folder (no registry to edit), orders them by
 * `order` then `name`, and runs those `--only=` selects (all by default). `name` is the key of
 * `--only`; it must be unique. Example:
 *
 *     const latency: Workload = {
 *       name: 'latency', order: 30, title: 'End-to-end latency',
 *       description: 'p50/p99/p99.9 from produce() to ... at 25/50/75% of the measured maximum',
 *       systems: ['fjord', 'nats', 'redis'],
 *       async run(ctx) {
 *         const samples: Sample[] = [];
 *         for (const repeat of ctx.repeatIndices()) {
 *           for (const system of ctx.rotate(['fjord', 'nats'], repeat)) { ... samples.push(...) }
 *         }
 *         return { figures: ctx.medians(samples) };
 *       },
 *     };
 *     export default latency;
 *
 * ## What run(ctx) gets (SuiteContext)
 * - `ctx.quick` (smoke run: small sizes, 1 repeat), `ctx.repeats` (R of `--repeats`, default 3),
 *   `ctx.rotate(list, repeat)` (the systems' order for repeat r: rotated by r), `ctx.medians()`.
 * - Systems, each a separate child process whose CPU and RSS the runner reads from /proc/PID:
 *   `ctx.startFjord(overrides)` (bin/kafka-server-start.sh from dist/, temp log dir, free port),
 *   `ctx.startNats()` (nats-server -js, file store), `ctx.startRedis()` (appendonly everysec).
 *   Each handle has `stop()`; a workload stops what it starts (use try/finally).
 * - Load generators, compiled once per run on first use: `ctx.tool('rdkafka-perf')` (bench/rdkafka-perf.c:
 *   produce/consume/latency modes, one JSON line out) and `ctx.tool('nats-perf')` (bench/nats-perf.c).
 *   `ctx.exec()` runs a command and returns its output; `ctx.execJson()` parses its last line.
 * - `ctx.tmpDir` (scratch, removed after the run), `ctx.log()` (progress on stderr),
 *   `ctx.command()` (record an exact command line for the report's "commands" list).
 *
 * ## What run(ctx) returns (WorkloadResult)
 * `figures`: one per (case, system, metric), each already the median of its repeats with the
 * samples kept. The report writes one markdown table per workload: a row per case, a column per
 * system and metric, plus the ratios Fjord/NATS and Fjord/Redis of `primary` metrics from the same
 * run, and (where the workload sets `limit`) Fjord/limit. `targets`: issue 26's targets this
 * workload can judge (met or missed, with the figure); they go into the report's targets table.
 * `notes`: lines printed under the table (how a system was mapped, what was dropped and why).
 * The chart draws each workload's `primary` metric as grouped bars (one group per case).
 */

/** A system measured or a machine limit. Strings beyond these are allowed (e.g. 'fjord-3x'). */
export type SystemName = 'fjord' | 'nats' | 'redis' | 'dd' | 'iperf3' | (string & {});

export interface Figure {
  /** The row: e.g. 'produce 1 KiB acks=1 8 partitions'. */
  case: string;
  system: SystemName;
  /** The unit-bearing metric: 'MB/s', 'records/s', 'CPU s/GB', 'p99 ms', 'RSS MB', 'start-up s'. */
  metric: string;
  /** The median of `samples`. */
  value: number;
  samples: number[];
  /** True when a bigger value is better (throughput); false for latency, CPU, RSS, time. */
  higherIsBetter: boolean;
}

/** One measurement of one repeat; `ctx.medians()` turns a repeat's samples into Figures. */
export type Sample = Omit<Figure, 'samples'>;

export interface TargetCheck {
  /** As issue 26 words it: 'produce ≥ 3× NATS JetStream'. */
  target: string;
  met: boolean;
  /** The figure it was judged on: '2.8× (Fjord 240 MB/s, NATS 86 MB/s)'. */
  figure: string;
  /** For a missed target: what holds it back. */
  note?: string;
}

export interface WorkloadResult {
  figures: Figure[];
  targets?: TargetCheck[];
  notes?: string[];
}

export interface Workload {
  /** The key of `--only=`: 'produce', 'consume', 'latency', 'many-partitions', ... */
  name: string;
  /** Report order: produce 10, consume 20, compression 25, latency 30, many-partitions 40, rebalance 50, cluster 60. */
  order?: number;
  /** The section heading in RESULTS.md. */
  title: string;
  /** One paragraph for the report: what is measured, how, and how peers are mapped. */
  description: string;
  systems: readonly SystemName[];
  /** The metric the chart draws and the ratios compare (default 'MB/s'). */
  primary?: string;
  /** The system whose figure is the machine's limit for this workload's ratio column (e.g. 'iperf3'). */
  limit?: SystemName;
  run(ctx: SuiteContext): Promise<WorkloadResult>;
}

/** What every started system offers: its server process, for CPU and memory from /proc/PID. */
export interface SystemHandle {
  readonly name: SystemName;
  readonly pid: number;
  /** utime + stime of the server process so far, in seconds (/proc/PID/stat). */
  cpuSeconds(): Promise<number>;
  /** Resident set size now, in bytes (/proc/PID/status VmRSS). */
  rssBytes(): Promise<number>;
  stop(): Promise<void>;
}

export interface FjordHandle extends SystemHandle {
  /** host:port of the PLAINTEXT listener. */
  readonly bootstrap: string;
  readonly logDir: string;
  /** Milliseconds from spawn to the listener being up (start-up time). */
  readonly startMs: number;
  createTopic(name: string, partitions: number, configs?: Record<string, string>): Promise<void>;
  deleteTopic(name: string): Promise<void>;
  /** Clean shutdown then start again on the same log dir and port; resolves to the start-up ms. */
  restart(): Promise<number>;
}

export interface NatsHandle extends SystemHandle {
  /** nats://127.0.0.1:PORT */
  readonly url: string;
  readonly storeDir: string;
}

export interface RedisHandle extends SystemHandle {
  readonly port: number;
  readonly dir: string;
}

export interface ExecResult {
  code: number | null;
  stdout: string;
  stderr: string;
  ms: number;
}

export interface SuiteContext {
  readonly quick: boolean;
  readonly repeats: number;
  /** Repo root (cwd of every command). */
  readonly root: string;
  readonly tmpDir: string;
  /** Whether `--systems=` (default: all) selects this system; a workload skips the others. */
  wants(system: SystemName): boolean;
  /** 0 .. repeats-1. */
  repeatIndices(): number[];
  /** The order in which to run `systems` on repeat `repeat`: rotated left by `repeat`. */
  rotate<T>(systems: readonly T[], repeat: number): T[];
  /** Collapses samples with the same (case, system, metric) into one Figure: the median, samples kept, first-seen order. */
  medians(samples: readonly Sample[]): Figure[];
  startFjord(overrides?: Record<string, string>): Promise<FjordHandle>;
  startNats(): Promise<NatsHandle>;
  startRedis(): Promise<RedisHandle>;
  /** Path of a compiled load generator. */
  tool(name: 'rdkafka-perf' | 'nats-perf'): Promise<string>;
  exec(cmd: string, args: readonly string[], options?: { input?: string; timeoutMs?: number }): Promise<ExecResult>;
  /** Runs a command that prints one JSON object on its last stdout line; throws on a non-zero exit. */
  execJson<T = Record<string, number>>(cmd: string, args: readonly string[]): Promise<T>;
  /** Records an exact command line for the report (once per distinct line). */
  command(line: string): void;
  log(line: string): void;
}
