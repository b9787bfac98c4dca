/**
 * num.io.threads as a user runs it (docs/threads.md "Step 1, wired"): bin/kafka-server-start.sh
 * with a server.properties at num.io.threads=3 hosts the partitions on 2 shard worker threads
 * (a log line says so, the process has the threads), kcat writes to 8 partitions and reads every
 * record back, and the log directory is the same format at any thread count: a clean restart at
 * num.io.threads=1 reads everything back, and one at 3 again after that. The default is 1, and
 * cluster mode runs single-threaded with one warning line.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, readdirSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Admin } from '../../src/client/index.js';
import { requirePeer } from '../helpers/peers.js';
import { waitFor } from '../helpers/wait-for.js';
import { kcatConsume, kcatProduce } from '../interop/kcat-helpers.js';
import { buildBrokerConfig } from '../../src/server/config/index.js';
import { shardWorkerCount } from '../../src/server/shard-wiring.js';
import { REPO_ROOT } from '../helpers/repo-root.js';

const ROOT = REPO_ROOT;
const START = join(ROOT, 'bin', 'kafka-server-start.sh');
const TOPIC = 'spread';

interface Running {
  child: ChildProcess;
  out: () => string;
  bootstrap: string;
}

async function startBroker(base: string, threads: number): Promise<Running> {
  const props = join(base, `threads-${threads}.properties`);
  await writeFile(props, `listeners=PLAINTEXT://127.0.0.1:0\nlog.dirs=${join(base, 'data')}\nnum.io.threads=${threads}\ngroup.initial.rebalance.delay.ms=0\n`);
  const child = spawn(START, [props], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, FJORD_TEST_IO_THREADS: '' } });
  let text = '';
  child.stdout!.on('data', (d: Buffer) => (text += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (text += d.toString()));
  const port = await waitFor(
    `the broker at num.io.threads=${threads} to listen`,
    60_000,
    async () => {
      if (child.exitCode !== null) throw new Error(`the broker exited with ${child.exitCode}: ${text}`);
      const m = /listening on PLAINTEXT:\/\/127\.0\.0\.1:(\d+)|"port":(\d+)[^\n]*"msg":"listening"/.exec(text);
      return m ? Number(m[1] ?? m[2]) : undefined;
    },
    { pollMs: 50 },
  );
  return { child, out: () => text, bootstrap: `127.0.0.1:${port}` };
}

async function stopBroker(b: Running): Promise<void> {
  const exited = once(b.child, 'exit');
  b.child.kill('SIGTERM');
  const [code] = (await exited) as [number | null];
  assert.equal(code, 0, `a clean stop exits 0: ${b.out().slice(-2000)}`);
}

const threadsOf = (pid: number): number => readdirSync(`/proc/${pid}/task`).length;

/** Every record of the topic as "partition key value" lines, sorted. */
async function readAll(bootstrap: string): Promise<string[]> {
  const text = await kcatConsume(bootstrap, TOPIC, ['-f', '%p %k %s\\n']);
  return text
    .split('\n')
    .filter((l) => l !== '')
    .sort();
}

test('num.io.threads=3: kcat writes 8 partitions on shard workers and reads them back; restarts at 1 and at 3 read everything', {
  timeout: 120_000,
}, async (t) => {
  if (!requirePeer(t, 'kcat')) return;
  if (!existsSync(join(ROOT, 'dist', 'server', 'main.js'))) spawnSync('npx', ['tsc', '-p', 'tsconfig.json'], { cwd: ROOT, stdio: 'ignore' });
  const base = await mkdtemp(join(tmpdir(), 'fjord-io-threads-'));
  let running: Running | undefined;
  try {
    running = await startBroker(base, 3);
    assert.match(running.out(), /partitions on 3 shards: shard 0 on the main thread \(internal topics\), 2 shard worker threads/);
    const threadedCount = threadsOf(running.child.pid!);
    const admin = new Admin({ bootstrapServers: [running.bootstrap] });
    try {
      await admin.createTopics([{ name: TOPIC, numPartitions: 8, replicationFactor: 1 }]);
    } finally {
      await admin.close();
    }
    const first = Array.from({ length: 400 }, (_, i) => `k${i}:v${i}`).join('\n');
    await kcatProduce(running.bootstrap, TOPIC, `${first}\n`, ['-K:', '-X', 'topic.partitioner=murmur2_random']);
    const written = await readAll(running.bootstrap);
    assert.equal(written.length, 400);
    assert.deepEqual(new Set(written.map((l) => l.split(' ')[1])).size, 400, 'every key once');
    const partitions = new Set(written.map((l) => l.split(' ')[0]));
    assert.equal(partitions.size, 8, `the keys spread over all 8 partitions: ${[...partitions].join(',')}`);
    await stopBroker(running);
    running = undefined;

    // The same directory at one thread: every record, in the same partitions.
    running = await startBroker(base, 1);
    assert.doesNotMatch(running.out(), /shard worker threads/);
    assert.ok(
      threadedCount >= threadsOf(running.child.pid!) + 2,
      `2 more threads at num.io.threads=3 (${threadedCount}) than at 1 (${threadsOf(running.child.pid!)})`,
    );
    assert.deepEqual(await readAll(running.bootstrap), written);
    await kcatProduce(running.bootstrap, TOPIC, `${Array.from({ length: 100 }, (_, i) => `m${i}:w${i}`).join('\n')}\n`, [
      '-K:',
      '-X',
      'topic.partitioner=murmur2_random',
    ]);
    const afterOne = await readAll(running.bootstrap);
    assert.equal(afterOne.length, 500);
    await stopBroker(running);
    running = undefined;

    // And back to 3 threads: what the single thread wrote is there too.
    running = await startBroker(base, 3);
    assert.deepEqual(await readAll(running.bootstrap), afterOne);
    await stopBroker(running);
    running = undefined;
  } finally {
    if (running && running.child.exitCode === null) running.child.kill('SIGKILL');
    await rm(base, { recursive: true, force: true });
  }
});

test('num.io.threads: default 1 (no worker); N > 1 is N-1 workers, with zookeeper.connect too (threads step 3)', () => {
  const cfg = (props: Record<string, string>) => buildBrokerConfig(new Map(Object.entries({ 'log.dirs': '/tmp/unused', ...props })));
  assert.equal(cfg({}).numIoThreads, 1);
  assert.equal(shardWorkerCount(cfg({})), 0);
  assert.equal(shardWorkerCount(cfg({ 'num.io.threads': '3' })), 2);
  assert.equal(shardWorkerCount(cfg({ 'num.io.threads': '3', 'zookeeper.connect': 'localhost:2181' })), 2);
});
