/**
 * Produce/consume throughput of a Fjord broker with librdkafka clients, beside Redis Streams and
 * iperf3 loopback on the same machine in the same run, plus produce latency at a fixed rate.
 *
 *   node --import tsx bench/produce-consume.ts [records=200000] [repeats=3] [codecs=none,lz4,zstd] [--fjord-only]
 *
 * - The load generator is bench/rdkafka-perf.c (librdkafka 2.x), compiled here with gcc. It sends
 *   one shared 1 KiB payload (no per-record formatting) and counts records without touching
 *   them; kcat, which reads and formats one line per record, is kept as a reference line.
 * - throughput: for acks=1 / acks=all and 1 / 8 partitions, `repeats` times on a fresh topic:
 *   produce `records` records (linger.ms=5, batch.size=1 MB), then consume them all from the
 *   beginning (assigned partitions, no group). MB/s = payload bytes / time from the first send
 *   (or the assignment) to the last delivery report (or record). Median and range are reported.
 * - codecs: `none` runs the full matrix above; every other codec (librdkafka compression.type:
 *   gzip, snappy, lz4, zstd) runs produce and consume for 1 and 8 partitions at acks=1 in the
 *   same run, so validation and decompression costs show side by side. The payload is the same
 *   shared 1 KiB of 'x', which compresses far better than real data.
 * - --fjord-only skips kcat, latency, Redis and iperf3 (for a quick smoke run).
 * - latency: 10,000 records/s of 1 KiB for 5 s after a 2 s warm-up (same connection), acks=1,
 *   linger.ms=0, Nagle off in the client; per-record time from produce() to its delivery report.
 * - Redis Streams: redis-server --appendonly yes, redis-benchmark XADD with 1 KiB values, -P 64.
 * - iperf3: loopback, 5 s, one stream.
 * The broker runs in this process (it is idle while a client runs, apart from serving it).
 * The load average is printed: other work on this 2-core machine shows up in every figure.
 */
import { execFile, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort } from './free-port.js';
import { promisify } from 'node:util';
import { startTestBroker, type TestBroker } from '../test/helpers/broker.js';
import { loadAverage } from './suite/measure.js';
import { medianWithRange } from './suite/stats.js';

const ARGS = process.argv.slice(2).filter((a) => !a.startsWith('--'));
const FJORD_ONLY = process.argv.includes('--fjord-only');
const RECORDS = Number(ARGS[0] ?? 200_000);
const REPEATS = Number(ARGS[1] ?? 3);
const CODECS = (ARGS[2] ?? 'none,lz4,zstd').split(',').filter((c) => c.length > 0);
const SIZE = 1024;
const HERE = path.dirname(fileURLToPath(import.meta.url));

interface RunResult {
  code: number | null;
  stdout: string;
  stderr: string;
  ms: number;
}

function run(cmd: string, args: string[], input?: string): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn(cmd, args, { stdio: ['pipe', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => {
      if (out.length < 1 << 20) out += d.toString();
    });
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout: out, stderr: err, ms: performance.now() - started }));
    child.stdin.end(input ?? '');
  });
}

const mib = (bytes: number) => bytes / (1024 * 1024);
const load = () => loadAverage();

/** Compiles the harness into dir; explains how to get librdkafka when its headers are missing. */
async function buildHarness(dir: string): Promise<string> {
  if (!existsSync('/usr/include/librdkafka/rdkafka.h')) {
    throw new Error('librdkafka headers not found (/usr/include/librdkafka/rdkafka.h): run `apt-get install librdkafka-dev`');
  }
  const bin = path.join(dir, 'rdkafka-perf');
  await promisify(execFile)('gcc', ['-O2', '-o', bin, path.join(HERE, 'rdkafka-perf.c'), '-lrdkafka', '-lpthread']);
  return bin;
}

async function harness(bin: string, args: string[]): Promise<Record<string, number>> {
  const r = await run(bin, args);
  if (r.code !== 0) throw new Error(`rdkafka-perf ${args.join(' ')} failed: ${r.stderr}`);
  return JSON.parse(r.stdout.trim().split('\n').pop()!) as Record<string, number>;
}

async function createTopic(b: TestBroker, name: string, partitions: number): Promise<void> {
  await b.broker.services.metadata.createTopic({ name, numPartitions: partitions, replicationFactor: 1 });
  await b.broker.services.replicaManager.syncTopic(name);
}

/** kcat produce/consume and produce latency, for reference beside the harness figures. */
async function referenceRuns(b: TestBroker, bin: string, dir: string, payload: number, note: (line: string) => void): Promise<void> {
  // kcat for reference: one line per record in, a formatted line per record out.
  const file = path.join(dir, 'records.txt');
  const line = (i: number) => `${String(i).padStart(10, '0')}${'x'.repeat(SIZE - 10)}`;
  await writeFile(file, Array.from({ length: RECORDS }, (_, i) => line(i)).join('\n') + '\n');
  await createTopic(b, 'bench-kcat', 1);
  const kp = await run('kcat', [
    '-P',
    '-b',
    b.bootstrap,
    '-t',
    'bench-kcat',
    '-X',
    'acks=1',
    '-X',
    'linger.ms=5',
    '-X',
    'batch.size=1000000',
    '-X',
    'queue.buffering.max.kbytes=1048576',
    '-l',
    file,
  ]);
  if (kp.code !== 0) throw new Error(`kcat -P failed: ${kp.stderr}`);
  const kc = await run('kcat', ['-C', '-b', b.bootstrap, '-t', 'bench-kcat', '-o', 'beginning', '-e', '-q', '-f', '%o\n', '-X', 'fetch.max.bytes=52428800']);
  if (kc.code !== 0) throw new Error(`kcat -C failed: ${kc.stderr}`);
  note(
    `| kcat produce / consume, 1 partition, acks=1 (process wall time) | ${mib(payload / (kp.ms / 1000)).toFixed(1)} / ${mib(payload / (kc.ms / 1000)).toFixed(1)} MB/s |`,
  );

  await createTopic(b, 'bench-latency', 1);
  const lat = await harness(bin, [
    'latency',
    '-b',
    b.bootstrap,
    '-t',
    'bench-latency',
    '-r',
    '10000',
    '-d',
    '5',
    '-w',
    '2',
    '-s',
    String(SIZE),
    '-a',
    '1',
    '-l',
    '0',
    '-X',
    'socket.nagle.disable=true',
  ]);
  note(
    `| Fjord produce latency at ${lat.rate} rec/s, acks=1, linger.ms=0 (${lat.records} records after ${lat.warmup_records} warm-up) | p50 ${lat.p50_ms!.toFixed(2)} ms, p99 ${lat.p99_ms!.toFixed(2)} ms, p99.9 ${lat.p999_ms!.toFixed(2)} ms, max ${lat.max_ms!.toFixed(1)} ms |`,
  );
}

