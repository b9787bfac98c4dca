/**
 * What makes the produce/end-to-end latency tail (issue 26): runs the latency workload's
 * measurement (bench/suite/workloads/latency.ts: `rdkafka-perf e2e` at a share of the maximum
 * rate that same client carries, found by its ramp) against one or two brokers started here, side by side in the same run (A, B, A,
 * B ... alternating which goes first), and beside each figure what the broker's own thread saw
 * in the measuring window, from bench/latency-probe.mjs: GC pauses per second (and those over
 * 1 ms), event-loop delay p99/max and samples over 2 ms, broker CPU per 1,000 records; the
 * broker's Produce TotalTimeMs p99/p99.9 over the same seconds (its metrics listener) and the
 * client's queue and round trip (librdkafka's statistics). Measures that hold up on a loaded
 * machine (counts and CPU per record) sit beside the latencies that do not.
 *
 *   node --import tsx bench/latency-breakdown.ts [--shares=0.25,0.5,0.75] [--acks=1,all] [--rounds=2] [--seconds=5] [--rate=N] [--profile=DIR] [--heap-profile]
 *
 * LATENCY_A_DIST / LATENCY_B_DIST: the builds (default: this tree's dist/ as A, no B);
 * LATENCY_A_FLAGS / LATENCY_B_FLAGS: node flags for each (e.g. "--max-semi-space-size=16");
 * LATENCY_BROKER_OUT=DIR keeps each broker's stdout in DIR/A.out, DIR/B.out (where --trace-gc writes).
 * --rate=N measures at N records/s instead of shares of the maximum (the maximum is then not measured).
 * --profile=DIR: each broker runs under node --cpu-prof (250 µs sampling) into DIR; after the run
 * the profile's event-loop blocks over 2 ms are listed with the function that took most of each.
 * --heap-profile: each broker samples its allocations (the probe's LATENCY_HEAP_PROFILE, garbage
 * included) over each measurement, and the line adds bytes allocated per Produce request: the
 * whole broker's, and the append path's (`appendRecords` inclusive: validation, arrival order,
 * partition and log append, producer state). Sampling slows the broker: leave it off for latencies.
 */
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { type FjordChild, splitFlags, startFjordChild } from './suite/fjord-child.js';
import { loadAverage, processCpuMs, processRssBytes } from './suite/measure.js';
import { median } from './suite/stats.js';
import { freePort } from './free-port.js';
import { type Harness, measuredLatency, RECORD_BYTES, sustainedMaxRate } from './suite/workloads/latency.js';

const execP = promisify(execFile);
const flags = process.argv.slice(2);
const flag = (name: string, fallback: string): string => flags.find((f) => f.startsWith(`--${name}=`))?.slice(name.length + 3) ?? fallback;
const SHARES = flag('shares', '0.25,0.5,0.75').split(',').map(Number);
const ACKS = flag('acks', '1,all').split(',') as ('1' | 'all')[];
const ROUNDS = Number(flag('rounds', '2'));
const SECONDS = Number(flag('seconds', '5'));
const WARMUP = 2;
const FIXED_RATE = flags.some((f) => f.startsWith('--rate=')) ? Number(flag('rate', '0')) : undefined;
const PROFILE = flags.some((f) => f.startsWith('--profile=')) ? path.resolve(flag('profile', '')) : undefined;
const HEAP = flags.includes('--heap-profile');
const HERE = path.dirname(fileURLToPath(import.meta.url));
const ROOT = path.join(HERE, '..');

interface Variant {
  name: 'A' | 'B';
  dist: string;
  nodeFlags: string[];
}

type Broker = FjordChild & {
  variant: Variant;
  probeFile: string;
  metricsUrl: string;
};

interface ProbeSecond {
  t: number;
  cpuMs: number;
  gcCount: number;
  gcOver1ms: number;
  gcMaxMs: number;
  gcTotalMs: number;
  gcMsByKind: Record<string, number>;
  loopP99Ms: number;
  loopMaxMs: number;
  loopOver2ms: number;
}

const variants: Variant[] = [{ name: 'A', dist: process.env.LATENCY_A_DIST ?? path.join(ROOT, 'dist'), nodeFlags: splitFlags(process.env.LATENCY_A_FLAGS) }];
if (process.env.LATENCY_B_DIST || process.env.LATENCY_B_FLAGS) {
  variants.push({ name: 'B', dist: process.env.LATENCY_B_DIST ?? path.join(ROOT, 'dist'), nodeFlags: splitFlags(process.env.LATENCY_B_FLAGS) });
}

