/**
 * Produce (and optionally consume) throughput of two builds of the broker in the same run: an
 * earlier commit (the baseline) and the work tree, uncompressed and with lz4 and zstd, with the
 * librdkafka harness (bench/rdkafka-perf.c). Made to measure what a change to the data path
 * costs, e.g. the record validation inside compressed batches, or cluster mode's code in the
 * single broker.
 *
 *   node --import tsx bench/produce-before-after.ts BASELINE_REF [records=200000] [repeats=3]
 *        [--codecs=none,lz4,zstd] [--consume]
 *
 * - `--consume`: after each produce, the same records are read back from the start by a
 *   librdkafka consumer (assign, no group) and its MB/s is reported as its own row.
 *
 * - The baseline is checked out into a temporary git worktree and built there (tsc), sharing
 *   this checkout's node_modules; both brokers run as child processes (node dist/server/main.js)
 *   with the same settings, on their own temporary log dirs.
 * - For each codec and repeat, the two brokers take turns (ABAB..., starting with a different
 *   one each repeat) on a fresh 1-partition topic: `records` records of 1 KiB, acks=1,
 *   linger.ms=5, batch.size=1 MB. The harness's payload is one repeated byte, so compressed
 *   batches are small and inflate ~100x: the broker's decompression and record walk dominate,
 *   the worst case for validation per byte received.
 * - Prints the median and range of MB/s (payload bytes) per build and codec, and after/before.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort } from './free-port.js';
import { promisify } from 'node:util';
import { Admin } from '../src/client/index.js';

const exec = promisify(execFile);
const positional = process.argv.slice(2).filter((a) => !a.startsWith('--'));
const flags = process.argv.slice(2).filter((a) => a.startsWith('--'));
const BASELINE = positional[0];
const RECORDS = Number(positional[1] ?? 200_000);
const REPEATS = Number(positional[2] ?? 3);
const SIZE = 1024;
const HERE = path.dirname(fileURLToPath(import.meta.url));
const ROOT = path.join(HERE, '..');
const CODECS = (flags.find((f) => f.startsWith('--codecs='))?.slice('--codecs='.length) ?? 'none,lz4,zstd').split(',');
const CONSUME = flags.includes('--consume');

interface Running {
  name: string;
  child: ChildProcess;
  bootstrap: string;
  admin: Admin;
  dir: string;
}

/** Starts `root`'s built broker and waits until it answers metadata. */
async function startBroker(name: string, root: string, work: string): Promise<Running> {
  const port = await freePort();
  const dir = await mkdtemp(path.join(work, `${name}-logs-`));
  const config = path.join(work, `${name}.properties`);
  await writeFile(config, `listeners=PLAINTEXT://127.0.0.1:${port}\nlog.dirs=${dir}\nauto.create.topics.enable=false\noffsets.topic.replication.factor=1\n`);
  const child = spawn(process.execPath, [path.join(root, 'dist', 'server', 'main.js'), config], {
    stdio: ['ignore', 'ignore', 'inherit'],
    env: { ...process.env, FJORD_LOG_LEVEL: 'warn', FJORD_LOG_FORMAT: 'json' },
  });
  const bootstrap = `127.0.0.1:${port}`;
  const admin = new Admin({ bootstrapServers: bootstrap, connectTimeoutMs: 30000 });
  const deadline = Date.now() + 60000;
  for (;;) {
    try {
      await admin.describeCluster();
      break;
    } catch (err) {
      if (Date.now() > deadline || child.exitCode !== null) throw new Error(`${name} broker did not start: ${String(err)}`);
      await new Promise((r) => setTimeout(r, 200));
    }
  }
  return { name, child, bootstrap, admin, dir };
}

async function stopBroker(b: Running): Promise<void> {
  await b.admin.close();
  if (b.child.exitCode === null) {
    const exited = new Promise((r) => b.child.once('exit', r));
    b.child.kill('SIGTERM');
    await exited;
  }
}

async function produce(bin: string, b: Running, topic: string, codec: string): Promise<number> {
  const args = ['produce', '-b', b.bootstrap, '-t', topic, '-n', String(RECORDS), '-s', String(SIZE), '-a', '1', '-l', '5', '-B', '1000000', '-X', `compression.type=${codec}`];
  const { stdout } = await exec(bin, args, { maxBuffer: 1 << 20 });
  const r = JSON.parse(stdout.trim().split('\n').pop()!) as { mb_per_s: number; failed: number };
  if (r.failed !== 0) throw new Error(`${r.failed} records failed on ${b.name}/${topic}`);
  return r.mb_per_s;
}

