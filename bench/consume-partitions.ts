/**
 * Consume on 1 and 8 partitions (issue 26's "consume ≥ 50% of loopback iperf3" target), two
 * builds side by side in one run, beside loopback iperf3: where the time goes on each side.
 *
 *   node --import tsx bench/consume-partitions.ts BASELINE [records=200000] [repeats=3] [--split] [--threads=N] [--partition-bytes=N]
 *
 * - BASELINE: a built checkout (a directory holding dist/ and bench/rdkafka-perf.c), or a git ref,
 *   checked out into a temporary worktree and built there (tsc) with this checkout's node_modules.
 *   This checkout's dist/ is rebuilt first.
 * - --threads=N starts both brokers with num.io.threads=N (default: the broker's, 1): at N > 1 the
 *   8 partitions live on N-1 shard workers and the main thread's CPU per MB is the network side's.
 * - --partition-bytes=N sets the consumers' max.partition.fetch.bytes (the harness asks 10 MiB,
 *   as much as its fetch.max.bytes): 1048576 makes 8 partitions' budgets fit one fetch.
 * - Each build is its broker with its own librdkafka harness (bench/rdkafka-perf.c compiled from
 *   that checkout), so a harness setting and a broker change are both "the build". --split adds
 *   the two crossings: the baseline's broker with this harness, and this broker with this
 *   harness but fetch.max.bytes=52428800 (what the harness asked for before).
 * - Each broker gets one topic per partition count holding `records` records of 1 KiB (produced
 *   once, not timed); every run reads it all from the beginning (page cache), assign, no group.
 *   Per repeat the variants and iperf3 (3 s, one stream) take turns, the order rotated; iperf3's
 *   CPU per MB (both ends, from its own report) is the floor a byte stream costs here.
 * - Per run: MB/s (MiB of payload per second, as `npm run bench`), the broker's CPU ms per MB
 *   (utime + stime from /proc/PID/stat, 10 ms steps) and its main thread's (/proc/PID/task/PID),
 *   the client's CPU ms per MB and minor page faults per MB (`/usr/bin/time`, all its threads):
 *   the CPU and fault figures are what a loaded machine does not blur; and the bytes the broker
 *   read per byte consumed (/proc/PID/io rchar: every read system call, its log reads from page
 *   cache included), which shows reads the answers did not carry. The load average is
 *   printed with every run and before and after the table.
 */
