/**
 * `npm run bench`: runs every workload of bench/suite/workloads/ (Fjord beside NATS JetStream,
 * Redis Streams and the machine's limits), then writes the suite's section of bench/RESULTS.md
 * and an SVG chart.
 *
 *   npm run bench -- [--quick] [--only=produce,consume] [--systems=fjord,nats] [--repeats=3]
 *                    [--out=bench/RESULTS.md] [--svg=bench/suite-chart.svg]
 *
 * --quick: small sizes and 1 repeat (a smoke test). --only: workload names (default all).
 * --systems: the systems to run (default all; fjord,fjord-threads,nats,redis,dd,iperf3; fjord-threads is Fjord at num.io.threads = the core count). The npm script first
 * installs the peers (scripts/install-bench-deps.sh) and builds dist/ when src/ changed (the
 * broker runs from dist/). Exits 1 when a workload failed (its section says why).
 */
import { readdirSync, rmSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { cpus, loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { renderChart } from './chart.js';
import { compileTool, exec, startFjord, startNats, startRedis } from './peers.js';
import { renderSection, replaceSection, type WorkloadOutcome } from './report.js';
import { medians, rotate } from './stats.js';
import type { SuiteContext, SystemName, Workload } from './workload.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
/** The workloads' extension: this module's own, .ts under tsx, .js where the tests run compiled (scripts/test-build.sh). */
const MODULE_EXT = path.extname(fileURLToPath(import.meta.url));
const ALL_SYSTEMS = ['fjord', 'fjord-threads', 'nats', 'redis', 'dd', 'iperf3'];

export interface SuiteOptions {
  quick: boolean;
  only: string[] | null;
  systems: string[] | null;
  repeats: number;
  out: string;
  svg: string;
}

const USAGE = 'usage: npm run bench -- [--quick] [--only=a,b] [--systems=fjord,fjord-threads,nats,redis,dd,iperf3] [--repeats=N] [--out=FILE] [--svg=FILE]';

export function parseArgs(argv: readonly string[]): SuiteOptions {
  const o: SuiteOptions = { quick: false, only: null, systems: null, repeats: 3, out: 'bench/RESULTS.md', svg: 'bench/suite-chart.svg' };
  let repeatsGiven = false;
  for (const arg of argv) {
    const [flag, value] = arg.includes('=') ? [arg.slice(0, arg.indexOf('=')), arg.slice(arg.indexOf('=') + 1)] : [arg, undefined];
    const list = () => (value ?? '').split(',').filter((s) => s.length > 0);
    if (flag === '--quick' && value === undefined) o.quick = true;
    else if (flag === '--only' && value) o.only = list();
    else if (flag === '--systems' && value) o.systems = list();
    else if (flag === '--repeats' && value && /^[1-9]\d*$/.test(value)) {
      o.repeats = Number(value);
      repeatsGiven = true;
    } else if (flag === '--out' && value) o.out = value;
    else if (flag === '--svg' && value) o.svg = value;
    else throw new Error(`unknown or malformed argument ${arg}; ${USAGE}`);
  }
  if (o.quick && !repeatsGiven) o.repeats = 1;
  for (const s of o.systems ?? []) if (!ALL_SYSTEMS.includes(s)) throw new Error(`unknown system ${s} (known: ${ALL_SYSTEMS.join(', ')})`);
  return o;
}

/** Every workload file's default export, ordered by `order` then `name`. */
export async function loadWorkloads(dir = path.join(ROOT, 'bench/suite/workloads')): Promise<Workload[]> {
  const files = readdirSync(dir)
    .filter((f) => f.endsWith(MODULE_EXT) && !f.endsWith('.d.ts'))
    .sort();
  const all: Workload[] = [];
  for (const f of files) {
    const mod = (await import(pathToFileURL(path.join(dir, f)).href)) as { default?: Workload | Workload[] };
    if (mod.default === undefined) throw new Error(`bench/suite/workloads/${f} has no default export (a Workload or an array of them)`);
    all.push(...(Array.isArray(mod.default) ? mod.default : [mod.default]));
  }
  const names = new Set<string>();
  for (const w of all) {
    if (names.has(w.name)) throw new Error(`two workloads are named ${w.name}`);
    names.add(w.name);
  }
  return all.sort((a, b) => (a.order ?? 100) - (b.order ?? 100) || a.name.localeCompare(b.name));
}

const load = () =>
  loadavg()
    .map((l) => l.toFixed(2))
    .join(' ');

export async function runSuite(options: SuiteOptions, invocation: string): Promise<{ outcomes: WorkloadOutcome[]; failed: boolean }> {
  const t0 = performance.now();
  const log = (line: string) => process.stderr.write(`[${((performance.now() - t0) / 1000).toFixed(1)} s] ${line}\n`);
  const all = await loadWorkloads();
  for (const name of options.only ?? []) {
    if (!all.some((w) => w.name === name)) throw new Error(`unknown workload ${name} (known: ${all.map((w) => w.name).join(', ')})`);
  }
  const selected = all.filter((w) => options.only === null || options.only.includes(w.name));
  const tmpDir = await mkdtemp(path.join(tmpdir(), 'fjord-bench-suite-'));
  // Removed on any exit, a crash included (the servers are killed first: peers.ts's exit hook).
  process.on('exit', () => {
    try {
      rmSync(tmpDir, { recursive: true, force: true });
    } catch {} // a killed server may still be closing its files: a temp dir left over is harmless
  });
  const commands: string[] = [];
  const command = (line: string) => {
    if (!commands.includes(line)) commands.push(line);
  };
  const tools = new Map<string, Promise<string>>();
  const ctx: SuiteContext = {
    quick: options.quick,
    repeats: options.repeats,
    root: ROOT,
    tmpDir,
    wants: (system: SystemName) => options.systems === null || options.systems.includes(system),
    repeatIndices: () => Array.from({ length: options.repeats }, (_, i) => i),
    rotate,
    medians,
    startFjord: (overrides = {}) => mkdtemp(path.join(tmpDir, 'fjord-')).then((dir) => startFjord(ROOT, dir, overrides, command)),
    startNats: () => mkdtemp(path.join(tmpDir, 'nats-')).then((dir) => startNats(dir, command)),
    startRedis: () => mkdtemp(path.join(tmpDir, 'redis-')).then((dir) => startRedis(dir, command)),
    tool: (name) => {
      let t = tools.get(name);
      if (t === undefined) {
        t = compileTool(ROOT, tmpDir, name, command);
        tools.set(name, t);
      }
      return t;
    },
    exec: (cmd, args, opts) => exec(cmd, args, { ...opts, cwd: ROOT }),
    async execJson<T>(cmd: string, args: readonly string[]): Promise<T> {
      const r = await exec(cmd, args, { cwd: ROOT });
      if (r.code !== 0) throw new Error(`${path.basename(cmd)} ${args.join(' ')} exited with ${r.code}: ${r.stderr.trim().slice(-1000)}`);
      return JSON.parse(r.stdout.trim().split('\n').pop()!) as T;
    },
    command,
    log,
  };
  const started = performance.now();
  const startedAt = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
  const loadBefore = load();
  const outcomes: WorkloadOutcome[] = [];
  try {
    for (const workload of selected) {
      log(`== ${workload.name}: ${workload.title} (load average ${load()})`);
      try {
        outcomes.push({ workload, result: await workload.run(ctx) });
      } catch (err) {
        log(`${workload.name} failed: ${(err as Error).stack ?? err}`);
        outcomes.push({ workload, error: (err as Error).message });
      }
    }
  } finally {
    await rm(tmpDir, { recursive: true, force: true });
  }
  const section = renderSection(
    {
      invocation,
      startedAt,
      seconds: (performance.now() - started) / 1000,
      repeats: options.repeats,
      quick: options.quick,
      nproc: cpus().length,
      cpuModel: cpus()[0]?.model.trim() ?? 'unknown CPU',
      loadBefore,
      loadAfter: load(),
      commands,
    },
    outcomes,
    path.relative(path.dirname(path.resolve(ROOT, options.out)), path.resolve(ROOT, options.svg)),
  );
  const outPath = path.resolve(ROOT, options.out);
  const existing = await readFile(outPath, 'utf8').catch(() => '');
  await writeFile(outPath, replaceSection(existing, section));
  await writeFile(path.resolve(ROOT, options.svg), renderChart(outcomes, `npm run bench, ${startedAt}, ${cpus().length} cores, load ${loadBefore}`));
  log(section);
  return { outcomes, failed: outcomes.some((o) => o.error !== undefined) };
}

if (process.argv[1] !== undefined && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  // Ctrl-C or a kill: exit through the exit hooks, which stop the servers and remove the temp dir.
  for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => process.exit(130));
  const argv = process.argv.slice(2);
  if (argv.includes('--help') || argv.includes('-h')) {
    console.log(USAGE);
    process.exit(0);
  }
  try {
    const options = parseArgs(argv);
    const { failed } = await runSuite(options, ['npm run bench', ...(argv.length > 0 ? ['--', ...argv] : [])].join(' '));
    process.exit(failed ? 1 : 0);
  } catch (err) {
    console.error(`npm run bench: ${(err as Error).message}`);
    process.exit(1);
  }
}
