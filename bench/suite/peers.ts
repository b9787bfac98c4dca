/**
 * The systems `npm run bench` measures, each started as its own child process so its CPU time
 * and memory are read alone from /proc/PID: Fjord (bin/kafka-server-start.sh from dist/), NATS
 * JetStream (Debian nats-server -js, file store) and Redis (Debian redis-server, appendonly
 * everysec); plus running commands and compiling the C load generators.
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { Admin } from '../../src/client/index.js';
import { freePort } from '../free-port.js';
import type { ExecResult, FjordHandle, NatsHandle, RedisHandle } from './workload.js';

const CLOCK_TICKS = 100; // USER_HZ on Linux

/** Servers and load generators started and not yet exited: killed when the runner exits, even on a crash or Ctrl-C. */
const live = new Set<ChildProcess>();
process.on('exit', () => {
  for (const child of live) child.kill('SIGKILL');
});

export function track<T extends ChildProcess>(child: T): T {
  live.add(child);
  child.once('exit', () => live.delete(child));
  return child;
}

/** utime + stime of a process, in seconds. */
export async function processCpuSeconds(pid: number): Promise<number> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
  // The command name may hold spaces and parentheses: fields count from after the last ')'.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS;
}

export async function processRssBytes(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  const m = /VmRSS:\s+(\d+) kB/.exec(status);
  return m ? Number(m[1]) * 1024 : Number.NaN;
}

export function exec(cmd: string, args: readonly string[], options: { input?: string; timeoutMs?: number; cwd?: string } = {}): Promise<ExecResult> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = track(spawn(cmd, args, { stdio: [options.input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'], cwd: options.cwd }));
    let out = '';
    let err = '';
    const timer = options.timeoutMs === undefined ? undefined : setTimeout(() => child.kill('SIGKILL'), options.timeoutMs);
    child.stdout?.on('data', (d: Buffer) => {
      if (out.length < 1 << 20) out += d.toString();
    });
    child.stderr?.on('data', (d: Buffer) => {
      if (err.length < 1 << 16) err += d.toString();
    });
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout: out, stderr: err, ms: performance.now() - started });
    });
    if (child.stdin !== null) {
      // A command that exits without reading its input must not fail the run with EPIPE.
      child.stdin.on('error', () => undefined);
      child.stdin.end(options.input);
    }
  });
}

/** Waits for `pattern` on the child's stdout or stderr; rejects when it exits first or after `timeoutMs`. */
function waitForOutput(child: ChildProcess, pattern: RegExp, what: string, timeoutMs = 60_000): Promise<RegExpExecArray> {
  return new Promise((resolve, reject) => {
    let seen = '';
    const timer = setTimeout(() => finish(new Error(`${what} did not start within ${timeoutMs} ms: ${seen.slice(-1500)}`)), timeoutMs);
    const onData = (d: Buffer): void => {
      seen += d.toString();
      if (seen.length > 1 << 16) seen = seen.slice(-(1 << 15));
      const m = pattern.exec(seen);
      if (m) finish(null, m);
    };
    const onExit = (code: number | null): void => finish(new Error(`${what} exited with ${code}: ${seen.slice(-1500)}`));
    function finish(err: Error | null, m?: RegExpExecArray): void {
      clearTimeout(timer);
      child.stdout?.off('data', onData);
      child.stderr?.off('data', onData);
      child.off('exit', onExit);
      // Keep draining so a chatty server never blocks on a full pipe.
      child.stdout?.resume();
      child.stderr?.resume();
      if (err) reject(err);
      else resolve(m!);
    }
    child.stdout?.on('data', onData);
    child.stderr?.on('data', onData);
    child.once('exit', onExit);
  });
}

/** SIGTERM, then SIGKILL after `graceMs`; resolves when the process is gone. */
async function stopChild(child: ChildProcess, graceMs = 20_000): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
  await exited;
  clearTimeout(timer);
}

