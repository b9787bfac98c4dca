/**
 * bin/zookeeper-server-start.sh, zookeeper-server-stop.sh and zookeeper-shell.sh on Debian's
 * ZooKeeper, run as a user runs them: two servers from copies of the shipped
 * config/zookeeper.properties (only dataDir and clientPort changed: this machine's port 2181 and
 * /tmp/zookeeper are not the test's to take), one with -daemon (stopped by its LOG_DIR), one in
 * the foreground (stopped by its properties file); each stop leaves the other server running.
 * The shell answers one-shot commands after the address. Without Debian's ZooKeeper each script
 * says so in one line. The stop-everything form (no argument) is never run here: other suites
 * share the machine.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { requirePeer } from '../helpers/peers.js';
import { run } from '../helpers/run.js';
import { freePort } from '../interop/groups/crash-helpers.js';
import { waitFor } from '../helpers/cluster.js';
import { parseZkList } from '../helpers/zookeeper.js';
import { parseProperties } from '../../src/config/properties.js';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const SHIPPED = join(ROOT, 'config', 'zookeeper.properties');
/** A small heap: the suites share the machine (the script's default is Kafka's 512 MB). */
const ENV = { ...process.env, KAFKA_HEAP_OPTS: '-Xmx128m' };

let dir = '';
const started: ChildProcess[] = [];
const daemonPids: number[] = [];
before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'fjord-zk-scripts-'));
});
after(async () => {
  for (const c of started) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  for (const pid of daemonPids) if (isAlive(pid)) process.kill(pid, 'SIGKILL');
  await rm(dir, { recursive: true, force: true });
});

const script = (name: string, args: string[], env: NodeJS.ProcessEnv = ENV) => run(join(ROOT, 'bin', name), args, { timeoutMs: 60_000, env });

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/**
 * Whether a ZooKeeper serves on the port: `srvr` (the one four-letter word ZooKeeper 3.8 allows
 * by default) says `Mode: standalone` once it does; a server still starting accepts connections
 * and drops them.
 */
function serving(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = connect(port, '127.0.0.1');
    let out = '';
    s.setTimeout(2000, () => s.destroy());
    s.on('connect', () => s.write('srvr'));
    s.on('data', (d: Buffer) => (out += d.toString()));
    s.on('close', () => resolve(/Mode: standalone/.test(out)));
    s.on('error', () => undefined);
  });
}

/** A copy of the shipped file on its own port and data dir, every other line as shipped. */
async function serverConfig(name: string): Promise<{ file: string; port: number }> {
  const port = await freePort();
  const text = readFileSync(SHIPPED, 'utf8')
    .replace(/^dataDir=.*$/m, `dataDir=${join(dir, name, 'data')}`)
    .replace(/^clientPort=.*$/m, `clientPort=${port}`);
  const file = join(dir, `${name}.properties`);
  await writeFile(file, text);
  return { file, port };
}

async function shellLs(port: number, path: string): Promise<string[]> {
  const r = await script('zookeeper-shell.sh', [`127.0.0.1:${port}`, 'ls', path]);
  assert.equal(r.code, 0, r.stderr);
  return parseZkList(r.stdout);
}

test("the shipped config/zookeeper.properties: Kafka 3.9's keys and values", () => {
  const props = parseProperties(readFileSync(SHIPPED, 'utf8'));
  assert.deepEqual(Object.fromEntries(props), { dataDir: '/tmp/zookeeper', clientPort: '2181', maxClientCnxns: '0', 'admin.enableServer': 'false' });
});

