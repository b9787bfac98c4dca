/**
 * A Fjord broker in a child process, the one way every bench starts one: from a build (a dist/
 * directory, or this tree's src/ under tsx), with server properties, node flags and environment,
 * on a free port and a log dir under the bench's temporary directory; resolved once it answers
 * (its listening line, or a Metadata request), with its PID for /proc CPU readings, and stopped
 * with SIGTERM (SIGKILL after a grace period). Also the child-process plumbing the suite's other
 * servers share: `track` (killed when the bench exits), `waitForOutput`, `stopChild`.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, openSync } from 'node:fs';
import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Admin } from '../../src/client/index.js';
import { freePort } from '../free-port.js';

/** This checkout's root (bench/suite/../..). */
export const REPO_ROOT = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

/** Servers and load generators started and not yet exited: killed when the bench exits, even on a crash or Ctrl-C. */
const live = new Set<ChildProcess>();
process.on('exit', () => {
  for (const child of live) child.kill('SIGKILL');
});

export function track<T extends ChildProcess>(child: T): T {
  live.add(child);
  child.once('exit', () => live.delete(child));
  return child;
}

/** Waits for `pattern` on the child's stdout or stderr; rejects when it exits first or after `timeoutMs`. */
export function waitForOutput(child: ChildProcess, pattern: RegExp, what: string, timeoutMs = 60_000): Promise<RegExpExecArray> {
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
export async function stopChild(child: ChildProcess, graceMs = 20_000): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
  await exited;
  clearTimeout(timer);
}

/** Splits a flags variable ("--a --b=1") into arguments. */
export function splitFlags(flags: string | undefined): string[] {
  return (flags ?? '').split(' ').filter((f) => f !== '');
}

export interface FjordChildOptions {
  /** Names the broker in errors and in its files under `work` (NAME.properties, NAME-logs-*). */
  name: string;
  /** The bench's temporary directory (the bench removes it). */
  work: string;
  /** The build: a dist/ directory (default: this tree's dist/), or 'source' (src/server/main.ts under tsx, from the repo root). */
  dist?: string;
  /**
   * How it is launched: 'node' (default: node NODE_FLAGS DIST/server/main.js CONFIG) or
   * 'script' (bin/kafka-server-start.sh CONFIG --override ..., from `scriptRoot`, its own node flags).
   */
  launcher?: 'node' | 'script';
  /** The checkout whose bin/kafka-server-start.sh runs ('script' only; default this one). */
  scriptRoot?: string;
  /** Server properties besides listeners and log.dirs (which this module sets). */
  props?: Record<string, string>;
  /** A properties file the properties override (--override k=v); default: NAME.properties under `work`, holding them all. */
  baseConfig?: string;
  /** Node flags before the main module ('node' launcher). */
  nodeFlags?: readonly string[];
  /** Environment added to this process's. */
  env?: Record<string, string>;
  /** Appends the broker's stdout to this file (e.g. where --trace-gc writes); default: discarded. */
  stdoutFile?: string;
  /**
   * 'metadata' (default): resolved once a Metadata request (describeCluster) is answered, polled;
   * stderr goes to the bench's. 'listening': once the broker prints its PLAINTEXT listening line
   * (stdout and stderr piped, read, then drained), the start-up time without polling's granularity.
   */
  ready?: 'metadata' | 'listening';
  /** The listener's port and the log dir, to start again where a stopped broker was. */
  port?: number;
  logDir?: string;
  /** How long it may take to answer (ms; default 60 s). */
  startTimeoutMs?: number;
}

export interface FjordChild {
  readonly name: string;
  readonly child: ChildProcess;
  readonly pid: number;
  readonly port: number;
  /** 127.0.0.1:PORT */
  readonly bootstrap: string;
  readonly logDir: string;
  /** The command line it was started with (for a bench's printed commands). */
  readonly args: readonly string[];
  /** An admin client connected to it (closed by stop). */
  readonly admin: Admin;
  /** Milliseconds from spawn to ready. */
  readonly startMs: number;
  /** Closes the admin client, then SIGTERM (SIGKILL after `graceMs`); resolves when the process is gone. */
  stop(graceMs?: number): Promise<void>;
}

