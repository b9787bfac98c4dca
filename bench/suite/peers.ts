/**
 * The systems `npm run bench` measures, each started as its own child process so its CPU time
 * and memory are read alone from /proc/PID: Fjord (bin/kafka-server-start.sh from dist/), NATS
 * JetStream (Debian nats-server -js, file store) and Redis (Debian redis-server, appendonly
 * everysec); plus running commands and compiling the C load generators.
 */
import { execFile, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { freePort } from '../free-port.js';
import { type FjordChild, startFjordChild, stopChild, track, waitForOutput } from './fjord-child.js';
import { processCpuSeconds, processRssBytes } from './measure.js';
import type { ExecResult, FjordHandle, NatsHandle, RedisHandle } from './workload.js';

// Where these lived before fjord-child.ts and measure.ts: the workloads import them from here too.
export { track } from './fjord-child.js';
export { processCpuSeconds, processRssBytes } from './measure.js';

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

export async function startFjord(root: string, dir: string, overrides: Record<string, string>, command: (line: string) => void): Promise<FjordHandle> {
  if (!existsSync(path.join(root, 'dist/server/main.js'))) throw new Error('Fjord is not built: run npx tsc -p tsconfig.json (or npm run build) first');
  const logDir = path.join(dir, 'fjord-logs');
  const port = await freePort();
  const props: Record<string, string> = {
    'auto.create.topics.enable': 'false',
    'offsets.topic.replication.factor': '1',
    'transaction.state.log.replication.factor': '1',
    'transaction.state.log.min.isr': '1',
    'group.initial.rebalance.delay.ms': '0',
    ...overrides,
  };
  const launch = (): Promise<FjordChild> =>
    startFjordChild({
      name: 'fjord',
      work: dir,
      launcher: 'script',
      scriptRoot: root,
      baseConfig: 'config/server.properties',
      props,
      port,
      logDir,
      ready: 'listening',
      startTimeoutMs: 300_000,
    });
  let broker = await launch();
  command(broker.args.join(' ').replace(logDir, '<tmp>/fjord-logs').replace(`:${port}`, ':PORT'));
  const handle: FjordHandle = {
    name: 'fjord',
    get pid() {
      return broker.pid;
    },
    bootstrap: broker.bootstrap,
    logDir,
    get startMs() {
      return broker.startMs;
    },
    cpuSeconds: () => processCpuSeconds(broker.pid),
    rssBytes: () => processRssBytes(broker.pid),
    async createTopic(name, partitions, configs = {}) {
      const errors = await broker.admin.createTopics([{ name, numPartitions: partitions, replicationFactor: 1, configs }], { timeoutMs: 120_000 });
      const err = errors.get(name);
      if (err) throw new Error(`creating ${name}: ${err.message}`);
    },
    async deleteTopic(name) {
      const errors = await broker.admin.deleteTopics([name], { timeoutMs: 60_000 });
      const err = errors.get(name);
      if (err) throw new Error(`deleting ${name}: ${err.message}`);
    },
    async restart() {
      await broker.stop(120_000);
      broker = await launch();
      return broker.startMs;
    },
    stop: () => broker.stop(),
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
