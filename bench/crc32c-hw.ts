/**
 * What a hardware CRC32C would save a producing broker: the same build (dist/) twice, one broker
 * as it is (@node-rs/crc32), one with crc32c answered by bench/crc32c-hw/crc32c-hw.c (SSE4.2,
 * three interleaved streams; node --require bench/crc32c-hw/preload.cjs), in one run.
 *
 *   node --import tsx bench/crc32c-hw.ts [records=400000] [repeats=5] [--partitions=1,8] [--acks=1,all]
 *
 * - Needs gcc, node's headers (/usr/include/node) and librdkafka-dev; builds dist/ first
 *   (npx tsc -p tsconfig.json).
 * - Before the brokers start, the addon is checked against @node-rs/crc32 on random inputs
 *   (lengths 0-3 MB, random initial values) and both are timed alone (CPU ms per MB).
 * - Then, per row and repeat, the two brokers take turns (the order alternates per repeat) on
 *   a fresh topic: `records` records of 1 KiB, linger.ms=5, batch.size=1 MB (bench/rdkafka-perf.c);
 *   every produced batch's CRC is checked by the broker, so a wrong CRC fails the run.
 * - Prints MB/s (median, range) and broker CPU ms per MB (utime + stime, /proc) per broker and row.
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { crc32c } from '@node-rs/crc32';
import { type FjordChild, startFjordChild } from './suite/fjord-child.js';
import { loadAverage, processCpuMs, rdkafkaProduceArgs } from './suite/measure.js';
import { median } from './suite/stats.js';

const exec = promisify(execFile);
const positional = process.argv.slice(2).filter((a) => !a.startsWith('--'));
const flags = process.argv.slice(2).filter((a) => a.startsWith('--'));
const RECORDS = Number(positional[0] ?? 400_000);
const REPEATS = Number(positional[1] ?? 5);
const listFlag = (name: string, fallback: string): string[] => (flags.find((f) => f.startsWith(`--${name}=`))?.slice(name.length + 3) ?? fallback).split(',');
const PARTITIONS = listFlag('partitions', '1,8').map(Number);
const ACKS = listFlag('acks', '1,all');
const SIZE = 1024;
const MB = 1024 * 1024;
const HERE = path.dirname(fileURLToPath(import.meta.url));

type Crc = (input: Uint8Array, initial?: number) => number;

/** The addon agrees with @node-rs/crc32 on random inputs; throws on the first difference. */
function checkAgainstReference(hw: Crc): void {
  for (let i = 0; i < 2000; i++) {
    const bytes = randomBytes(i < 1500 ? i : Math.floor(Math.random() * 3 * MB));
    const initial = i % 3 === 0 ? 0 : randomBytes(4).readUInt32LE();
    const from = Math.min(bytes.length, i % 13);
    if (hw(bytes.subarray(from), initial) !== crc32c(bytes.subarray(from), initial)) throw new Error(`crc32c-hw differs at length ${bytes.length - from}`);
  }
}

function cpuMsPerMb(f: Crc): number {
  const data = randomBytes(MB);
  for (let i = 0; i < 200; i++) f(data.subarray(61));
  const before = process.cpuUsage();
  for (let i = 0; i < 2000; i++) f(data.subarray(61));
  const used = process.cpuUsage(before);
  return (used.user + used.system) / 1000 / 2000;
}

async function produce(bin: string, b: FjordChild, topic: string, acks: string): Promise<{ mbs: number; cpuPerMb: number }> {
  const cpuBefore = await processCpuMs(b.pid);
  const args = rdkafkaProduceArgs(b.bootstrap, topic, { records: RECORDS, size: SIZE, acks: acks === 'all' ? 'all' : '1' });
  const { stdout } = await exec(bin, args, { maxBuffer: 1 << 20 });
  const r = JSON.parse(stdout.trim().split('\n').pop()!) as { mb_per_s: number; failed: number };
  if (r.failed !== 0) throw new Error(`${r.failed} records failed on ${b.name}/${topic}`);
  return { mbs: r.mb_per_s, cpuPerMb: ((await processCpuMs(b.pid)) - cpuBefore) / ((RECORDS * SIZE) / MB) };
}

