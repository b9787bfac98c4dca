/**
 * num.io.threads=1 beside num.io.threads=N (threads step 1, wired; docs/threads.md): produce
 * throughput and the broker's CPU per MB of payload split by thread (/proc/PID/task/TID/stat:
 * the main thread, whose tid is the pid, apart from every other thread: shard workers, V8's GC
 * helpers, libuv's pool), with the librdkafka harness (bench/rdkafka-perf.c), uncompressed 1 KiB
 * records in ~1 MB batches, acks=1, to a topic of 8 partitions.
 *
 *   node --import tsx bench/io-threads.ts [records=100000] [repeats=3] [--threads=3]
 *
 * Both brokers (this tree's dist/, built first) run at once as child processes; each repeat
 * takes turns (ABAB, BABA...) on a fresh topic. Prints the load average before and after, and
 * per setting the median MB/s, main-thread CPU ms/MB and other threads' CPU ms/MB.
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
const RECORDS = Number(positional[0] ?? 100_000);
const REPEATS = Number(positional[1] ?? 3);
const THREADS = Number(process.argv.find((a) => a.startsWith('--threads='))?.slice(10) ?? 3);
const SIZE = 1024;
const MB = 1024 * 1024;
const HERE = path.dirname(fileURLToPath(import.meta.url));
const ROOT = path.join(HERE, '..');

/** CPU ms (utime + stime) per thread of a process: the main thread (tid = pid) and all others together. */
async function cpuByThread(pid: number): Promise<{ main: number; others: number }> {
  let main = 0;
  let others = 0;
  for (const tid of await readdir(`/proc/${pid}/task`)) {
    const ms = await threadCpuMs(pid, Number(tid));
    if (Number(tid) === pid) main += ms;
    else others += ms;
  }
  return { main, others };
}

interface Measured {
  mbs: number;
  mainPerMb: number;
  othersPerMb: number;
}

async function produce(bin: string, b: FjordChild, topic: string): Promise<Measured> {
  const before = await cpuByThread(b.pid);
  const args = ['produce', '-b', b.bootstrap, '-t', topic, '-n', String(RECORDS), '-s', String(SIZE), '-a', '1', '-l', '5', '-B', '1000000'];
  const { stdout } = await exec(bin, args, { maxBuffer: 1 << 20 });
  const after = await cpuByThread(b.pid);
  const r = JSON.parse(stdout.trim().split('\n').pop()!) as { mb_per_s: number; failed: number };
  if (r.failed !== 0) throw new Error(`${r.failed} records failed on ${b.name}/${topic}`);
  const mb = (RECORDS * SIZE) / MB;
  return { mbs: r.mb_per_s, mainPerMb: (after.main - before.main) / mb, othersPerMb: (after.others - before.others) / mb };
}

async function main(): Promise<void> {
  if (!existsSync('/usr/include/librdkafka/rdkafka.h')) throw new Error('librdkafka headers not found: apt-get install librdkafka-dev');
  const work = await mkdtemp(path.join(tmpdir(), 'fjord-io-threads-'));
  const bin = path.join(work, 'rdkafka-perf');
  await exec('gcc', ['-O2', '-o', bin, path.join(HERE, 'rdkafka-perf.c'), '-lrdkafka', '-lpthread']);
  await exec('npx', ['tsc', '-p', 'tsconfig.json'], { cwd: ROOT });
  const brokers: FjordChild[] = [];
  try {
    const loadBefore = loadAverage();
    for (const threads of [1, THREADS]) {
      brokers.push(
        await startFjordChild({
          name: `threads-${threads}`,
          work,
          props: { 'auto.create.topics.enable': 'false', 'num.io.threads': String(threads) },
          env: { FJORD_LOG_LEVEL: 'warn', FJORD_LOG_FORMAT: 'json' },
        }),
      );
    }
    const results = new Map<string, Measured[]>();
    let topicNo = 0;
    for (let i = 0; i < REPEATS; i++) {
      for (const b of i % 2 === 0 ? brokers : [...brokers].reverse()) {
        const topic = `io-threads-${topicNo++}`;
        await b.admin.createTopics([{ name: topic, numPartitions: 8, replicationFactor: 1 }]);
        const m = await produce(bin, b, topic);
        results.set(b.name, [...(results.get(b.name) ?? []), m]);
        console.error(`${b.name} repeat ${i + 1}: ${m.mbs.toFixed(1)} MB/s, main ${m.mainPerMb.toFixed(2)} + others ${m.othersPerMb.toFixed(2)} CPU ms/MB`);
        await b.admin.deleteTopics([topic]);
      }
    }
    const rows = brokers.map((b) => {
      const ms = results.get(b.name)!;
      const f = (pick: (m: Measured) => number, digits: number) => median(ms.map(pick)).toFixed(digits);
      return `| ${b.name.replace('threads-', '')} | ${f((m) => m.mbs, 1)} | ${f((m) => m.mainPerMb, 2)} | ${f((m) => m.othersPerMb, 2)} | ${f((m) => m.mainPerMb + m.othersPerMb, 2)} |`;
    });
    console.log(
      `produce, 8 partitions, acks=1, ${RECORDS} x ${SIZE} B, ${REPEATS} repeats (medians); load average before ${loadBefore}, after ${loadAverage()}\n\n` +
        `| num.io.threads | MB/s | main thread CPU ms/MB | other threads CPU ms/MB | total CPU ms/MB |\n|---|---|---|---|---|\n${rows.join('\n')}`,
    );
  } finally {
    for (const b of brokers) await b.stop().catch(() => undefined);
    await rm(work, { recursive: true, force: true });
  }
}

await main();
