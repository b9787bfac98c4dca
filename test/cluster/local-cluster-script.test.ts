/**
 * bin/fjord-local-cluster.sh on free ports and a temp folder: start brings up ZooKeeper and three
 * registered brokers, status reports them, stop stops exactly those (another Fjord broker on the
 * machine keeps running) and frees the ports.
 */
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort } from '../interop/groups/crash-helpers.js';
import { waitFor } from '../helpers/cluster.js';
import { requirePeer } from '../helpers/peers.js';
import { run } from '../helpers/run.js';
import { zkCli } from '../helpers/zookeeper.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const SCRIPT = join(ROOT, 'bin', 'fjord-local-cluster.sh');
const cleanups: (() => Promise<unknown>)[] = [];
after(async () => {
  for (const c of cleanups.reverse()) await c().catch(() => undefined);
});

const listening = (port: number): Promise<boolean> =>
  new Promise((resolve) => {
    const s = connect(port, '127.0.0.1');
    s.on('connect', () => (s.destroy(), resolve(true)));
    s.on('error', () => resolve(false));
  });
const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

test('start -> zkCli ls /brokers/ids is [0, 1, 2] -> status -> stop (only what it started)', { timeout: 200_000 }, async (t) => {
  if (!requirePeer(t, 'zookeeper')) return;
  if (!existsSync(join(ROOT, 'dist', 'server', 'main.js'))) spawnSync('npx', ['tsc', '-p', 'tsconfig.json'], { cwd: ROOT, stdio: 'ignore' });
  const base = await mkdtemp(join(tmpdir(), 'fjord-local-cluster-'));
  cleanups.push(() => rm(base, { recursive: true, force: true }));
  const dir = join(base, 'cluster');
  const [zkPort, ...ports] = [await freePort(), await freePort(), await freePort(), await freePort()] as [number, ...number[]];
  const args = ['--dir', dir];

  // A Fjord broker the script did not start: stop must leave it alone.
  const otherLogDir = join(base, 'other');
  const otherPort = await freePort();
  const other = await run(
    join(ROOT, 'bin', 'kafka-server-start.sh'),
    [
      '-daemon',
      join(ROOT, 'config', 'server.properties'),
      '--override',
      `listeners=PLAINTEXT://127.0.0.1:${otherPort}`,
      '--override',
      `log.dirs=${join(base, 'other-data')}`,
    ],
    { env: { ...process.env, LOG_DIR: otherLogDir } },
  );
  assert.equal(other.code, 0, other.stderr);
  const otherPid = Number(readFileSync(join(otherLogDir, 'fjordServer.pid'), 'utf8'));
  cleanups.push(() => run(join(ROOT, 'bin', 'kafka-server-stop.sh'), [otherLogDir]));
  await waitFor('the other broker to listen', 60_000, () => listening(otherPort));

  cleanups.push(() => run(SCRIPT, ['stop', ...args], { timeoutMs: 120_000 }));
  const started = Date.now();
  const start = await run(SCRIPT, ['start', ...args, '--zookeeper-port', String(zkPort), '--ports', ports.join(',')], { timeoutMs: 150_000 });
  t.diagnostic(`start took ${Date.now() - started} ms`);
  assert.equal(start.code, 0, `${start.stdout}\n${start.stderr}`);
  assert.match(
    start.stdout,
    new RegExp(`bootstrap servers: ${ports.map((p) => `127\\.0\\.0\\.1:${p}`).join(',')}; zookeeper\\.connect: 127\\.0\\.0\\.1:${zkPort}`),
  );

  const ls = await zkCli(zkPort, 'ls', '/brokers/ids');
  assert.ok(
    ls
      .split('\n')
      .map((l) => l.trim())
      .includes('[0, 1, 2]'),
    ls,
  );
  for (const p of ports) assert.ok(await listening(p), `broker on ${p}`);
  for (const id of [0, 1, 2]) {
    assert.ok(existsSync(join(dir, `broker-${id}`, 'kafka-logs', 'meta.properties')), `broker ${id} log dir`);
    assert.match(readFileSync(join(dir, `broker-${id}`, 'fjordServer.out'), 'utf8'), new RegExp(`broker\\.id=${id}, zookeeper 127\\.0\\.0\\.1:${zkPort}`));
  }

  // status and stop need only --dir: start recorded the ports.
  const status = await run(SCRIPT, ['status', ...args]);
  assert.equal(status.code, 0, status.stdout);
  assert.equal(status.stdout.split('\n').filter((l) => l.includes(': running (pid ')).length, 4, status.stdout);

  const stop = await run(SCRIPT, ['stop', ...args], { timeoutMs: 120_000 });
  assert.equal(stop.code, 0, `${stop.stdout}\n${stop.stderr}`);
  assert.match(stop.stdout, /ZooKeeper stopped/);
  for (const p of [zkPort, ...ports]) assert.equal(await listening(p), false, `port ${p} still listening after stop`);
  assert.equal(existsSync(join(dir, 'zookeeper', 'zookeeper.pid')), false);
  for (const id of [0, 1, 2]) assert.equal(existsSync(join(dir, `broker-${id}`, 'fjordServer.pid')), false);
  assert.ok(alive(otherPid), 'stop must not stop a broker it did not start');
  assert.ok(await listening(otherPort));

  const after = await run(SCRIPT, ['status', ...args]);
  assert.equal(after.code, 1);
  assert.equal(after.stdout.split('\n').filter((l) => l.endsWith(': not running')).length, 4, after.stdout);
});