/** Starts a broker and resolves once it answers; rejects (and kills it) when it exits or times out first. */
export async function startFjordChild(o: FjordChildOptions): Promise<FjordChild> {
  const source = o.dist === 'source';
  const main = source ? path.join(REPO_ROOT, 'src', 'server', 'main.ts') : path.join(o.dist ?? path.join(REPO_ROOT, 'dist'), 'server', 'main.js');
  if (!existsSync(main)) throw new Error(`${main} is missing: build first (npx tsc -p tsconfig.json)`);
  const port = o.port ?? (await freePort());
  const logDir = o.logDir ?? (await mkdtemp(path.join(o.work, `${o.name.replace(/\W+/g, '-')}-logs-`)));
  await mkdir(logDir, { recursive: true });
  const props: Record<string, string> = { listeners: `PLAINTEXT://127.0.0.1:${port}`, 'log.dirs': logDir, ...o.props };
  let configArgs: string[];
  if (o.baseConfig !== undefined) configArgs = [o.baseConfig, ...Object.entries(props).flatMap(([k, v]) => ['--override', `${k}=${v}`])];
  else {
    const config = path.join(o.work, `${o.name.replace(/\W+/g, '-')}.properties`);
    await writeFile(
      config,
      Object.entries(props)
        .map(([k, v]) => `${k}=${v}\n`)
        .join(''),
    );
    configArgs = [config];
  }
  const [cmd, args] =
    o.launcher === 'script'
      ? ['bin/kafka-server-start.sh', configArgs]
      : [process.execPath, [...(o.nodeFlags ?? []), ...(source ? ['--import', 'tsx'] : []), main, ...configArgs]];
  const listening = o.ready === 'listening';
  const stdout = listening ? 'pipe' : o.stdoutFile !== undefined ? openSync(o.stdoutFile, 'a') : 'ignore';
  const started = performance.now();
  const child = track(
    spawn(cmd, args, {
      cwd: o.launcher === 'script' ? (o.scriptRoot ?? REPO_ROOT) : REPO_ROOT,
      stdio: ['ignore', stdout, listening ? 'pipe' : 'inherit'],
      env: { ...process.env, ...o.env },
    }),
  );
  const bootstrap = `127.0.0.1:${port}`;
  const admin = new Admin({ bootstrapServers: bootstrap, connectTimeoutMs: 30000 });
  const timeoutMs = o.startTimeoutMs ?? 60_000;
  try {
    if (listening) await waitForOutput(child, /listening on PLAINTEXT:\/\//, `broker ${o.name}`, timeoutMs);
    else {
      // A probe client of its own with a short connect timeout: a describeCluster still retrying when
      // the broker exits must not hold this process for the long timeout the bench's client has.
      const probe = new Admin({ bootstrapServers: bootstrap, connectTimeoutMs: 1000 });
      await answering(probe, child, o.name, timeoutMs).finally(() => probe.close().catch(() => undefined));
    }
  } catch (err) {
    await admin.close().catch(() => undefined);
    await stopChild(child, 5000);
    throw err;
  }
  const startMs = performance.now() - started;
  return {
    name: o.name,
    child,
    pid: child.pid!,
    port,
    bootstrap,
    logDir,
    args: [cmd, ...args],
    admin,
    startMs,
    async stop(graceMs = 20_000) {
      await admin.close().catch(() => undefined);
      await stopChild(child, graceMs);
    },
  };
}

/** Polls describeCluster until answered; throws when the broker exits (at once, not after a connect timeout) or `timeoutMs` passes. */
async function answering(admin: Admin, child: ChildProcess, name: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  const exited = new Promise<never>((_, reject) => {
    const onExit = (code: number | null, signal: string | null): void => reject(new Error(`broker ${name} did not start: it exited (${code ?? signal})`));
    if (child.exitCode !== null || child.signalCode !== null) onExit(child.exitCode, child.signalCode);
    else child.once('exit', onExit);
  });
  exited.catch(() => undefined); // rejected later, after the broker answered, it is nobody's error
  for (;;) {
    try {
      await Promise.race([admin.describeCluster(), exited]);
      return;
    } catch (err) {
      if (child.exitCode !== null || child.signalCode !== null) throw err;
      if (Date.now() > deadline) throw new Error(`broker ${name} did not start within ${timeoutMs} ms: ${String(err)}`);
      await new Promise((r) => setTimeout(r, 200));
    }
  }
}

/** This tree's broker from source under tsx (no build needed): config/server.properties with `props` over it, its log dir `dir`. */
export function startSourceBroker(dir: string, props: Record<string, string>): Promise<FjordChild> {
  return startFjordChild({ name: 'broker', work: dir, dist: 'source', baseConfig: 'config/server.properties', props, logDir: dir, ready: 'listening' });
}

/** The broker built under `root` (its dist/), quiet, no auto-creation: what the two-build benches compare. */
export function startBuiltBroker(name: string, root: string, work: string, props: Record<string, string> = {}): Promise<FjordChild> {
  return startFjordChild({
    name,
    work,
    dist: path.join(root, 'dist'),
    props: { 'auto.create.topics.enable': 'false', 'offsets.topic.replication.factor': '1', ...props },
    env: { FJORD_LOG_LEVEL: 'warn', FJORD_LOG_FORMAT: 'json' },
  });
}