import { execFile, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { freePort } from './free-port.js';
import { type FjordChild, startBuiltBroker } from './suite/fjord-child.js';
import { loadAverage, processCpuMs, threadCpuMs } from './suite/measure.js';
import { median } from './suite/stats.js';

const exec = promisify(execFile);
const positional = process.argv.slice(2).filter((a) => !a.startsWith('--'));
const SPLIT = process.argv.includes('--split');
const BASELINE = positional[0];
const RECORDS = Number(positional[1] ?? 200_000);
const THREADS = process.argv.find((a) => a.startsWith('--threads='))?.slice('--threads='.length);
const BROKER_PROPS: Record<string, string> = THREADS ? { 'num.io.threads': THREADS } : {};
const PARTITION_BYTES = process.argv.find((a) => a.startsWith('--partition-bytes='))?.slice('--partition-bytes='.length);
const CONSUMER_PROPS = PARTITION_BYTES ? [`max.partition.fetch.bytes=${PARTITION_BYTES}`] : [];
const REPEATS = Number(positional[2] ?? 3);
const SIZE = 1024;
const MB = 1024 * 1024;
const PAYLOAD_MB = (RECORDS * SIZE) / MB;
const ROOT = path.join(path.dirname(fileURLToPath(import.meta.url)), '..');

interface Variant {
  label: string;
  broker: 'before' | 'after';
  harness: 'before' | 'after';
  extra: string[];
}

interface Run {
  mbs: number;
  brokerMsPerMb: number;
  mainThreadMsPerMb: number;
  clientMsPerMb: number;
  faultsPerMb: number;
  /** Bytes the broker read (read system calls: its log files, from page cache, and its sockets) per byte of payload consumed. */
  readPerByte: number;
}

/** Bytes a process has read through read system calls (/proc/PID/io rchar): a fetch's log reads show here whatever the cache. */
async function readBytes(pid: number): Promise<number> {
  const m = /rchar:\s+(\d+)/.exec(await readFile(`/proc/${pid}/io`, 'utf8'));
  return m ? Number(m[1]) : Number.NaN;
}

async function consume(bin: string, b: FjordChild, topic: string, extra: string[], work: string): Promise<Run> {
  const timeFile = path.join(work, 'time.txt');
  const cpu0 = await processCpuMs(b.pid);
  const main0 = await threadCpuMs(b.pid, b.pid);
  const read0 = await readBytes(b.pid);
  const { stdout } = await exec(
    '/usr/bin/time',
    ['-f', '%U %S %R', '-o', timeFile, bin, 'consume', '-b', b.bootstrap, '-t', topic, '-n', String(RECORDS), ...extra.flatMap((x) => ['-X', x])],
    { maxBuffer: 1 << 20 },
  );
  const cpu = (await processCpuMs(b.pid)) - cpu0;
  const main = (await threadCpuMs(b.pid, b.pid)) - main0;
  const read = (await readBytes(b.pid)) - read0;
  const r = JSON.parse(stdout.trim().split('\n').pop()!) as { mb_per_s: number; records: number };
  if (r.records !== RECORDS) throw new Error(`consumed ${r.records} of ${RECORDS} records on ${b.name}/${topic}`);
  const [user, sys, faults] = (await readFile(timeFile, 'utf8')).trim().split('\n').pop()!.split(' ').map(Number);
  return {
    mbs: r.mb_per_s,
    brokerMsPerMb: cpu / PAYLOAD_MB,
    mainThreadMsPerMb: main / PAYLOAD_MB,
    clientMsPerMb: ((user! + sys!) * 1000) / PAYLOAD_MB,
    faultsPerMb: faults! / PAYLOAD_MB,
    readPerByte: read / (PAYLOAD_MB * MB),
  };
}

/**
 * Loopback iperf3, one stream, 3 s: MiB/s received, and the CPU both ends spent per MB (iperf3's
 * own report: each end's share of a core over the test), the floor a byte stream costs here.
 */
async function iperf3(): Promise<{ mbs: number; cpuMsPerMb: number }> {
  const port = await freePort();
  const server = spawn('iperf3', ['-s', '-p', String(port), '-1'], { stdio: 'ignore' });
  try {
    const deadline = performance.now() + 15_000;
    for (;;) {
      const r = await exec('iperf3', ['-c', '127.0.0.1', '-p', String(port), '-t', '3', '-J']).catch((e: { stdout?: string }) => ({ stdout: e.stdout ?? '' }));
      let report: {
        end?: { sum_received?: { bytes: number; seconds: number }; cpu_utilization_percent?: { host_total: number; remote_total: number } };
      } = {};
      try {
        report = JSON.parse(r.stdout) as typeof report;
      } catch {}
      const got = report.end?.sum_received;
      const cpu = report.end?.cpu_utilization_percent;
      if (got !== undefined && got.seconds > 0) {
        const mb = got.bytes / MB;
        const cpuMs = cpu === undefined ? Number.NaN : ((cpu.host_total + cpu.remote_total) / 100) * got.seconds * 1000;
        return { mbs: mb / got.seconds, cpuMsPerMb: cpuMs / mb };
      }
      if (performance.now() > deadline || server.exitCode !== null) throw new Error(`iperf3 failed: ${r.stdout.slice(-300)}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  } finally {
    if (server.exitCode === null) server.kill();
  }
}

async function baselineRoot(work: string): Promise<{ root: string; cleanup: () => Promise<void> }> {
  if (existsSync(path.join(BASELINE!, 'dist', 'server', 'main.js'))) return { root: path.resolve(BASELINE!), cleanup: async () => undefined };
  const root = path.join(work, 'baseline');
  await exec('git', ['-C', ROOT, 'worktree', 'add', '--detach', root, BASELINE!]);
  await symlink(path.join(ROOT, 'node_modules'), path.join(root, 'node_modules'));
  await exec('npx', ['tsc', '-p', 'tsconfig.json'], { cwd: root });
  return { root, cleanup: () => exec('git', ['-C', ROOT, 'worktree', 'remove', '--force', root]).then(() => undefined) };
}

const fmt = (v: number, digits = 1): string => v.toFixed(digits);
const range = (v: number[]): string => `${fmt(median(v), 0)} (${fmt(Math.min(...v), 0)}–${fmt(Math.max(...v), 0)})`;

async function main(): Promise<void> {
  if (!BASELINE) throw new Error('usage: bench/consume-partitions.ts BASELINE_DIR_OR_REF [records] [repeats] [--split]');
  if (!existsSync('/usr/include/librdkafka/rdkafka.h')) throw new Error('librdkafka headers not found: apt-get install librdkafka-dev');
  if (!existsSync('/usr/bin/time')) throw new Error('/usr/bin/time not found: apt-get install time');
  const work = await mkdtemp(path.join(tmpdir(), 'fjord-consume-partitions-'));
  const base = await baselineRoot(work);
  const brokers = new Map<string, FjordChild>();
  try {
    await exec('npx', ['tsc', '-p', 'tsconfig.json'], { cwd: ROOT });
    const harness = { before: path.join(work, 'rdkafka-perf-before'), after: path.join(work, 'rdkafka-perf-after') };
    await exec('gcc', ['-O2', '-o', harness.before, path.join(base.root, 'bench', 'rdkafka-perf.c'), '-lrdkafka', '-lpthread']);
    await exec('gcc', ['-O2', '-o', harness.after, path.join(ROOT, 'bench', 'rdkafka-perf.c'), '-lrdkafka', '-lpthread']);
    const variants: Variant[] = [
      { label: 'before', broker: 'before', harness: 'before', extra: CONSUMER_PROPS },
      { label: 'after', broker: 'after', harness: 'after', extra: CONSUMER_PROPS },
    ];
    if (SPLIT) {
      variants.push(
        { label: 'before broker, after harness', broker: 'before', harness: 'after', extra: [] },
        { label: 'after broker, 50 MB fetches', broker: 'after', harness: 'after', extra: ['fetch.max.bytes=52428800'] },
      );
    }
    const { stdout: rev } = await exec('git', ['-C', base.root, 'log', '--oneline', '-1']).catch(() => ({ stdout: base.root }));
    brokers.set('before', await startBuiltBroker('before', base.root, work, BROKER_PROPS));
    brokers.set('after', await startBuiltBroker('after', ROOT, work, BROKER_PROPS));
    for (const b of brokers.values()) {
      for (const p of [1, 8]) {
        await b.admin.createTopics([{ name: `consume-${p}`, numPartitions: p, replicationFactor: 1 }]);
        await exec(harness.after, [
          'produce',
          '-b',
          b.bootstrap,
          '-t',
          `consume-${p}`,
          '-n',
          String(RECORDS),
          '-s',
          String(SIZE),
          '-a',
          '1',
          '-l',
          '5',
          '-B',
          '1000000',
        ]);
      }
    }
    const loadBefore = loadAverage();
    const runs = new Map<string, Run[]>();
    const limits: number[] = [];
    const limitCpu: number[] = [];
    for (let i = 0; i < REPEATS; i++) {
      const turns: (Variant | 'iperf3')[] = [...variants, 'iperf3'];
      const rotated = [...turns.slice(i % turns.length), ...turns.slice(0, i % turns.length)];
      for (const p of [1, 8]) {
        for (const v of rotated) {
          if (v === 'iperf3') {
            if (p === 1) {
              const l = await iperf3();
              limits.push(l.mbs);
              limitCpu.push(l.cpuMsPerMb);
              console.error(`iperf3 repeat ${i + 1}: ${fmt(l.mbs)} MB/s, ${fmt(l.cpuMsPerMb, 2)} CPU ms/MB both ends (load ${loadAverage()})`);
            }
            continue;
          }
          const r = await consume(harness[v.harness], brokers.get(v.broker)!, `consume-${p}`, v.extra, work);
          const key = `${p}|${v.label}`;
          runs.set(key, [...(runs.get(key) ?? []), r]);
          console.error(
            `${p} partition(s), ${v.label}, repeat ${i + 1}: ${fmt(r.mbs)} MB/s, broker ${fmt(r.brokerMsPerMb, 2)} CPU ms/MB ` +
              `(main thread ${fmt(r.mainThreadMsPerMb, 2)}), read ${fmt(r.readPerByte, 2)} B/B, client ${fmt(r.clientMsPerMb, 2)} CPU ms/MB, ${fmt(r.faultsPerMb)} faults/MB (load ${loadAverage()})`,
          );
        }
      }
    }
    const limit = median(limits);
    const rows = [1, 8].flatMap((p) =>
      variants.map((v) => {
        const rs = runs.get(`${p}|${v.label}`)!;
        const m = (f: (r: Run) => number): number => median(rs.map(f));
        return (
          `| ${p} | ${v.label} | ${range(rs.map((r) => r.mbs))} | ${(m((r) => r.mbs) / limit).toFixed(2)}× | ${fmt(
            m((r) => r.brokerMsPerMb),
            2,
          )} | ` +
          `${fmt(
            m((r) => r.mainThreadMsPerMb),
            2,
          )} | ${fmt(
            m((r) => r.clientMsPerMb),
            2,
          )} | ${fmt(m((r) => r.faultsPerMb))} | ${fmt(
            m((r) => r.readPerByte),
            2,
          )} |`
        );
      }),
    );
    console.log(
      `baseline: ${rev.trim()}; num.io.threads=${THREADS ?? 'default'}; max.partition.fetch.bytes ${PARTITION_BYTES ?? "the harness's"}; ${RECORDS} records of 1 KiB, ${REPEATS} repeats; load average before ${loadBefore}, after ${loadAverage()}; ` +
        `loopback iperf3 ${range(limits)} MB/s, ${fmt(median(limitCpu), 2)} CPU ms/MB (sender and receiver)\n\n` +
        '| partitions | build | MB/s median (range) | / iperf3 | broker CPU ms/MB | broker main thread ms/MB | client CPU ms/MB | client minor faults/MB | broker bytes read per byte consumed |\n' +
        `|---:|---|---:|---:|---:|---:|---:|---:|---:|\n${rows.join('\n')}`,
    );
  } finally {
    for (const b of brokers.values()) await b.stop().catch(() => undefined);
    await base.cleanup().catch(() => undefined);
    await rm(work, { recursive: true, force: true });
  }
}

await main().catch((err: unknown) => {
  console.error(`consume-partitions: ${err instanceof Error ? err.message : String(err)}`);
  process.exitCode = 1;
});