export async function startFjord(root: string, dir: string, overrides: Record<string, string>, command: (line: string) => void): Promise<FjordHandle> {
  if (!existsSync(path.join(root, 'dist/server/main.js'))) throw new Error('Fjord is not built: run npx tsc -p tsconfig.json (or npm run build) first');
  const logDir = path.join(dir, 'fjord-logs');
  await mkdir(logDir, { recursive: true });
  const port = await freePort();
  const props: Record<string, string> = {
    listeners: `PLAINTEXT://127.0.0.1:${port}`,
    'log.dirs': logDir,
    'auto.create.topics.enable': 'false',
    'offsets.topic.replication.factor': '1',
    'transaction.state.log.replication.factor': '1',
    'transaction.state.log.min.isr': '1',
    'group.initial.rebalance.delay.ms': '0',
    ...overrides,
  };
  const args = ['config/server.properties', ...Object.entries(props).flatMap(([k, v]) => ['--override', `${k}=${v}`])];
  command(`bin/kafka-server-start.sh ${args.join(' ')}`.replace(logDir, '<tmp>/fjord-logs').replace(`:${port}`, ':PORT'));
  let child: ChildProcess;
  const launch = async (): Promise<number> => {
    const started = performance.now();
    child = track(spawn('bin/kafka-server-start.sh', args, { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] }));
    await waitForOutput(child, /listening on PLAINTEXT:\/\//, 'Fjord', 300_000);
    return performance.now() - started;
  };
  let startMs = await launch();
  const bootstrap = `127.0.0.1:${port}`;
  const admin = new Admin({ bootstrapServers: bootstrap });
  const handle: FjordHandle = {
    name: 'fjord',
    get pid() {
      return child.pid!;
    },
    bootstrap,
    logDir,
    get startMs() {
      return startMs;
    },
    cpuSeconds: () => processCpuSeconds(child.pid!),
    rssBytes: () => processRssBytes(child.pid!),
    async createTopic(name, partitions, configs = {}) {
      const errors = await admin.createTopics([{ name, numPartitions: partitions, replicationFactor: 1, configs }], { timeoutMs: 120_000 });
      const err = errors.get(name);
      if (err) throw new Error(`creating ${name}: ${err.message}`);
    },
    async deleteTopic(name) {
      const errors = await admin.deleteTopics([name], { timeoutMs: 60_000 });
      const err = errors.get(name);
      if (err) throw new Error(`deleting ${name}: ${err.message}`);
    },
    async restart() {
      await stopChild(child, 120_000);
      startMs = await launch();
      return startMs;
    },
    async stop() {
      await admin.close().catch(() => {});
      await stopChild(child);
    },
  };
  return handle;
}

export async function startNats(dir: string, command: (line: string) => void): Promise<NatsHandle> {
  const storeDir = path.join(dir, 'nats-store');
  await mkdir(storeDir, { recursive: true });
  const port = await freePort();
  const args = ['-js', '-a', '127.0.0.1', '-p', String(port), '-sd', storeDir];
  command(`nats-server ${args.join(' ')}`.replace(storeDir, '<tmp>/nats-store').replace(` ${port} `, ' PORT '));
  const child = track(spawn('nats-server', args, { stdio: ['ignore', 'pipe', 'pipe'] }));
  await waitForOutput(child, /Server is ready/, 'nats-server');
  return {
    name: 'nats',
    pid: child.pid!,
    url: `nats://127.0.0.1:${port}`,
    storeDir,
    cpuSeconds: () => processCpuSeconds(child.pid!),
    rssBytes: () => processRssBytes(child.pid!),
    stop: () => stopChild(child),
  };
}

export async function startRedis(dir: string, command: (line: string) => void): Promise<RedisHandle> {
  const redisDir = path.join(dir, 'redis');
  await mkdir(redisDir, { recursive: true });
  const port = await freePort();
  // In the foreground (no --daemonize) so the child is the server and stops with the run.
  const args = ['--port', String(port), '--bind', '127.0.0.1', '--dir', redisDir, '--appendonly', 'yes', '--appendfsync', 'everysec', '--save', ''];
  command(`redis-server ${args.join(' ')}`.replace(redisDir, '<tmp>/redis').replace(` ${port} `, ' PORT '));
  const child = track(spawn('redis-server', args, { stdio: ['ignore', 'pipe', 'pipe'] }));
  await waitForOutput(child, /Ready to accept connections/, 'redis-server');
  return {
    name: 'redis',
    pid: child.pid!,
    port,
    dir: redisDir,
    cpuSeconds: () => processCpuSeconds(child.pid!),
    rssBytes: () => processRssBytes(child.pid!),
    stop: () => stopChild(child),
  };
}

const TOOLS = {
  'rdkafka-perf': { source: 'bench/rdkafka-perf.c', libs: ['-lrdkafka', '-lpthread'], header: '/usr/include/librdkafka/rdkafka.h', pkg: 'librdkafka-dev' },
  'nats-perf': { source: 'bench/nats-perf.c', libs: ['-lnats', '-lpthread'], header: '/usr/include/nats/nats.h', pkg: 'libnats-dev' },
} as const;

/** Compiles a load generator into `dir` (gcc -O2); says which package brings a missing header. */
export async function compileTool(root: string, dir: string, name: keyof typeof TOOLS, command: (line: string) => void): Promise<string> {
  const t = TOOLS[name];
  if (!existsSync(t.header)) throw new Error(`${t.header} not found: run scripts/install-bench-deps.sh (apt-get install ${t.pkg})`);
  const bin = path.join(dir, name);
  const args = ['-O2', '-o', bin, path.join(root, t.source), ...t.libs];
  command(`gcc ${args.join(' ').replace(`${dir}/`, '<tmp>/').replace(`${root}/`, '')}`);
  await promisify(execFile)('gcc', args);
  return bin;
}