async function startBroker(variant: Variant, work: string): Promise<Broker> {
  const probeFile = path.join(work, `${variant.name}.probe.jsonl`);
  const metricsUrl = `http://127.0.0.1:${await freePort()}`;
  const prof = PROFILE ? ['--cpu-prof', '--cpu-prof-interval=250', `--cpu-prof-dir=${path.join(PROFILE, variant.name)}`] : [];
  const b = await startFjordChild({
    name: variant.name,
    work,
    dist: variant.dist,
    props: { 'auto.create.topics.enable': 'false', 'offsets.topic.replication.factor': '1', 'metrics.listener': metricsUrl },
    nodeFlags: [...prof, ...variant.nodeFlags, '--import', path.join(HERE, 'latency-probe.mjs')],
    env: { FJORD_LOG_LEVEL: 'warn', LATENCY_PROBE_OUT: probeFile, ...(HEAP ? { LATENCY_HEAP_PROFILE: heapFile(work, variant) } : {}) },
    ...(process.env.LATENCY_BROKER_OUT ? { stdoutFile: path.join(process.env.LATENCY_BROKER_OUT, `${variant.name}.out`) } : {}),
  });
  return Object.assign(b, { variant, probeFile, metricsUrl });
}

/** The probe's seconds that ended inside [from, to]. */
async function probeWindow(b: Broker, from: number, to: number): Promise<ProbeSecond[]> {
  const text = await readFile(b.probeFile, 'utf8').catch(() => '');
  return text
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as ProbeSecond)
    .filter((s) => s.t > from + 1000 && s.t <= to);
}

const sum = (xs: number[]): number => xs.reduce((a, b) => a + b, 0);

interface Row {
  key: string;
  variant: string;
  load: string;
  text: string;
  p99: number;
  p999: number;
  ackP99: number;
  ackP999: number;
}