async function main(): Promise<void> {
  const dir = await mkdtemp(path.join(tmpdir(), 'fjord-bench-'));
  const bin = await buildHarness(dir);
  const payload = RECORDS * SIZE;
  const results: string[] = [];
  const note = (line: string) => {
    results.push(line);
    console.error(line);
  };
  const loadBefore = load();
  const b = await startTestBroker({ 'auto.create.topics.enable': 'false' });
  try {
    for (const codec of CODECS) {
      for (const partitions of [1, 8]) {
        for (const acks of codec === 'none' ? ['1', 'all'] : ['1']) {
          const produced: number[] = [];
          const consumed: number[] = [];
          for (let i = 0; i < REPEATS; i++) {
            const topic = `bench-${codec}-${partitions}-${acks}-${i}`;
            await createTopic(b, topic, partitions);
            const common = ['-b', b.bootstrap, '-t', topic, '-n', String(RECORDS)];
            const p = await harness(bin, [
              'produce',
              ...common,
              '-s',
              String(SIZE),
              '-a',
              acks === 'all' ? '-1' : '1',
              '-l',
              '5',
              '-B',
              '1000000',
              '-X',
              `compression.type=${codec}`,
            ]);
            if (p.failed !== 0) throw new Error(`${p.failed} records failed on ${topic}`);
            produced.push(p.mb_per_s!);
            consumed.push((await harness(bin, ['consume', ...common])).mb_per_s!);
            // Drop the topic so the next repeat reuses the freed page cache, as a broker with
            // retention does in steady state (fresh guest pages are slow to fault in on this VM).
            await b.broker.services.metadata.deleteTopic(topic);
            await b.broker.services.replicaManager.syncTopic(topic);
          }
          const label = codec === 'none' ? '' : `, ${codec}`;
          note(`| Fjord produce, ${partitions} partition(s), acks=${acks}${label} | ${medianWithRange(produced, ' MB/s')} |`);
          note(`| Fjord consume, ${partitions} partition(s)${label} | ${medianWithRange(consumed, ' MB/s')} |`);
        }
      }
    }
    if (!FJORD_ONLY) await referenceRuns(b, bin, dir, payload, note);
  } finally {
    await b.stop();
  }
  if (FJORD_ONLY) {
    await rm(dir, { recursive: true, force: true });
    console.log(
      `records: ${RECORDS} x ${SIZE} B, ${REPEATS} repeats, codecs ${CODECS.join(', ')}; load average before ${loadBefore}, after ${load()}\n\n| measurement | result |\n|---|---|\n${results.join('\n')}`,
    );
    return;
  }
  // Redis Streams with AOF.
  const redisPort = await freePort();
  const redisDir = path.join(dir, 'redis');
  await run('mkdir', ['-p', redisDir]);
  await run('redis-server', ['--port', String(redisPort), '--appendonly', 'yes', '--dir', redisDir, '--save', '', '--daemonize', 'yes']);
  await new Promise((r) => setTimeout(r, 500));
  const value = 'x'.repeat(SIZE);
  const rb = await run('redis-benchmark', ['-p', String(redisPort), '-n', String(RECORDS), '-P', '64', '--csv', 'XADD', 'bench', '*', 'f', value]);
  await run('redis-cli', ['-p', String(redisPort), 'shutdown', 'nosave']);
  const rps = Number(rb.stdout.trim().split('\n').pop()!.split(',')[1]!.replace(/"/g, ''));
  note(`| Redis Streams XADD (appendonly yes, -P 64) | ${mib(rps * SIZE).toFixed(1)} MB/s (${(rps / 1000).toFixed(0)}k rec/s) |`);

  // iperf3 loopback.
  const iperfPort = await freePort();
  const server = spawn('iperf3', ['-s', '-p', String(iperfPort), '-1'], { stdio: 'ignore' });
  await new Promise((r) => setTimeout(r, 500));
  const ip = await run('iperf3', ['-c', '127.0.0.1', '-p', String(iperfPort), '-t', '5', '-J']);
  server.kill();
  const bps = (JSON.parse(ip.stdout) as { end: { sum_received: { bits_per_second: number } } }).end.sum_received.bits_per_second;
  note(`| iperf3 loopback (1 stream, 5 s) | ${mib(bps / 8).toFixed(1)} MB/s |`);

  await rm(dir, { recursive: true, force: true });
  console.log(
    `records: ${RECORDS} x ${SIZE} B, ${REPEATS} repeats, codecs ${CODECS.join(', ')}; load average before ${loadBefore}, after ${load()}\n\n` +
      `| measurement | result |\n|---|---|\n${results.join('\n')}`,
  );
}

await main();