async function main(): Promise<void> {
  const work = await mkdtemp(path.join(tmpdir(), 'fjord-crc32c-hw-'));
  const brokers: FjordChild[] = [];
  try {
    const addon = path.join(work, 'crc32c-hw.node');
    await exec('gcc', ['-O2', '-msse4.2', '-fPIC', '-shared', '-I/usr/include/node', '-o', addon, path.join(HERE, 'crc32c-hw', 'crc32c-hw.c')]);
    const bin = path.join(work, 'rdkafka-perf');
    await exec('gcc', ['-O2', '-o', bin, path.join(HERE, 'rdkafka-perf.c'), '-lrdkafka', '-lpthread']);
    const hw = (createRequire(import.meta.url)(addon) as { crc32c: Crc }).crc32c;
    checkAgainstReference(hw);
    console.log(
      `alone: @node-rs/crc32 ${cpuMsPerMb(crc32c).toFixed(3)} CPU ms/MB, crc32c-hw ${cpuMsPerMb(hw).toFixed(3)} CPU ms/MB (agree on 2,000 random inputs)`,
    );
    const common = {
      work,
      props: { 'auto.create.topics.enable': 'false', 'offsets.topic.replication.factor': '1' },
      env: { FJORD_LOG_LEVEL: 'warn', FJORD_LOG_FORMAT: 'json', FJORD_CRC32C_HW_ADDON: addon },
    };
    brokers.push(await startFjordChild({ ...common, name: '@node-rs' }));
    brokers.push(await startFjordChild({ ...common, name: 'crc32c-hw', nodeFlags: ['--require', path.join(HERE, 'crc32c-hw', 'preload.cjs')] }));
    console.log(`load average before: ${loadAverage()}`);
    let topicNo = 0;
    for (const partitions of PARTITIONS) {
      for (const acks of ACKS) {
        const rows = new Map<string, { mbs: number[]; cpu: number[] }>(brokers.map((b) => [b.name, { mbs: [], cpu: [] }]));
        for (let i = 0; i < REPEATS; i++) {
          for (const b of i % 2 === 0 ? brokers : [...brokers].reverse()) {
            const topic = `crc-${topicNo++}`;
            await b.admin.createTopics([{ name: topic, numPartitions: partitions, replicationFactor: 1 }]);
            const m = await produce(bin, b, topic, acks);
            rows.get(b.name)!.mbs.push(m.mbs);
            rows.get(b.name)!.cpu.push(m.cpuPerMb);
            await b.admin.deleteTopics([topic]);
          }
        }
        const [a, c] = brokers.map((b) => rows.get(b.name)!);
        const line = (name: string, r: { mbs: number[]; cpu: number[] }): string =>
          `${name}: ${median(r.mbs).toFixed(1)} MB/s (${Math.min(...r.mbs).toFixed(0)}–${Math.max(...r.mbs).toFixed(0)}), ${median(r.cpu).toFixed(3)} CPU ms/MB`;
        console.log(
          `${partitions}p acks=${acks}: ${line('@node-rs', a!)}; ${line('crc32c-hw', c!)}; ` +
            `CPU/MB ${((median(c!.cpu) / median(a!.cpu)) * 100).toFixed(1)}%, MB/s ${((median(c!.mbs) / median(a!.mbs)) * 100).toFixed(1)}%`,
        );
      }
    }
    console.log(`load average after: ${loadAverage()}; records ${RECORDS} x ${SIZE} B, ${REPEATS} repeats; node ${process.version}`);
  } finally {
    for (const b of brokers) await b.stop().catch(() => undefined);
    await rm(work, { recursive: true, force: true });
  }
}

await main();