async function main(): Promise<void> {
  const work = await mkdtemp(path.join(tmpdir(), 'fjord-latency-'));
  const rdkafkaPerf = path.join(work, 'rdkafka-perf');
  await execP('gcc', ['-O2', '-o', rdkafkaPerf, path.join(HERE, 'rdkafka-perf.c'), '-lrdkafka', '-lpthread']);
  const h: Harness = {
    rdkafkaPerf,
    exec: async (cmd, args, o) => {
      const started = Date.now();
      return new Promise((resolve) => {
        execFile(cmd, [...args], { timeout: o?.timeoutMs ?? 300_000, maxBuffer: 64 * 1024 * 1024 }, (err, stdout, stderr) => {
          const code = err ? (typeof err.code === 'number' ? err.code : 1) : 0;
          resolve({ code, stdout, stderr, ms: Date.now() - started });
        });
      });
    },
  };
  if (PROFILE) for (const v of variants) await mkdir(path.join(PROFILE, v.name), { recursive: true });
  const brokers: Broker[] = [];
  const rows: Row[] = [];
  console.log(`load average before: ${loadAverage()}; variants: ${variants.map((v) => `${v.name}=${v.dist} ${v.nodeFlags.join(' ')}`).join('; ')}`);
  try {
    for (const v of variants) brokers.push(await startBroker(v, work));
    for (let round = 0; round < ROUNDS; round++) {
      const order = round % 2 === 0 ? brokers : [...brokers].reverse();
      for (const acks of ACKS) {
        for (const b of order) {
          let rates: { share: number; rate: number }[];
          if (FIXED_RATE !== undefined) rates = [{ share: Number.NaN, rate: FIXED_RATE }];
          else {
            const maxTopic = `max-${acks}-${round}`;
            await b.admin.createTopics([{ name: maxTopic, numPartitions: 1, replicationFactor: 1 }]);
            const { rate: max } = await sustainedMaxRate(h, b.bootstrap, maxTopic, acks, {
              start: 25_000,
              seconds: 2,
              warmupSeconds: 1,
              bisections: 2,
              log: (l) => console.log(l),
            });
            await b.admin.deleteTopics([maxTopic]);
            console.log(
              `${b.variant.name} round ${round + 1} acks=${acks}: the latency client carries ${Math.round(max)} records/s (${((max * RECORD_BYTES) / 1048576).toFixed(0)} MB/s), load ${loadavg()[0]!.toFixed(2)}`,
            );
            rates = SHARES.map((share) => ({ share, rate: max * share }));
          }
          for (const { share, rate } of rates) {
            const topic = `e2e-${acks}-${round}-${Math.round(rate)}`;
            await b.admin.createTopics([{ name: topic, numPartitions: 1, replicationFactor: 1 }]);
            const heap0 = HEAP ? await heapWindowStart(b, work) : 0;
            const cpu0 = await processCpuMs(b.pid);
            const t0 = Date.now();
            const r = await measuredLatency(h, b.bootstrap, b.metricsUrl, topic, acks, rate, SECONDS, WARMUP);
            const t1 = Date.now();
            const heap = HEAP ? await heapWindowEnd(b, work, heap0) : '';
            const cpu1 = await processCpuMs(b.pid);
            const rssMb = (await processRssBytes(b.pid)) / 1048576;
            await b.admin.deleteTopics([topic]);
            // The measured window: after the harness's warm-up, up to its end.
            const probe = await probeWindow(b, t0 + WARMUP * 1000, t1);
            const secs = Math.max(1, probe.length);
            const load = Number.isNaN(share) ? `${Math.round(rate)}/s` : `${Math.round(share * 100)}%`;
            const gcByKind: Record<string, number> = {};
            for (const s of probe) for (const [k, ms] of Object.entries(s.gcMsByKind)) gcByKind[k] = (gcByKind[k] ?? 0) + ms;
            const text =
              `${b.variant.name} acks=${acks} ${load} (${Math.round(r.rate)} rec/s, ${r.records - r.received} lost): e2e p50/p99/p99.9/max ${r.e2e.p50.toFixed(2)}/${r.e2e.p99.toFixed(2)}/${r.e2e.p999.toFixed(2)}/${r.e2e.max.toFixed(1)} ms, ` +
              `ack ${r.ack.p50.toFixed(2)}/${r.ack.p99.toFixed(2)}/${r.ack.p999.toFixed(2)}/${r.ack.max.toFixed(1)} ms | ` +
              `broker Produce p99/p99.9 ${r.broker.p99.toFixed(2)}/${r.broker.p999.toFixed(2)} ms; client queue p99 ${r.client.queue.p99.toFixed(2)} (p99.99 ${r.client.queue.p9999.toFixed(2)}), ` +
              `outbuf ${r.client.outbuf.p99.toFixed(2)}, rtt ${r.client.rtt.p99.toFixed(2)} (p99.99 ${r.client.rtt.p9999.toFixed(2)}) ms | broker CPU ${(((cpu1 - cpu0) / ((r.records * (t1 - t0)) / (SECONDS * 1000 + WARMUP * 1000))) * 1000).toFixed(1)} ms/1k rec, ` +
              `GC ${(sum(probe.map((s) => s.gcCount)) / secs).toFixed(1)}/s (${(sum(probe.map((s) => s.gcOver1ms)) / secs).toFixed(2)}/s > 1 ms, max ${Math.max(0, ...probe.map((s) => s.gcMaxMs)).toFixed(2)} ms, ${Object.entries(
                gcByKind,
              )
                .map(([k, ms]) => `${k} ${(ms / secs).toFixed(1)} ms/s`)
                .join(', ')}), ` +
              `loop delay p99 ${median(probe.map((s) => s.loopP99Ms)).toFixed(2)} ms (median second), max ${Math.max(0, ...probe.map((s) => s.loopMaxMs)).toFixed(1)} ms, ${(sum(probe.map((s) => s.loopOver2ms)) / secs).toFixed(1)} samples/s > 2 ms, RSS ${rssMb.toFixed(0)} MB${heap} | load ${loadavg()[0]!.toFixed(2)}`;
            console.log(text);
            rows.push({
              key: `${acks} ${load}`,
              variant: b.variant.name,
              load,
              text,
              p99: r.e2e.p99,
              p999: r.e2e.p999,
              ackP99: r.ack.p99,
              ackP999: r.ack.p999,
            });
          }
        }
      }
    }
  } finally {
    for (const b of brokers) await b.stop();
    await rm(work, { recursive: true, force: true });
  }
  console.log(`\nload average after: ${loadAverage()}`);
  console.log('\nmedian ack p99 / p99.9 and e2e p99 / p99.9 (ms) per variant and load:');
  for (const key of [...new Set(rows.map((r) => r.key))]) {
    const per = variants.map((v) => {
      const rs = rows.filter((r) => r.key === key && r.variant === v.name);
      const m = (f: (r: Row) => number): string => median(rs.map(f)).toFixed(2);
      return `${v.name} ack ${m((r) => r.ackP99)} / ${m((r) => r.ackP999)}, e2e ${m((r) => r.p99)} / ${m((r) => r.p999)}`;
    });
    console.log(`  acks=${key}: ${per.join('; ')}`);
  }
  if (PROFILE) for (const v of variants) await reportBlocks(path.join(PROFILE, v.name), v.name);
}

const heapFile = (work: string, v: Variant): string => path.join(work, `${v.name}.heapprofile`);

/** Produce requests the broker has answered so far (its request metrics). */
async function produceRequests(b: Broker): Promise<number> {
  const text = await (await fetch(`${b.metricsUrl}/metrics`)).text();
  let n = 0;
  for (const m of text.matchAll(/^kafka_network_requestmetrics_requests_total\{request="Produce"[^}]*\} ([\d.e+]+)$/gm)) n += Number(m[1]);
  return n;
}

