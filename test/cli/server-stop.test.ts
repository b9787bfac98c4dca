/**
 * Several brokers on one machine: each started with `kafka-server-start.sh -daemon` (its own
 * LOG_DIR, log dir and free port), stopped one at a time by `kafka-server-stop.sh <dir>` while
 * the other keeps serving. (Never run kafka-server-stop.sh without arguments here: it stops
 * every Fjord broker on the machine, other people's too; its test below fakes pgrep.)
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile, mkdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { run } from '../helpers/run.js';
import { Admin } from '../../src/client/index.js';
import { waitFor } from '../helpers/wait-for.js';
import { REPO_ROOT } from '../helpers/repo-root.js';

const ROOT = REPO_ROOT;
const START = join(ROOT, 'bin', 'kafka-server-start.sh');
const STOP = join(ROOT, 'bin', 'kafka-server-stop.sh');

interface Daemon {
  logDir: string; // LOG_DIR: fjordServer.out and fjordServer.pid
  dataDir: string; // log.dirs
  pid: number;
  bootstrap: string;
}

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

const until = <T>(what: string, timeoutMs: number, probe: () => Promise<T | undefined>) => waitFor(what, timeoutMs, probe, { pollMs: 100 });

/** LOG_DIRs of the daemons a test started, so cleanup finds each one's pid even when starting it failed half-way. */
const launched: string[] = [];

async function killLaunched(): Promise<void> {
  for (const logDir of launched.splice(0)) {
    const pid = Number((await readFile(join(logDir, 'fjordServer.pid'), 'utf8').catch(() => '')).trim());
    if (pid > 0 && alive(pid)) process.kill(pid, 'SIGKILL');
  }
}

async function startDaemon(base: string, name: string): Promise<Daemon> {
  const logDir = join(base, `${name}-logs`);
  launched.push(logDir);
  const dataDir = join(base, `${name}-data`);
  const props = join(base, `${name}.properties`);
  await writeFile(props, `listeners=PLAINTEXT://127.0.0.1:0\nlog.dirs=${dataDir}\ngroup.initial.rebalance.delay.ms=0\n`);
  const r = await run(START, ['-daemon', props], { env: { ...process.env, LOG_DIR: logDir }, timeoutMs: 30_000 });
  assert.equal(r.code, 0, r.stderr);
  const pid = Number((await readFile(join(logDir, 'fjordServer.pid'), 'utf8')).trim());
  assert.ok(pid > 0 && alive(pid), `pid file names a running process (${pid})`);
  // The script's GC flags for the latency tail: V8's first old-generation limit, scavenges on the event loop alone.
  // The pid is nohup's until it execs node: read the command line once it is node's.
  const argv = await until(`${name} to exec node`, 10_000, async () => {
    const args = (await readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '')).split('\0');
    return args.some((a) => a.endsWith('main.js')) ? args : undefined;
  });
  assert.ok(argv.includes('--initial-old-space-size=64') && argv.includes('--no-parallel-scavenge'), `node runs with the GC flags: ${argv.join(' ')}`);
  const out = join(logDir, 'fjordServer.out');
  const port = await until(`${name} to listen`, 60_000, async () => {
    const text = await readFile(out, 'utf8').catch(() => '');
    if (!alive(pid)) throw new Error(`${name} exited: ${text}`);
    const m = /listening on PLAINTEXT:\/\/127\.0\.0\.1:(\d+)/.exec(text);
    return m ? Number(m[1]) : undefined;
  });
  // The broker keeps its pid in each log dir while it runs.
  await until(`${name}'s .lock`, 30_000, async () =>
    (await readFile(join(dataDir, '.lock'), 'utf8').catch(() => '')).trim() === String(pid) ? true : undefined,
  );
  return { logDir, dataDir, pid, bootstrap: `127.0.0.1:${port}` };
}

async function serves(d: Daemon): Promise<string[]> {
  const admin = new Admin({ bootstrapServers: [d.bootstrap], requestTimeoutMs: 10_000 });
  try {
    return await admin.listTopics();
  } finally {
    await admin.close();
  }
}

