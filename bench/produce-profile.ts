/**
 * Where a single broker's CPU goes, by stage of the data path (issue 26: the shares the
 * multi-core design in docs/threads.md is predicted from).
 *
 *   node --import tsx bench/produce-profile.ts [records=1000000] [--partitions=1,8] [--keep=DIR]
 *
 * - One child broker (node dist/server/main.js; build with `npx tsc -p tsconfig.json` first) runs
 *   under `node --cpu-prof --cpu-prof-interval=200`; the librdkafka harness (bench/rdkafka-perf.c)
 *   produces `records` records of 1 KiB (acks=1, linger.ms=5, batch.size=1 MB, no compression)
 *   to a fresh topic, then consumes them from the beginning (page cache), for each partition count.
 * - Each workload is a window of the one profile: the profile's timestamps and this process's
 *   process.hrtime are both CLOCK_MONOTONIC, so the samples taken between a workload's start and
 *   end are that workload's, without start-up or topic creation.
 * - A sample's stage is that of the innermost frame of its stack that a rule in STAGES matches
 *   (the CRC32C call inside an append counts as validation, the writeSync under it as append).
 * - Beside the profile: each thread's CPU over the window (/proc/PID/task/TID/stat, utime and
 *   stime): the main (JS) thread, libuv's pool (async file reads), V8's helper threads (concurrent
 *   GC and compilation). The main thread's share is what one event loop serialises today.
 * - --keep=DIR keeps the .cpuprofile (open it in Chrome DevTools or speedscope).
 * - --strace: also counts the broker's system calls per MB over each window (`strace -c -f`,
 *   all threads). ptrace slows every call, so throughput, shares and CPU of such a run are not
 *   comparable with a run without it; the counts are what it is for (how many writes, reads,
 *   epoll waits and futex wake-ups a MB costs: the kernel half of the main thread's CPU).
 */