/** Asks the probe to write its heap profile (SIGUSR2) and waits for the file, within 20 s. */
async function takeHeapProfile(b: Broker, work: string): Promise<string> {
  const file = heapFile(work, b.variant);
  await rm(file, { force: true });
  process.kill(b.pid, 'SIGUSR2');
  const deadline = Date.now() + 20_000;
  for (;;) {
    const text = await readFile(file, 'utf8').catch(() => '');
    if (text.endsWith('}')) return text;
    if (Date.now() > deadline) throw new Error(`${b.variant.name}: no heap profile in ${file}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** Starts a heap window: what was sampled so far is written and dropped; returns the Produce request count. */
async function heapWindowStart(b: Broker, work: string): Promise<number> {
  await takeHeapProfile(b, work);
  return produceRequests(b);
}

/** Ends a heap window: bytes allocated per Produce request in it, whole broker and append path. */
async function heapWindowEnd(b: Broker, work: string, requestsBefore: number): Promise<string> {
  const requests = (await produceRequests(b)) - requestsBefore;
  const profile = JSON.parse(await takeHeapProfile(b, work)) as { head: HeapNode };
  let total = 0;
  let appendPath = 0;
  const walk = (node: HeapNode, inAppend: boolean): number => {
    const here = node.callFrame.functionName === 'appendRecords' && node.callFrame.url.includes('leader-appends');
    let bytes = node.selfSize;
    for (const child of node.children ?? []) bytes += walk(child, inAppend || here);
    total += node.selfSize;
    if (here && !inAppend) appendPath += bytes;
    return bytes;
  };
  walk(profile.head, false);
  const per = (bytes: number): string => (requests > 0 ? (bytes / requests).toFixed(0) : 'n/a');
  return `, heap ${per(total)} B per Produce request (append path ${per(appendPath)} B; ${requests} requests)`;
}

interface HeapNode {
  callFrame: { functionName: string; url: string };
  selfSize: number;
  children?: HeapNode[];
}

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}

/**
 * Event-loop blocks over 2 ms in a CPU profile: runs of consecutive samples that are not idle,
 * each attributed to the function (self time) that took most of it; a gap between two samples
 * longer than 2 ms is the thread not running (descheduled on a busy machine) and is counted apart.
 */
async function reportBlocks(dir: string, name: string): Promise<void> {
  for (const file of (await readdir(dir)).filter((f) => f.endsWith('.cpuprofile'))) {
    const prof = JSON.parse(await readFile(path.join(dir, file), 'utf8')) as { nodes: ProfileNode[]; samples: number[]; timeDeltas: number[] };
    const byId = new Map(prof.nodes.map((n) => [n.id, n]));
    const label = (id: number): string => {
      const f = byId.get(id)!.callFrame;
      return `${f.functionName || '(anonymous)'} ${path.basename(f.url)}:${f.lineNumber + 1}`;
    };
    const idle = (id: number): boolean => ['(idle)', '(program)'].includes(byId.get(id)!.callFrame.functionName);
    const causes = new Map<string, { count: number; ms: number; worst: number }>();
    let descheduled = 0;
    let run: { ms: number; self: Map<number, number> } | undefined;
    const close = (): void => {
      if (run && run.ms > 2) {
        const top = [...run.self.entries()].sort((a, b) => b[1] - a[1])[0]![0];
        const c = causes.get(label(top)) ?? { count: 0, ms: 0, worst: 0 };
        c.count++;
        c.ms += run.ms;
        c.worst = Math.max(c.worst, run.ms);
        causes.set(label(top), c);
      }
      run = undefined;
    };
    for (let i = 0; i < prof.samples.length; i++) {
      const id = prof.samples[i]!;
      const dt = (prof.timeDeltas[i + 1] ?? 0) / 1000; // this sample stands for the time until the next one
      if (dt > 2) descheduled++;
      if (idle(id)) {
        close();
        continue;
      }
      run ??= { ms: 0, self: new Map() };
      run.ms += dt;
      run.self.set(id, (run.self.get(id) ?? 0) + dt);
    }
    close();
    const total = (prof.timeDeltas.reduce((a, b) => a + b, 0) / 1e6).toFixed(1);
    console.log(
      `\n${name} ${file} (${total} s profiled): ${descheduled} sample gaps > 2 ms (thread not running); busy runs > 2 ms by the function with most self time:`,
    );
    for (const [fn, c] of [...causes.entries()].sort((a, b) => b[1].count - a[1].count).slice(0, 15)) {
      console.log(`  ${String(c.count).padStart(5)} × (${c.ms.toFixed(0)} ms, worst ${c.worst.toFixed(1)} ms) ${fn}`);
    }
  }
}

await main();
