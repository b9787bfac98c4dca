/**
 * Issue 23's measurement: produce and consume throughput and broker CPU with metrics on, beside
 * metrics off, in the same run, from the same build (this work tree's dist/):
 * - on: request and topic metrics recorded (metrics.recording.enable=true, the default) and the
 *   metrics listener on (metrics.listener=http://127.0.0.1:PORT), scraped by this bench once a
 *   second (GET /metrics, the whole text read) for as long as the broker runs;
 * - off: metrics.recording.enable=false and no listener (the default listener setting).
 * Both are child brokers (node dist/server/main.js) with the same other settings, on their own
 * temporary log dirs; the load is the librdkafka harness bench/rdkafka-perf.c, as
 * bench/produce-before-after.ts drives it: `records` records of 1 KiB, acks=1, linger.ms=5,
 * batch.size=1 MB, to a fresh topic of 1 and of 8 partitions, each produce read back from the
 * start by a consumer (assign, no group). Each round runs every row on both brokers, alternating
 * which goes first (on/off, then off/on, ...).
 *
 *   node --import tsx bench/metrics-on-off.ts [records=200000] [rounds=4] [--partitions=1,8] [--fresh] [--control] [--warmup] [--gc]
 *
 * BENCH_CPU_PROF=DIR writes each broker's main-thread CPU profile (node --cpu-prof) into DIR.
 * BENCH_NODE_FLAGS="--trace-gc ..." starts both brokers with these node flags, BENCH_ON_NODE_FLAGS the
 * "on" broker only (with --control: an A/A run that differs only by them, e.g. a V8 heap setting);
 * BENCH_DIST=DIR runs the brokers from another build; BENCH_BROKER_OUT=DIR keeps each broker's stdout in DIR/on.out and DIR/off.out (where --trace-gc writes).
 * --warmup runs one unmeasured produce and consume per broker first (the steady state: the first
 * produce to a broker pays for compiling its hot paths, more of them with metrics on).
 * --gc starts both brokers with --trace-gc and prints each one's mark-compacts and scavenges per GB
 * produced and consumed (a broker stuck restarting incremental marking after every mark-compact
 * spends far more CPU per MB: src/server/heap-tuning.ts); counts tolerate a loaded machine, times do not.
 * --swap starts the off broker first; --on=recording or --on=listener turns on only that part on the "on" broker (to tell their costs
 * apart); --fresh restarts both brokers before each round (a process's JIT decisions and memory layout
 * can favour one broker for its whole life); --control configures both as "off" (an A/A run:
 * the difference it shows is the noise of the method on this machine).
 *
 * Prints, per row, MB/s (payload) median and range, the median of each round's on/off MB/s ratio
 * (the two ran back to back, so a changing load on a shared machine mostly cancels), and the
 * broker CPU ms/MB averaged over the rounds (utime + stime from /proc/PID/stat, in 10 ms ticks:
 * one round of 200,000 records measures produce to about 3%, consume to about 12%), with on/off
 * ratios; the load average before and after; the scrapes made and their median time; and, first,
 * both brokers' CPU per second over 20 s without clients (what scraping and the process metrics
 * cost the on broker by themselves).
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { freePort } from './free-port.js';
import { type FjordChild, splitFlags, startFjordChild } from './suite/fjord-child.js';
import { loadAverage, processCpuMs } from './suite/measure.js';
import { mean, median } from './suite/stats.js';

const exec = promisify(execFile);
const positional = process.argv.slice(2).filter((a) => !a.startsWith('--'));
const flags = process.argv.slice(2).filter((a) => a.startsWith('--'));
const RECORDS = Number(positional[0] ?? 200_000);
const ROUNDS = Number(positional[1] ?? 4);
const PARTITIONS = (flags.find((f) => f.startsWith('--partitions='))?.slice('--partitions='.length) ?? '1,8').split(',').map(Number);
/** A/A control: the "on" broker is configured as the off one, to show the noise between two brokers. */
const CONTROL = flags.includes('--control');
/** Both brokers restarted before each round, so one process's JIT or memory layout cannot favour one side throughout. */
const FRESH = flags.includes('--fresh');
/** What "on" turns on: both (the issue's comparison), or only recording, or only the listener and its scrapes (to tell their costs apart). */
const ON = flags.find((f) => f.startsWith('--on='))?.slice('--on='.length) ?? 'both';
/** Start the off broker first (the two brokers' start order, and so their ports and directories, swapped). */
const SWAP = flags.includes('--swap');
/** One unmeasured produce and consume per broker and partition count first (JIT and heap warm-up), so the rounds measure the steady state. */
const WARMUP = flags.includes('--warmup');
/** Both brokers traced with --trace-gc, their collections counted (see the header). */
const GC = flags.includes('--gc');
/** How often the bench scrapes the on broker: 1 s by default (a stress figure; Prometheus is usually set to 15-60 s). */
const SCRAPE_MS = Number(flags.find((f) => f.startsWith('--scrape-interval='))?.slice('--scrape-interval='.length) ?? '1000');
const SIZE = 1024;
const MB = 1024 * 1024;
const HERE = path.dirname(fileURLToPath(import.meta.url));
const ROOT = path.join(HERE, '..');
/** The build the brokers run: this work tree's dist/, or BENCH_DIST (another build, e.g. the base commit's, to compare in one session). */
const DIST = process.env.BENCH_DIST ?? path.join(ROOT, 'dist');