test('two -daemon brokers on one machine are stopped one at a time by kafka-server-stop.sh <dir>', { timeout: 200_000 }, async () => {
  if (!existsSync(join(ROOT, 'dist', 'server', 'main.js'))) spawnSync('npx', ['tsc', '-p', 'tsconfig.json'], { cwd: ROOT, stdio: 'ignore' });
  const base = await mkdtemp(join(tmpdir(), 'fjord-stop-'));
  const started: Daemon[] = [];
  try {
    started.push(await startDaemon(base, 'a'));
    started.push(await startDaemon(base, 'b'));
    const [a, b] = started as [Daemon, Daemon];
    assert.notEqual(a.pid, b.pid);
    const admin = new Admin({ bootstrapServers: [b.bootstrap] });
    try {
      await admin.createTopics([{ name: 'on-b', numPartitions: 1, replicationFactor: 1 }]);
    } finally {
      await admin.close();
    }
    assert.deepEqual(await serves(a), []);

    // A second -daemon with the same LOG_DIR is refused instead of clobbering a's pid file.
    const dup = await run(START, ['-daemon', join(base, 'a.properties')], { env: { ...process.env, LOG_DIR: a.logDir }, timeoutMs: 30_000 });
    assert.equal(dup.code, 1);
    assert.match(dup.stderr, new RegExp(`A Fjord broker \\(pid ${a.pid}\\) already runs with LOG_DIR=`));

    // Stop a by its log dir: only a stops, with a bounded, reported wait.
    const stopA = await run(STOP, [a.dataDir], { env: { ...process.env, FJORD_STOP_TIMEOUT: '60' }, timeoutMs: 90_000 });
    assert.equal(stopA.code, 0, stopA.stderr);
    assert.match(stopA.stdout, new RegExp(`^Stopping Fjord broker \\(pid ${a.pid}\\): `, 'm'));
    assert.match(stopA.stdout, /^Waiting up to 60s \(FJORD_STOP_TIMEOUT\) for 1 broker\(s\) to stop$/m);
    assert.match(stopA.stdout, new RegExp(`^Fjord broker \\(pid ${a.pid}\\) stopped after \\d+\\.\\ds$`, 'm'));
    assert.doesNotMatch(stopA.stdout, new RegExp(`pid ${b.pid}`));
    assert.equal(alive(a.pid), false);
    assert.equal(existsSync(join(a.dataDir, '.lock')), false, 'a clean exit removes the pid from the log dir');
    assert.equal(existsSync(join(a.logDir, 'fjordServer.pid')), false, 'and the -daemon pid file');

    // b still serves.
    assert.ok(alive(b.pid));
    assert.deepEqual(await serves(b), ['on-b']);

    // a is not running any more: the same request is a clear error.
    const again = await run(STOP, [a.dataDir], { timeoutMs: 30_000 });
    assert.equal(again.code, 1);
    assert.match(again.stderr, /^No Fjord broker is running with .*a-data: it has no \.lock/);

    // b by its -daemon LOG_DIR this time.
    const stopB = await run(STOP, [b.logDir], { timeoutMs: 90_000 });
    assert.equal(stopB.code, 0, stopB.stderr);
    assert.match(stopB.stdout, new RegExp(`Fjord broker \\(pid ${b.pid}\\) stopped after`));
    assert.equal(alive(b.pid), false);
  } finally {
    for (const d of started) if (alive(d.pid)) process.kill(d.pid, 'SIGKILL');
    await killLaunched();
    await rm(base, { recursive: true, force: true });
  }
});

test("kafka-server-stop.sh <dir> refuses what is not a running Fjord broker's directory", { timeout: 60_000 }, async () => {
  const base = await mkdtemp(join(tmpdir(), 'fjord-stop-'));
  try {
    const notDir = await run(STOP, [join(base, 'missing')], { timeoutMs: 30_000 });
    assert.equal(notDir.code, 1);
    assert.match(notDir.stderr, /missing is not a directory/);
    // A .lock naming a live process that is no broker (this test runner): refused, not signalled.
    const foreign = join(base, 'foreign');
    await mkdir(foreign);
    await writeFile(join(foreign, '.lock'), `${process.pid}\n`);
    const r = await run(STOP, [foreign], { timeoutMs: 30_000 });
    assert.equal(r.code, 1);
    assert.match(r.stderr, new RegExp(`pid ${process.pid} in .*\\.lock is not a Fjord broker`));
    // A stale .lock (its broker was killed).
    await writeFile(join(foreign, '.lock'), '999999999\n');
    const stale = await run(STOP, [foreign], { timeoutMs: 30_000 });
    assert.equal(stale.code, 1);
    assert.match(stale.stderr, /names pid 999999999, which is not running/);
  } finally {
    await rm(base, { recursive: true, force: true });
  }
});

test('kafka-server-stop.sh without arguments names each broker it stops (pgrep faked to list only our process)', { timeout: 60_000 }, async () => {
  // The no-argument form signals every broker pgrep finds on the machine; here pgrep is a stub on
  // PATH that lists only a process this test started, so nobody else's broker is touched.
  const base = await mkdtemp(join(tmpdir(), 'fjord-stop-'));
  const child = spawn(
    process.execPath,
    ['-e', 'process.on("SIGTERM", () => setTimeout(() => process.exit(0), 300)); setInterval(() => {}, 1000); console.log("ready");'],
    { stdio: ['ignore', 'pipe', 'ignore'] },
  );
  const exited = once(child, 'exit');
  try {
    await once(child.stdout, 'data'); // its SIGTERM handler is in place
    const stub = join(base, 'bin');
    await mkdir(stub);
    await writeFile(join(stub, 'pgrep'), `#!/bin/sh\necho ${child.pid}\n`, { mode: 0o755 });
    const r = await run(STOP, [], { env: { ...process.env, PATH: `${stub}:${process.env.PATH}` }, timeoutMs: 30_000 });
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, new RegExp(`^Stopping Fjord broker \\(pid ${child.pid}\\): .*node`, 'm'));
    assert.match(r.stdout, new RegExp(`^Fjord broker \\(pid ${child.pid}\\) stopped after \\d+\\.\\ds$`, 'm'));
    assert.deepEqual(await exited, [0, null], 'it exited by its own SIGTERM handler');

    await writeFile(join(stub, 'pgrep'), '#!/bin/sh\nexit 1\n', { mode: 0o755 });
    const none = await run(STOP, [], { env: { ...process.env, PATH: `${stub}:${process.env.PATH}` }, timeoutMs: 30_000 });
    assert.equal(none.code, 1);
    assert.equal(none.stdout, 'No kafka server to stop\n');
  } finally {
    if (child.exitCode === null) child.kill('SIGKILL');
    await rm(base, { recursive: true, force: true });
  }
});