import { execFile, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { copyFile, mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { type FjordChild, startFjordChild } from './suite/fjord-child.js';
import { loadAverage } from './suite/measure.js';

const exec = promisify(execFile);
const positional = process.argv.slice(2).filter((a) => !a.startsWith('--'));
const flags = process.argv.slice(2).filter((a) => a.startsWith('--'));
const RECORDS = Number(positional[0] ?? 1_000_000);
const PARTITIONS = (flags.find((f) => f.startsWith('--partitions='))?.slice(13) ?? '1,8').split(',').map(Number);
const KEEP = flags.find((f) => f.startsWith('--keep='))?.slice(7);
const STRACE = flags.includes('--strace');
const SIZE = 1024;
const MB = 1024 * 1024;
const HERE = path.dirname(fileURLToPath(import.meta.url));
const ROOT = path.join(HERE, '..');
const load = loadAverage;

/** A stage of the data path and how to recognise its frames (url path part, function name). */
interface Stage {
  name: string;
  url?: RegExp;
  fn?: RegExp;
}

// Order matters only between rules that can match the same frame; the innermost matching frame wins.
const STAGES: Stage[] = [
  { name: 'GC', fn: /^\(garbage collector\)$/ },
  { name: 'idle', fn: /^\(idle\)$/ },
  { name: 'metrics', url: /\/server\/metrics\/|prom-client/ },
  {
    name: 'validation (CRC32C, record walk, decompression)',
    url: /\/protocol\/records\/(compression|validate|record-walk|batch-entries)|\/storage\/append\/produce-validation|lz4|zstd|snappy/,
  },
  { name: 'validation (CRC32C, record walk, decompression)', fn: /crc|inflate|gunzip|decompress/i },
  {
    name: 'fetch read (file reads)',
    url: /\/storage\/log\/log-read|\/storage\/segment\/batch-scan|\/replication\/fetch\/|\/replication\/partition\/partition-reads/,
  },
  // The read side of storage/segment and storage/log (segment-file.ts serves appends and reads: told apart by function).
  {
    name: 'fetch read (file reads)',
    url: /\/storage\/(segment|log)\/|\/replication\/fetch\/|node:internal\/fs\/promises/,
    fn: /^(read|readAt|readFrom\w*|scanBatchHeaders|findBatch|acquire|release|pinned|fsCall|fetch\w*|collectAbortedTxns|get logStartOffset)$/,
  },
  {
    name: 'append (log write syscalls, index, producer state, HW)',
    url: /\/storage\/(log|segment|append)\/|\/replication\/(append|partition|delayed)\//,
    fn: /./,
  },
  { name: 'append (log write syscalls, index, producer state, HW)', fn: /^writeSync$/ },
  {
    name: 'response encode + socket write',
    url: /\/server\/network\/(response-|large-answers)|node:internal\/stream_base_commons|node:net|node:internal\/streams\/writable/,
  },
  { name: 'response encode + socket write', fn: /^(write|encode|writeTo|encodeResponse|sizeOf|size)[A-Z_]?\w*$/, url: /\/protocol\/(messages|primitives)\// },
  { name: 'request decode', url: /\/protocol\/(messages|primitives|records)\// },
  { name: 'socket read + framing', url: /\/server\/network\/(frame-|connection|socket-server|request-)|node:internal\/streams\/readable/ },
  { name: 'socket read + framing', fn: /^onStreamRead$/ },
  { name: 'handlers (routing, authz, quotas, assembly)', url: /\/server\/(handlers|quotas|request-|dispatch)|\/server\/[a-z-]+\.js$/ },
  { name: 'native, unattributed (libuv poll, epoll, C++)', fn: /^\(program\)$/ },
];
const OTHER = 'other JS (timers, promises, logging)';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string };
  children?: number[];
}
interface CpuProfile {
  nodes: ProfileNode[];
  startTime: number;
  samples: number[];
  timeDeltas: number[];
}

function matches(rule: Stage, frame: ProfileNode['callFrame']): boolean {
  if (rule.url && !rule.url.test(frame.url)) return false;
  if (rule.fn && !rule.fn.test(frame.functionName)) return false;
  return rule.url !== undefined || rule.fn !== undefined;
}

/** The stage of every node: its own frame's if a rule matches it, else its parent's. */
function stageOfNodes(profile: CpuProfile): Map<number, string> {
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const stage = new Map<number, string>();
  const resolve = (id: number): string => {
    const known = stage.get(id);
    if (known) return known;
    const node = byId.get(id)!;
    const own = STAGES.find((rule) => matches(rule, node.callFrame))?.name;
    const up = parent.get(id);
    const s = own ?? (up === undefined ? OTHER : resolve(up));
    stage.set(id, s);
    return s;
  };
  for (const n of profile.nodes) resolve(n.id);
  return stage;
}

/** Self time (µs) per stage and per leaf function, for the samples inside [fromUs, toUs]. */
function window(profile: CpuProfile, fromUs: number, toUs: number): { stages: Map<string, number>; leaves: Map<string, number>; total: number } {
  const stageOf = stageOfNodes(profile);
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, ProfileNode>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n);
  const stages = new Map<string, number>();
  const leaves = new Map<string, number>();
  let t = profile.startTime;
  let total = 0;
  for (let i = 0; i < profile.samples.length; i++) {
    t += profile.timeDeltas[i]!;
    // A sample stands for the time until the next one.
    const dt = profile.timeDeltas[i + 1] ?? 0;
    if (t < fromUs || t > toUs) continue;
    const id = profile.samples[i]!;
    const s = stageOf.get(id)!;
    stages.set(s, (stages.get(s) ?? 0) + dt);
    const f = byId.get(id)!.callFrame;
    // A native leaf (no url) is named by its caller too: writeBuffer under fs.writeSync is a log append, under a socket a response.
    const caller = f.url === '' && !f.functionName.startsWith('(') ? ` < ${parent.get(id)?.callFrame.functionName ?? '?'}` : '';
    const leaf = `[${s.slice(0, 12)}] ${f.functionName || '(anonymous)'}${caller} ${f.url.replace(/^.*\/(dist|node_modules)\//, '').replace(/^file:\/\//, '')}`;
    leaves.set(leaf, (leaves.get(leaf) ?? 0) + dt);
    total += dt;
  }
  return { stages, leaves, total };
}

/** CPU ms (user, system) per thread name, from /proc/PID/task/TID/stat. */
async function threadCpu(pid: number): Promise<Map<string, { user: number; system: number }>> {
  const out = new Map<string, { user: number; system: number }>();
  for (const tid of await readdir(`/proc/${pid}/task`).catch(() => [] as string[])) {
    const stat = await readFile(`/proc/${pid}/task/${tid}/stat`, 'utf8').catch(() => '');
    if (!stat) continue;
    const comm = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
    // Node 20 names neither libuv's pool nor V8's platform threads; the profiler's own thread is ProfEvntProc.
    const name =
      tid === String(pid)
        ? 'main thread (JS event loop)'
        : comm === 'node'
          ? 'other threads (libuv pool: async fs; V8 platform: concurrent GC, JIT)'
          : comm.includes('ProfEvnt')
            ? 'profiler thread (measurement overhead)'
            : `other (${comm})`;
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const prev = out.get(name) ?? { user: 0, system: 0 };
    // utime and stime, fields 14 and 15 of the file, in clock ticks (100/s).
    out.set(name, { user: prev.user + Number(f[11]) * 10, system: prev.system + Number(f[12]) * 10 });
  }
  return out;
}

function cpuDelta(
  a: Map<string, { user: number; system: number }>,
  b: Map<string, { user: number; system: number }>,
): Map<string, { user: number; system: number }> {
  const d = new Map<string, { user: number; system: number }>();
  for (const [k, v] of b) {
    const p = a.get(k) ?? { user: 0, system: 0 };
    d.set(k, { user: v.user - p.user, system: v.system - p.system });
  }
  return d;
}

function startBroker(work: string, profDir: string): Promise<FjordChild> {
  return startFjordChild({
    name: 'broker',
    work,
    props: { 'auto.create.topics.enable': 'false', 'offsets.topic.replication.factor': '1' },
    logDir: path.join(work, 'logs'),
    // Under --strace the profiler stays off: its sampling signals would be most of the calls counted.
    nodeFlags: STRACE ? [] : ['--cpu-prof', '--cpu-prof-interval=200', `--cpu-prof-dir=${profDir}`],
    env: { FJORD_LOG_LEVEL: 'warn', FJORD_LOG_FORMAT: 'json' },
  });
}

async function harness(bin: string, args: string[]): Promise<number> {
  const { stdout } = await exec(bin, args, { maxBuffer: 1 << 20 });
  const r = JSON.parse(stdout.trim().split('\n').pop()!) as { mb_per_s: number; failed?: number; records?: number };
  if ((r.failed ?? 0) !== 0 || (r.records !== undefined && r.records !== RECORDS)) throw new Error(`rdkafka-perf ${args[0]}: ${stdout}`);
  return r.mb_per_s;
}

interface Workload {
  name: string;
  fromUs: number;
  toUs: number;
  mbs: number;
  load: string;
  threads: Map<string, { user: number; system: number }>;
  /** --strace: calls per system call name over the window. */
  syscalls?: Map<string, number>;
}

/** Attaches `strace -c -f` to pid; the returned function detaches it and gives the calls per name. */
async function straceCounts(pid: number, out: string): Promise<() => Promise<Map<string, number>>> {
  const child = spawn('strace', ['-c', '-f', '-q', '-o', out, '-p', String(pid)], { stdio: ['ignore', 'ignore', 'pipe'] });
  let err = '';
  child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
  // strace says nothing when attached: give it a moment, failing early if it exits (no ptrace).
  await new Promise((r) => setTimeout(r, 500));
  if (child.exitCode !== null) throw new Error(`strace could not attach: ${err.trim()}`);
  return async () => {
    const exited = new Promise((r) => child.once('exit', r));
    child.kill('SIGINT');
    await exited;
    const counts = new Map<string, number>();
    // Summary rows: % time, seconds, usecs/call, calls, [errors,] syscall.
    for (const line of (await readFile(out, 'utf8')).split('\n')) {
      const f = line.trim().split(/\s+/);
      if (f.length < 5 || !/^[\d.]+$/.test(f[0]!) || f.at(-1) === 'total') continue;
      counts.set(f.at(-1)!, Number(f[3]));
    }
    return counts;
  };
}

async function readProfile(profDir: string): Promise<CpuProfile> {
  const file = (await readdir(profDir)).find((f) => f.endsWith('.cpuprofile'));
  if (!file) throw new Error('the broker wrote no .cpuprofile');
  if (KEEP) await copyFile(path.join(profDir, file), path.join(KEEP, file));
  return JSON.parse(await readFile(path.join(profDir, file), 'utf8')) as CpuProfile;
}

const nowUs = (): number => Number(process.hrtime.bigint() / 1000n);

async function main(): Promise<void> {
  if (!existsSync('/usr/include/librdkafka/rdkafka.h')) throw new Error('librdkafka headers not found: apt-get install librdkafka-dev');
  if (!existsSync(path.join(ROOT, 'dist', 'server', 'main.js'))) throw new Error('dist/ not built: run npx tsc -p tsconfig.json');
  const work = await mkdtemp(path.join(tmpdir(), 'fjord-profile-'));
  const profDir = path.join(work, 'prof');
  const bin = path.join(work, 'rdkafka-perf');
  await exec('gcc', ['-O2', '-o', bin, path.join(HERE, 'rdkafka-perf.c'), '-lrdkafka', '-lpthread']);
  const workloads: Workload[] = [];
  const b = await startBroker(work, profDir);
  const pid = b.pid;
  try {
    const measure = async (name: string, args: string[]): Promise<void> => {
      const loadBefore = load();
      const detach = STRACE ? await straceCounts(pid, path.join(work, `strace-${workloads.length}.txt`)) : undefined;
      const cpuBefore = await threadCpu(pid);
      const fromUs = nowUs();
      const mbs = await harness(bin, args);
      const toUs = nowUs();
      const threads = cpuDelta(cpuBefore, await threadCpu(pid));
      const syscalls = await detach?.();
      workloads.push({ name, fromUs, toUs, mbs, load: `${loadBefore} → ${load()}`, threads, ...(syscalls ? { syscalls } : {}) });
      console.error(`${name}: ${mbs.toFixed(1)} MB/s`);
    };
    for (const p of PARTITIONS) {
      const topic = `profile-${p}`;
      await b.admin.createTopics([{ name: topic, numPartitions: p, replicationFactor: 1 }]);
      const common = ['-b', b.bootstrap, '-t', topic, '-n', String(RECORDS)];
      await measure(`produce ${p}p acks=1`, ['produce', ...common, '-s', String(SIZE), '-a', '1', '-l', '5', '-B', '1000000']);
      await measure(`consume ${p}p`, ['consume', ...common]);
    }
  } finally {
    // The profile is written as the broker exits: give it time before SIGKILL.
    await b.stop(120_000);
  }
  const profile = STRACE ? { nodes: [], startTime: 0, samples: [], timeDeltas: [] } : await readProfile(profDir);
  const stageNames = [...new Set([...STAGES.map((s) => s.name), OTHER])];
  const results = workloads.map((w) => ({ w, ...window(profile, w.fromUs, w.toUs) }));
  const pct = (part: number, whole: number): string => (whole > 0 ? `${((part / whole) * 100).toFixed(1)}%` : '–');
  console.log(`records: ${RECORDS} x ${SIZE} B per workload; profile interval 200 µs; node ${process.version}\n`);
  console.log(`| stage (share of the main thread's busy time) | ${results.map((r) => r.w.name).join(' | ')} |`);
  console.log(`|---|${results.map(() => '---').join('|')}|`);
  const busy = (r: (typeof results)[number]): number => r.total - (r.stages.get('idle') ?? 0);
  for (const s of STRACE ? [] : stageNames.filter((n) => n !== 'idle'))
    console.log(`| ${s} | ${results.map((r) => pct(r.stages.get(s) ?? 0, busy(r))).join(' | ')} |`);
  console.log(`| idle (share of the window) | ${results.map((r) => pct(r.stages.get('idle') ?? 0, r.total)).join(' | ')} |`);
  console.log(`| main thread busy ms per MB (profile) | ${results.map((r) => (busy(r) / 1000 / ((RECORDS * SIZE) / MB)).toFixed(2)).join(' | ')} |`);
  console.log(`| MB/s (harness) | ${results.map((r) => r.w.mbs.toFixed(1)).join(' | ')} |`);
  console.log(`| window s / profiled s | ${results.map((r) => `${((r.w.toUs - r.w.fromUs) / 1e6).toFixed(2)} / ${(r.total / 1e6).toFixed(2)}`).join(' | ')} |`);
  console.log(`| load average before → after | ${results.map((r) => r.w.load).join(' | ')} |`);
  const threadNames = [...new Set(results.flatMap((r) => [...r.w.threads.keys()]))].sort();
  console.log(`\n| thread: CPU ms per MB (user + system) | ${results.map((r) => r.w.name).join(' | ')} |`);
  console.log(`|---|${results.map(() => '---').join('|')}|`);
  const mbOf = (RECORDS * SIZE) / MB;
  for (const t of threadNames) {
    console.log(
      `| ${t} | ${results
        .map((r) => {
          const c = r.w.threads.get(t) ?? { user: 0, system: 0 };
          return `${((c.user + c.system) / mbOf).toFixed(2)} (${(c.user / mbOf).toFixed(2)} + ${(c.system / mbOf).toFixed(2)})`;
        })
        .join(' | ')} |`,
    );
  }
  if (STRACE) {
    const names = [
      ...new Set(
        results.flatMap((r) =>
          [...(r.w.syscalls ?? new Map<string, number>()).entries()]
            .sort((a, b2) => b2[1] - a[1])
            .slice(0, 12)
            .map(([n]) => n),
        ),
      ),
    ];
    console.log(
      `\n(strace attached, profiler off: the figures above are slowed by ptrace)\n\n| system calls per MB (all threads) | ${results.map((r) => r.w.name).join(' | ')} |`,
    );
    console.log(`|---|${results.map(() => '---').join('|')}|`);
    for (const n of names) console.log(`| ${n} | ${results.map((r) => ((r.w.syscalls?.get(n) ?? 0) / mbOf).toFixed(1)).join(' | ')} |`);
  }
  for (const r of STRACE ? [] : results) {
    const top = [...r.leaves]
      .filter(([f]) => !f.includes('(idle)'))
      .sort((a, b2) => b2[1] - a[1])
      .slice(0, 15);
    console.log(`\n${r.w.name}: top self time (share of busy time)\n${top.map(([f, us]) => `  ${pct(us, busy(r)).padStart(6)}  ${f}`).join('\n')}`);
  }
  await rm(work, { recursive: true, force: true });
}

await main();