type Broker = FjordChild & {
  name: 'on' | 'off';
  /** The metrics listener's port (on only). */
  metricsPort?: number;
};

interface Measured {
  mbs: number;
  cpuPerMb: number;
}

/** Where a broker's stdout goes with BENCH_BROKER_OUT or --gc (appended to across --fresh restarts). */
const brokerOut = (name: Broker['name'], work: string): string => path.join(process.env.BENCH_BROKER_OUT ?? work, `${name}.out`);

/** With --gc: a broker's mark-compacts and scavenges so far, from its --trace-gc lines. */
async function gcCounts(name: Broker['name'], work: string): Promise<{ markCompacts: number; scavenges: number }> {
  const text = await readFile(brokerOut(name, work), 'utf8');
  return { markCompacts: text.match(/: Mark-Compact /g)?.length ?? 0, scavenges: text.match(/: Scavenge /g)?.length ?? 0 };
}

async function startBroker(name: Broker['name'], work: string): Promise<Broker> {
  const on = name === 'on' && !CONTROL;
  const metricsPort = on && ON !== 'recording' ? await freePort() : undefined;
  const props: Record<string, string> = { 'auto.create.topics.enable': 'false', 'offsets.topic.replication.factor': '1' };
  if (metricsPort !== undefined) props['metrics.listener'] = `http://127.0.0.1:${metricsPort}`;
  if (!(on && ON !== 'listener')) props['metrics.recording.enable'] = 'false';
  const b = await startFjordChild({
    name,
    work,
    dist: DIST,
    props,
    nodeFlags: [
      ...(process.env.BENCH_CPU_PROF ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_CPU_PROF}`] : []),
      ...(GC ? ['--trace-gc'] : []),
      ...splitFlags(process.env.BENCH_NODE_FLAGS),
      ...(name === 'on' ? splitFlags(process.env.BENCH_ON_NODE_FLAGS) : []),
    ],
    env: { FJORD_LOG_LEVEL: 'warn', FJORD_LOG_FORMAT: 'json' },
    ...(process.env.BENCH_BROKER_OUT || GC ? { stdoutFile: brokerOut(name, work) } : {}),
  });
  return Object.assign(b, { name, ...(metricsPort !== undefined ? { metricsPort } : {}) });
}

/** Starts both brokers into `brokers` as [on, off], the off one first with --swap. */
async function startBoth(brokers: Broker[], work: string): Promise<void> {
  if (SWAP) {
    const off = await startBroker('off', work);
    brokers.push(await startBroker('on', work), off);
  } else brokers.push(await startBroker('on', work), await startBroker('off', work));
}

/** Scrapes the on broker's /metrics once a second until stopped; returns the scrape times (ms). */
function scrapeEverySecond(port: () => number | undefined): { stop: () => Promise<number[]> } {
  const times: number[] = [];
  let failed = 0;
  let stopped = false;
  let pending: Promise<void> = Promise.resolve();
  const scrape = async (): Promise<void> => {
    const at = port();
    if (at === undefined) return; // restarting, or the A/A control
    const t0 = performance.now();
    const res = await fetch(`http://127.0.0.1:${at}/metrics`);
    const text = await res.text();
    if (res.status !== 200 || !text.includes(ON === 'listener' ? 'process_cpu_seconds_total' : 'kafka_network_requestmetrics_requests_total'))
      throw new Error(`scrape answered ${res.status}`);
    times.push(performance.now() - t0);
  };
  const timer = setInterval(() => {
    // A scrape that fails (the broker being restarted under it, --fresh) is counted as failed, not fatal.
    if (!stopped) pending = scrape().catch(() => void failed++);
  }, SCRAPE_MS);
  return {
    async stop() {
      stopped = true;
      clearInterval(timer);
      await pending;
      if (failed > times.length / 10) throw new Error(`${failed} scrapes failed`);
      return times;
    },
  };
}

/** Seconds each broker is watched idle, at the start, for the CPU metrics cost without traffic. */
const IDLE_S = 20;

/** A broker's CPU ms per second over `seconds` with no client traffic. */
async function idleCpuMsPerS(b: Broker, seconds: number): Promise<number> {
  const before = await processCpuMs(b.pid);
  await new Promise((r) => setTimeout(r, seconds * 1000));
  return ((await processCpuMs(b.pid)) - before) / seconds;
}

async function perf(bin: string, args: string[]): Promise<Record<string, number>> {
  const { stdout } = await exec(bin, args, { maxBuffer: 1 << 20 });
  return JSON.parse(stdout.trim().split('\n').pop()!) as Record<string, number>;
}

async function produce(bin: string, b: Broker, topic: string): Promise<number> {
  const args = ['produce', '-b', b.bootstrap, '-t', topic, '-n', String(RECORDS), '-s', String(SIZE), '-a', '1', '-l', '5', '-B', '1000000'];
  const r = await perf(bin, args);
  if (r.failed !== 0) throw new Error(`${r.failed} records failed on ${b.name}/${topic}`);
  return r.mb_per_s!;
}

async function consume(bin: string, b: Broker, topic: string): Promise<number> {
  const r = await perf(bin, ['consume', '-b', b.bootstrap, '-t', topic, '-n', String(RECORDS)]);
  if (r.records !== RECORDS) throw new Error(`consumed ${r.records} of ${RECORDS} records on ${b.name}/${topic}`);
  return r.mb_per_s!;
}

async function measured(b: Broker, run: () => Promise<number>): Promise<Measured> {
  const before = await processCpuMs(b.pid);
  const mbs = await run();
  const cpu = (await processCpuMs(b.pid)) - before;
  return { mbs, cpuPerMb: cpu / ((RECORDS * SIZE) / MB) };
}

const range = (values: number[]): string => `${median(values).toFixed(1)} (${Math.min(...values).toFixed(0)}–${Math.max(...values).toFixed(0)})`;
const percent = (on: number, off: number): string => `${((on / off) * 100).toFixed(1)}%`;
const load = loadAverage;

async function main(): Promise<void> {
  if (!existsSync('/usr/include/librdkafka/rdkafka.h')) throw new Error('librdkafka headers not found: apt-get install librdkafka-dev');
  if (!existsSync(path.join(DIST, 'server', 'main.js'))) throw new Error('build first: npx tsc -p tsconfig.json');
  const work = await mkdtemp(path.join(tmpdir(), 'fjord-metrics-on-off-'));
  const bin = path.join(work, 'rdkafka-perf');
  await exec('gcc', ['-O2', '-o', bin, path.join(HERE, 'rdkafka-perf.c'), '-lrdkafka', '-lpthread']);
  const brokers: Broker[] = [];
  let scraper: ReturnType<typeof scrapeEverySecond> | undefined;
  try {
    const loadBefore = load();
    await startBoth(brokers, work);
    scraper = scrapeEverySecond(() => brokers[0]?.metricsPort);
    // What metrics cost with no traffic: the on broker's scrapes and process metrics, against the off broker.
    const idle = await Promise.all(brokers.map((b) => idleCpuMsPerS(b, IDLE_S)));
    const results = new Map<string, Measured[]>();
    const rows: string[] = [];
    const record = (b: Broker, row: string, m: Measured, round: number): void => {
      if (!rows.includes(row)) rows.push(row);
      const key = `${b.name}/${row}`;
      results.set(key, [...(results.get(key) ?? []), m]);
      console.error(`round ${round + 1} ${key}: ${m.mbs.toFixed(1)} MB/s, ${m.cpuPerMb.toFixed(2)} CPU ms/MB (load ${load()})`);
    };
    let topicNo = 0;
    if (WARMUP) {
      for (const partitions of PARTITIONS) {
        for (const b of brokers) {
          const topic = `onoff-warmup-${partitions}p-${topicNo++}`;
          await b.admin.createTopics([{ name: topic, numPartitions: partitions, replicationFactor: 1 }]);
          await produce(bin, b, topic);
          await consume(bin, b, topic);
          await b.admin.deleteTopics([topic]);
        }
      }
    }
    for (let round = 0; round < ROUNDS; round++) {
      if (FRESH && round > 0) {
        const old = brokers.splice(0);
        for (const b of old) await b.stop();
        await startBoth(brokers, work);
      }
      const order = round % 2 === 0 ? brokers : [...brokers].reverse();
      for (const partitions of PARTITIONS) {
        for (const b of order) {
          const topic = `onoff-${partitions}p-${topicNo++}`;
          await b.admin.createTopics([{ name: topic, numPartitions: partitions, replicationFactor: 1 }]);
          record(b, `${partitions}p produce`, await measured(b, () => produce(bin, b, topic)), round);
          record(b, `${partitions}p consume`, await measured(b, () => consume(bin, b, topic)), round);
          await b.admin.deleteTopics([topic]);
        }
      }
    }
    const scrapes = await scraper.stop();
    scraper = undefined;
    const lines = rows.map((row) => {
      const on = results.get(`on/${row}`)!;
      const off = results.get(`off/${row}`)!;
      const mbsOn = median(on.map((m) => m.mbs));
      const mbsOff = median(off.map((m) => m.mbs));
      // Over all rounds: one round's CPU is a whole number of 10 ms ticks, too coarse alone.
      const cpuOn = mean(on.map((m) => m.cpuPerMb));
      const cpuOff = mean(off.map((m) => m.cpuPerMb));
      // Each round's on and off ran one after the other: their ratio sees the same load.
      const pairedMbs = median(on.map((m, i) => m.mbs / off[i]!.mbs));
      return (
        `| ${row} | ${range(on.map((m) => m.mbs))} | ${range(off.map((m) => m.mbs))} | ${percent(mbsOn, mbsOff)} | ${(pairedMbs * 100).toFixed(1)}% | ` +
        `${cpuOn.toFixed(2)} | ${cpuOff.toFixed(2)} | ${percent(cpuOn, cpuOff)} |`
      );
    });
    // Stopped (their trace complete) before counting: the GB are each broker's produce and consume over all rounds (and the warm-up).
    for (const b of brokers.splice(0)) await b.stop();
    const gb = (RECORDS * SIZE * (ROUNDS + (WARMUP ? 1 : 0)) * PARTITIONS.length * 2) / 1024 ** 3;
    const gcLine = GC
      ? `; collections per GB produced and consumed (--trace-gc): ${(
          await Promise.all(
            (['on', 'off'] as const).map(async (name) => {
              const c = await gcCounts(name, work);
              return `${name} ${(c.markCompacts / gb).toFixed(1)} mark-compacts, ${(c.scavenges / gb).toFixed(0)} scavenges`;
            }),
          )
        ).join('; ')}`
      : '';
    const nodeFlags = [
      process.env.BENCH_NODE_FLAGS ? `node flags ${process.env.BENCH_NODE_FLAGS}; ` : '',
      process.env.BENCH_ON_NODE_FLAGS ? `on broker's node flags ${process.env.BENCH_ON_NODE_FLAGS}; ` : '',
    ].join('');
    console.log(
      `${nodeFlags}${WARMUP ? 'one warm-up produce and consume per broker, not counted; ' : ''}${CONTROL ? 'A/A CONTROL (both brokers metrics off); ' : ON !== 'both' ? `on = ${ON} only; ` : ''}${FRESH ? 'brokers restarted each round; ' : ''}${SWAP ? 'off broker started first; ' : ''}` +
        `records: ${RECORDS} x ${SIZE} B, ${ROUNDS} rounds, acks=1; load average before ${loadBefore}, after ${load()}; ` +
        `${scrapes.length} scrapes of the on broker (every ${SCRAPE_MS} ms), median ${scrapes.length > 0 ? median(scrapes).toFixed(1) : '-'} ms; ` +
        `idle for ${IDLE_S} s (no clients), broker CPU on ${idle[0]!.toFixed(1)} ms/s, off ${idle[1]!.toFixed(1)} ms/s${gcLine}\n\n` +
        '| row | on MB/s median (range) | off MB/s median (range) | on / off | on / off paired by round (median) | on CPU ms/MB (mean) | off CPU ms/MB (mean) | on / off |\n' +
        `|---|---|---|---|---|---|---|---|\n${lines.join('\n')}`,
    );
  } finally {
    await scraper?.stop().catch(() => undefined);
    for (const b of brokers) await b.stop().catch(() => undefined);
    await rm(work, { recursive: true, force: true });
  }
}

await main();