test('zookeeper-server-start.sh (-daemon and foreground), zookeeper-shell.sh one-shot commands, zookeeper-server-stop.sh <LOG_DIR> / <config>', {
  timeout: 120_000,
}, async (t) => {
  if (!requirePeer(t, 'zookeeper')) return;
  const a = await serverConfig('a');
  const b = await serverConfig('b');
  const logDir = join(dir, 'logs-a');
  const daemon = await script('zookeeper-server-start.sh', ['-daemon', a.file], { ...ENV, LOG_DIR: logDir });
  assert.equal(daemon.code, 0, daemon.stderr);
  const pidA = Number(readFileSync(join(logDir, 'zookeeper.pid'), 'utf8'));
  daemonPids.push(pidA);
  const foreground = spawn(join(ROOT, 'bin', 'zookeeper-server-start.sh'), [b.file], { env: ENV, stdio: ['ignore', 'pipe', 'pipe'] });
  started.push(foreground);
  let out = '';
  foreground.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  await waitFor('both servers serving', 60_000, async () => (await serving(a.port)) && (await serving(b.port)));
  assert.match(out, /INFO org\.apache\.zookeeper\.server\.quorum\.QuorumPeerConfig - Reading configuration from: /, 'the log on stdout');
  assert.match(readFileSync(join(logDir, 'zookeeper.out'), 'utf8'), /Reading configuration from: /, '-daemon: the log in $LOG_DIR/zookeeper.out');

  // One-shot commands after the address, as Kafka's zookeeper-shell.sh.
  const created = await script('zookeeper-shell.sh', [`127.0.0.1:${a.port}`, 'create', '/fjord', 'hello']);
  assert.equal(created.code, 0, created.stderr);
  assert.match(created.stdout, /^Connecting to 127\.0\.0\.1:\d+\n/);
  assert.deepEqual(await shellLs(a.port, '/'), ['fjord', 'zookeeper']);
  const got = await script('zookeeper-shell.sh', [`127.0.0.1:${a.port}`, 'get', '/fjord']);
  assert.equal(got.stdout.trimEnd().split('\n').at(-1), 'hello');
  const missing = await script('zookeeper-shell.sh', [`127.0.0.1:${a.port}`, 'get', '/nope']);
  assert.equal(missing.code, 1);
  assert.match(missing.stderr, /Node does not exist: \/nope/);
  assert.doesNotMatch(missing.stderr, /SLF4J|Exiting JVM/, 'no logging noise');
  assert.deepEqual(await shellLs(b.port, '/'), ['zookeeper'], 'the second server is another one');

  // Stop by LOG_DIR: only that server goes.
  const stopA = await script('zookeeper-server-stop.sh', [logDir]);
  assert.equal(stopA.code, 0, stopA.stderr);
  assert.equal(isAlive(pidA), false, 'the -daemon server exited before the script returned');
  assert.equal(await serving(b.port), true, 'the other server still runs');
  assert.equal(foreground.exitCode, null);

  // Stop by its properties file, however the path is spelled.
  const exitedB = once(foreground, 'exit');
  const stopB = await script('zookeeper-server-stop.sh', [`${dir}/../${basename(dir)}/./b.properties`]);
  assert.equal(stopB.code, 0, stopB.stderr);
  await exitedB;
  assert.equal(await serving(b.port), false);

  const none = await script('zookeeper-server-stop.sh', [b.file]);
  assert.equal(none.code, 1);
  assert.equal(none.stderr, `No zookeeper server is running from ${b.file}\n`);
  const stale = await script('zookeeper-server-stop.sh', [logDir]);
  assert.equal(stale.code, 1);
  assert.match(stale.stderr, /^No zookeeper server is running with .*: .*zookeeper\.pid names pid \d+, which is not a running ZooKeeper server\n$/);
});

test("without Debian's ZooKeeper, and without arguments: one line, exit 1", async () => {
  const noZk = { ...ENV, FJORD_ZOOKEEPER_JAR: join(dir, 'absent', 'zookeeper.jar') };
  for (const [name, args] of [
    ['zookeeper-shell.sh', ['127.0.0.1:2181', 'ls', '/']],
    ['zookeeper-server-start.sh', [SHIPPED]],
    ['zookeeper-server-start.sh', ['-daemon', SHIPPED]],
  ] as const) {
    const r = await script(name, [...args], noZk);
    assert.equal(r.code, 1, name);
    assert.equal(r.stdout, '');
    assert.equal(r.stderr, `${name}: Debian's ZooKeeper is not installed (${noZk.FJORD_ZOOKEEPER_JAR} is missing): apt-get install zookeeper\n`);
  }
  const usage = await script('zookeeper-shell.sh', []);
  assert.equal(usage.code, 1);
  assert.match(usage.stdout, /^USAGE: .*zookeeper-shell\.sh zookeeper_host:port\[\/path\] \[args\.\.\.\]\n$/);
  const startUsage = await script('zookeeper-server-start.sh', ['-daemon']);
  assert.equal(startUsage.code, 1);
  assert.match(startUsage.stdout, /^USAGE: .*zookeeper-server-start\.sh \[-daemon\] zookeeper\.properties\n$/);
  const notAFile = await script('zookeeper-server-stop.sh', [join(dir, 'nothing-here')]);
  assert.equal(notAFile.code, 1);
  assert.equal(notAFile.stderr, `${join(dir, 'nothing-here')} is neither a zookeeper.properties file nor a LOG_DIR\n`);
});
