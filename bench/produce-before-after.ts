/**
 * Produce (and optionally consume) throughput and broker CPU of two builds of the broker in the
 * same run: an earlier commit (the baseline) and the work tree, with the librdkafka harness
 * (bench/rdkafka-perf.c). Made to measure what a change to the data path costs or saves, e.g.
 * the record validation inside compressed batches, or the single-pass append step.
 *
 *   node --import tsx bench/produce-before-after.ts BASELINE_REF [records=200000] [repeats=3]
 *        [--codecs=none,lz4] [--partitions=1,8] [--acks=1,all] [--consume] [--threads=1]
 *
 * - Every combination of codec, partition count and acks is a row of its own.
 * - `--threads=N`: both brokers run with num.io.threads=N (default 1).
 * - `--consume`: after each acks=1 produce, the same records are read back from the start by a
 *   librdkafka consumer (assign, no group) and reported as a row of its own.
 * - Broker CPU per MB: the child broker's utime + stime (/proc/PID/stat) read before and after
 *   each run, in CPU milliseconds per MB of payload (lower is better).
 *
 * - The baseline is checked out into a temporary git worktree and built there (tsc), sharing
 *   this checkout's node_modules; both brokers run as child processes (node dist/server/main.js)
 *   with the same settings, on their own temporary log dirs.
 * - For each row and repeat, the two brokers take turns (ABAB..., starting with a different
 *   one each repeat) on a fresh topic: `records` records of 1 KiB, linger.ms=5, batch.size=1 MB.
 *   The harness's payload is one repeated byte, so compressed batches are small and inflate
 *   ~100x: the broker's decompression and record walk dominate, the worst case for validation
 *   per byte received.
 * - Prints the median and range of MB/s (payload bytes) and the median CPU ms/MB per build and
 *   row, and after/before of both.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { type FjordChild, startBuiltBroker } from './suite/fjord-child.js';
import { loadAverage, processCpuMs, rdkafkaProduceArgs } from './suite/measure.js';
import { median } from './suite/stats.js';

const exec = promisify(execFile);
const positional = process.argv.slice(2).filter((a) => !a.startsWith('--'));
const flags = process.argv.slice(2).filter((a) => a.startsWith('--'));
const BASELINE = positional[0];
const RECORDS = Number(positional[1] ?? 200_000);
const REPEATS = Number(positional[2] ?? 3);
const SIZE = 1024;
const HERE = path.dirname(fileURLToPath(import.meta.url));
const ROOT = path.join(HERE, '..');
const listFlag = (name: string, fallback: string): string[] => (flags.find((f) => f.startsWith(`--${name}=`))?.slice(name.length + 3) ?? fallback).split(',');
const CODECS = listFlag('codecs', 'none,lz4');
const PARTITIONS = listFlag('partitions', '1,8').map(Number);
const ACKS = listFlag('acks', '1,all');
const CONSUME = flags.includes('--consume');
/** num.io.threads of both brokers (default 1, the single-threaded broker). */
const THREADS = listFlag('threads', '1')[0]!;
const MB = 1024 * 1024;

/** MB/s of one run and the broker CPU it cost per MB. */
interface Measured {
  mbs: number;
  cpuPerMb: number;
}

async function measured(b: FjordChild, run: () => Promise<number>): Promise<Measured> {
  const before = await processCpuMs(b.pid);
  const mbs = await run();
  const cpu = (await processCpuMs(b.pid)) - before;
  return { mbs, cpuPerMb: cpu / ((RECORDS * SIZE) / MB) };
}

async function produce(bin: string, b: FjordChild, topic: string, codec: string, acks: string): Promise<number> {
  const args = rdkafkaProduceArgs(b.bootstrap, topic, { records: RECORDS, size: SIZE, acks: acks === 'all' ? 'all' : '1', codec });
  const { stdout } = await exec(bin, args, { maxBuffer: 1 << 20 });
  const r = JSON.parse(stdout.trim().split('\n').pop()!) as { mb_per_s: number; failed: number };
  if (r.failed !== 0) throw new Error(`${r.failed} records failed on ${b.name}/${topic}`);
  return r.mb_per_s;
}

async function consume(bin: string, b: FjordChild, topic: string): Promise<number> {
  const { stdout } = await exec(bin, ['consume', '-b', b.bootstrap, '-t', topic, '-n', String(RECORDS)], { maxBuffer: 1 << 20 });
  const r = JSON.parse(stdout.trim().split('\n').pop()!) as { mb_per_s: number; records: number };
  if (r.records !== RECORDS) throw new Error(`consumed ${r.records} of ${RECORDS} records on ${b.name}/${topic}`);
  return r.mb_per_s;
}