async function consume(bin: string, b: Running, topic: string): Promise<number> {
  const { stdout } = await exec(bin, ['consume', '-b', b.bootstrap, '-t', topic, '-n', String(RECORDS)], { maxBuffer: 1 << 20 });
  const r = JSON.parse(stdout.trim().split('\n').pop()!) as { mb_per_s: number; records: number };
  if (r.records !== RECORDS) throw new Error(`consumed ${r.records} of ${RECORDS} records on ${b.name}/${topic}`);
  return r.mb_per_s;
}

function stats(values: number[]): { median: number; text: string } {
  const s = [...values].sort((a, x) => a - x);
  const median = s[Math.floor(s.length / 2)]!;
  return { median, text: `${median.toFixed(1)} (${s[0]!.toFixed(0)}–${s.at(-1)!.toFixed(0)})` };
}

async function main(): Promise<void> {
  if (!BASELINE) throw new Error('usage: bench/produce-before-after.ts BASELINE_REF [records] [repeats]');
  if (!existsSync('/usr/include/librdkafka/rdkafka.h')) throw new Error('librdkafka headers not found: apt-get install librdkafka-dev');
  const work = await mkdtemp(path.join(tmpdir(), 'fjord-before-after-'));
  const bin = path.join(work, 'rdkafka-perf');
  await exec('gcc', ['-O2', '-o', bin, path.join(HERE, 'rdkafka-perf.c'), '-lrdkafka', '-lpthread']);
  const baseRoot = path.join(work, 'baseline');
  await exec('git', ['-C', ROOT, 'worktree', 'add', '--detach', baseRoot, BASELINE]);
  const brokers: Running[] = [];
  try {
    await symlink(path.join(ROOT, 'node_modules'), path.join(baseRoot, 'node_modules'));
    const { stdout: rev } = await exec('git', ['-C', baseRoot, 'log', '--oneline', '-1']);
    await exec('npx', ['tsc', '-p', 'tsconfig.json'], { cwd: baseRoot });
    await exec('npx', ['tsc', '-p', 'tsconfig.json'], { cwd: ROOT });
    const loadBefore = loadavg().map((l) => l.toFixed(2)).join(' ');
    brokers.push(await startBroker('before', baseRoot, work), await startBroker('after', ROOT, work));
    const results = new Map<string, number[]>();
    let topicNo = 0;
    for (const codec of CODECS) {
      for (let i = 0; i < REPEATS; i++) {
        const order = i % 2 === 0 ? brokers : [...brokers].reverse();
        for (const b of order) {
          const topic = `ba-${codec}-${topicNo++}`;
          await b.admin.createTopics([{ name: topic, numPartitions: 1, replicationFactor: 1 }]);
          const measured: [string, number][] = [[codec, await produce(bin, b, topic, codec)]];
          if (CONSUME) measured.push([`${codec} consume`, await consume(bin, b, topic)]);
          for (const [row, mbs] of measured) {
            const key = `${b.name}/${row}`;
            results.set(key, [...(results.get(key) ?? []), mbs]);
            console.error(`${key} repeat ${i + 1}: ${mbs.toFixed(1)} MB/s`);
          }
          await b.admin.deleteTopics([topic]);
        }
      }
    }
    const rows = CODECS.flatMap((codec) => (CONSUME ? [codec, `${codec} consume`] : [codec]));
    const lines = rows.map((row) => {
      const before = stats(results.get(`before/${row}`)!);
      const after = stats(results.get(`after/${row}`)!);
      return `| ${row} | ${before.text} | ${after.text} | ${((after.median / before.median) * 100).toFixed(0)}% |`;
    });
    console.log(
      `baseline: ${rev.trim()}; records: ${RECORDS} x ${SIZE} B, ${REPEATS} repeats, 1 partition, acks=1; ` +
        `load average before ${loadBefore}, after ${loadavg().map((l) => l.toFixed(2)).join(' ')}\n\n` +
        `| codec (produce, or consume) | before MB/s median (range) | after MB/s median (range) | after / before |\n|---|---|---|---|\n${lines.join('\n')}`,
    );
  } finally {
    for (const b of brokers) await stopBroker(b).catch(() => undefined);
    await exec('git', ['-C', ROOT, 'worktree', 'remove', '--force', baseRoot]).catch(() => undefined);
    await rm(work, { recursive: true, force: true });
  }
}

await main();
