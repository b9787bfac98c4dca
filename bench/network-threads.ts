/**
 * num.network.threads=1 beside num.network.threads=M (threads step 4, first form;
 * docs/threads.md "Step 4, as built"), both at num.io.threads=3: the broker's CPU split by thread
 * (/proc/PID/task/TID/stat: the main thread, whose tid is the pid, apart from every other thread:
 * network threads, shard workers, V8's GC helpers, libuv's pool), with several librdkafka
 * producers at once (bench/rdkafka-perf.c, one connection each), two loads:
 * - bulk: uncompressed 1 KiB records in ~1 MB batches, acks=1, to 8 partitions: CPU ms per MB;
 * - small: 100 B records, batch.size 100 (one record per request), acks=1, to one partition:
 *   CPU µs per request, where the hand-over's cost per request shows.
 *
 *   node --import tsx bench/network-threads.ts [producers=3] [repeats=3] [--threads=3]
 *
 * Both brokers (this tree's dist/, built first) run at once as child processes; each repeat
 * takes turns (ABAB, BABA...) on a fresh topic. Prints the load average before and after.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { type FjordChild, startFjordChild } from './suite/fjord-child.js';
import { loadAverage, threadCpuMs } from './suite/measure.js';
import { median } from './suite/stats.js';

const exec = promisify(execFile);
const positional = process.argv.slice(2).filter((a) => !a.startsWith('--'));
const PRODUCERS = Number(positional[0] ?? 3);
const REPEATS = Number(positional[1] ?? 3);
const THREADS = Number(process.argv.find((a) => a.startsWith('--threads='))?.slice(10) ?? 3);
const MB = 1024 * 1024;
const HERE = path.dirname(fileURLToPath(import.meta.url));
const ROOT = path.join(HERE, '..');

interface Load {
  name: 'bulk' | 'small';
  recordsPerProducer: number;
  size: number;
  partitions: number;
  args: string[];
}

const LOADS: Load[] = [
  { name: 'bulk', recordsPerProducer: 60_000, size: 1024, partitions: 8, args: ['-a', '1', '-l', '5', '-B', '1000000'] },
  { name: 'small', recordsPerProducer: 15_000, size: 100, partitions: 1, args: ['-a', '1', '-l', '0', '-B', '100'] },
];

async function cpuByThread(pid: number): Promise<{ main: number; others: number }> {
  let main = 0;
  let others = 0;
  for (const tid of await readdir(`/proc/${pid}/task`)) {
    const ms = await threadCpuMs(pid, Number(tid)).catch(() => 0); // a thread may end while read
    if (Number(tid) === pid) main += ms;
    else others += ms;
  }
  return { main, others };
}

interface Measured {
  mbs: number;
  /** CPU ms per MB (bulk) or µs per record (small: one record per request). */
  mainPer: number;
  othersPer: number;
}

async function run(bin: string, b: FjordChild, topic: string, load: Load): Promise<Measured> {
  const before = await cpuByThread(b.pid);
  const started = performance.now();
  const outs = await Promise.all(
    Array.from({ length: PRODUCERS }, () =>
      exec(bin, ['produce', '-b', b.bootstrap, '-t', topic, '-n', String(load.recordsPerProducer), '-s', String(load.size), ...load.args], {
        maxBuffer: 1 << 20,
      }),
    ),
  );
  const seconds = (performance.now() - started) / 1000;
  const after = await cpuByThread(b.pid);
  for (const { stdout } of outs) {
    const r = JSON.parse(stdout.trim().split('\n').pop()!) as { failed: number };
    if (r.failed !== 0) throw new Error(`${r.failed} records failed on ${b.name}/${topic}`);
  }
  const records = load.recordsPerProducer * PRODUCERS;
  const mb = (records * load.size) / MB;
  const unit = load.name === 'bulk' ? mb : records / 1000; // ms per MB, or µs per record
  return { mbs: mb / seconds, mainPer: (after.main - before.main) / unit, othersPer: (after.others - before.others) / unit };
}

async function main(): Promise<void> {
  if (!existsSync('/usr/include/librdkafka/rdkafka.h')) throw new Error('librdkafka headers not found: apt-get install librdkafka-dev');
  const work = await mkdtemp(path.join(tmpdir(), 'fjord-network-threads-'));
  const bin = path.join(work, 'rdkafka-perf');
  await exec('gcc', ['-O2', '-o', bin, path.join(HERE, 'rdkafka-perf.c'), '-lrdkafka', '-lpthread']);
  await exec('npx', ['tsc', '-p', 'tsconfig.json'], { cwd: ROOT });
  const brokers: FjordChild[] = [];
  try {
    const loadBefore = loadAverage();
    for (const threads of [1, THREADS]) {
      brokers.push(
        await startFjordChild({
          name: `network-${threads}`,
          work,
          props: { 'auto.create.topics.enable': 'false', 'num.io.threads': '3', 'num.network.threads': String(threads) },
          env: { FJORD_LOG_LEVEL: 'warn', FJORD_LOG_FORMAT: 'json' },
        }),
      );
    }
    const results = new Map<string, Measured[]>();
    let topicNo = 0;
    for (let i = 0; i < REPEATS; i++) {
      for (const load of LOADS) {
        for (const b of i % 2 === 0 ? brokers : [...brokers].reverse()) {
          const topic = `network-threads-${topicNo++}`;
          await b.admin.createTopics([{ name: topic, numPartitions: load.partitions, replicationFactor: 1 }]);
          const m = await run(bin, b, topic, load);
          const key = `${load.name} ${b.name}`;
          results.set(key, [...(results.get(key) ?? []), m]);
          console.error(`${key} repeat ${i + 1}: ${m.mbs.toFixed(1)} MB/s, main ${m.mainPer.toFixed(2)} + others ${m.othersPer.toFixed(2)}`);
          await b.admin.deleteTopics([topic]);
        }
      }
    }
    const rows = [...results].map(([key, ms]) => {
      const f = (pick: (m: Measured) => number, digits: number): string => median(ms.map(pick)).toFixed(digits);
      const [load, name] = key.split(' ');
      return `| ${load} | ${name!.replace('network-', '')} | ${f((m) => m.mbs, 1)} | ${f((m) => m.mainPer, 2)} | ${f((m) => m.othersPer, 2)} |`;
    });
    console.log(
      `${PRODUCERS} producers at once, num.io.threads=3, ${REPEATS} repeats (medians); load average before ${loadBefore}, after ${loadAverage()}\n` +
        `bulk: CPU ms per MB; small: CPU µs per request (one 100 B record each)\n\n` +
        `| load | num.network.threads | MB/s | main thread CPU | other threads CPU |\n|---|---|---|---|---|\n${rows.join('\n')}`,
    );
  } finally {
    for (const b of brokers) await b.stop().catch(() => undefined);
    await rm(work, { recursive: true, force: true });
  }
}

await main();