function stats(values: number[]): { median: number; text: string } {
  const m = median(values);
  return { median: m, text: `${m.toFixed(1)} (${Math.min(...values).toFixed(0)}–${Math.max(...values).toFixed(0)})` };
}

const percent = (after: number, before: number): string => `${((after / before) * 100).toFixed(0)}%`;

async function main(): Promise<void> {
  if (!BASELINE) throw new Error('usage: bench/produce-before-after.ts BASELINE_REF [records] [repeats]');
  if (!existsSync('/usr/include/librdkafka/rdkafka.h')) throw new Error('librdkafka headers not found: apt-get install librdkafka-dev');
  const work = await mkdtemp(path.join(tmpdir(), 'fjord-before-after-'));
  const bin = path.join(work, 'rdkafka-perf');
  await exec('gcc', ['-O2', '-o', bin, path.join(HERE, 'rdkafka-perf.c'), '-lrdkafka', '-lpthread']);
  const baseRoot = path.join(work, 'baseline');
  await exec('git', ['-C', ROOT, 'worktree', 'add', '--detach', baseRoot, BASELINE]);
  const brokers: FjordChild[] = [];
  try {
    await symlink(path.join(ROOT, 'node_modules'), path.join(baseRoot, 'node_modules'));
    const { stdout: rev } = await exec('git', ['-C', baseRoot, 'log', '--oneline', '-1']);
    await exec('npx', ['tsc', '-p', 'tsconfig.json'], { cwd: baseRoot });
    await exec('npx', ['tsc', '-p', 'tsconfig.json'], { cwd: ROOT });
    const loadBefore = loadAverage();
    const props = { 'num.io.threads': THREADS };
    brokers.push(await startBuiltBroker('before', baseRoot, work, props), await startBuiltBroker('after', ROOT, work, props));
    const results = new Map<string, Measured[]>();
    const rows: string[] = [];
    const record = (b: FjordChild, row: string, m: Measured, i: number): void => {
      const key = `${b.name}/${row}`;
      if (!rows.includes(row)) rows.push(row);
      results.set(key, [...(results.get(key) ?? []), m]);
      console.error(`${key} repeat ${i + 1}: ${m.mbs.toFixed(1)} MB/s, ${m.cpuPerMb.toFixed(2)} CPU ms/MB`);
    };
    let topicNo = 0;
    for (const codec of CODECS) {
      for (const partitions of PARTITIONS) {
        for (const acks of ACKS) {
          for (let i = 0; i < REPEATS; i++) {
            const order = i % 2 === 0 ? brokers : [...brokers].reverse();
            for (const b of order) {
              const topic = `ba-${codec}-${topicNo++}`;
              await b.admin.createTopics([{ name: topic, numPartitions: partitions, replicationFactor: 1 }]);
              record(b, `${codec}, ${partitions}p, acks=${acks}`, await measured(b, () => produce(bin, b, topic, codec, acks)), i);
              if (CONSUME && acks === ACKS[0]) record(b, `${codec}, ${partitions}p, consume`, await measured(b, () => consume(bin, b, topic)), i);
              await b.admin.deleteTopics([topic]);
            }
          }
        }
      }
    }
    const lines = rows.map((row) => {
      const before = results.get(`before/${row}`)!;
      const after = results.get(`after/${row}`)!;
      const mbsBefore = stats(before.map((m) => m.mbs));
      const mbsAfter = stats(after.map((m) => m.mbs));
      const cpuBefore = median(before.map((m) => m.cpuPerMb));
      const cpuAfter = median(after.map((m) => m.cpuPerMb));
      return `| ${row} | ${mbsBefore.text} | ${mbsAfter.text} | ${percent(mbsAfter.median, mbsBefore.median)} | ${cpuBefore.toFixed(2)} | ${cpuAfter.toFixed(2)} | ${percent(cpuAfter, cpuBefore)} |`;
    });
    console.log(
      `baseline: ${rev.trim()}; num.io.threads=${THREADS}; records: ${RECORDS} x ${SIZE} B, ${REPEATS} repeats; ` +
        `load average before ${loadBefore}, after ${loadAverage()}\n\n` +
        `| row (produce, or consume) | before MB/s median (range) | after MB/s median (range) | after / before | before CPU ms/MB | after CPU ms/MB | after / before |\n|---|---|---|---|---|---|---|\n${lines.join('\n')}`,
    );
  } finally {
    for (const b of brokers) await b.stop().catch(() => undefined);
    await exec('git', ['-C', ROOT, 'worktree', 'remove', '--force', baseRoot]).catch(() => undefined);
    await rm(work, { recursive: true, force: true });
  }
}

await main();
