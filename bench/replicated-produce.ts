/**
 * Produce throughput and latency of three brokers with replication factor 3, beside one broker
 * (replication factor 1) in the same run, with acks=1 and acks=all (issue 12's benchmark).
 *
 *   node --import tsx bench/replicated-produce.ts [records=200000] [repeats=3]
 *
 * - Setups: one embedded broker; three brokers in cluster mode on Debian's ZooKeeper
 *   (test/helpers/cluster.ts: child processes, loopback), topics with replication factor 3 and
 *   min.insync.replicas=2. Every broker runs on this one machine, so the replicated figures
 *   include the followers' fetching on the same two cores: a lower bound for separate machines.
 * - Throughput: per setup and acks, `repeats` times on a fresh 3-partition topic (leaders spread
 *   over the brokers in the cluster), `records` records of 1 KiB with bench/rdkafka-perf.c
 *   (librdkafka; linger.ms=5, batch.size=1 MB). MB/s of payload; median and range.
 * - Replicated: acks=1 is acknowledged before the followers copy the records, so its MB/s says
 *   nothing of replication. For each produce the script also waits until every partition's high
 *   watermark (ListOffsets latest) covers all records, and reports MB/s up to that moment (the
 *   producer's time plus the catch-up after its last acknowledgement): what acks=all is compared with.
 * - Latency: 5,000 records/s of 1 KiB for 5 s after a 2 s warm-up, linger.ms=0, Nagle off; per
 *   record from produce() to its delivery report; p50 and p99.
 * The single broker runs in this process, the three as child processes (each broker is one Node
 * process either way). The load average is printed: other work on the machine shows up in every
 * figure.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { Admin } from '../src/client/index.js';
import { startTestBroker } from '../test/helpers/broker.js';
import { rdkafkaProduceArgs } from './suite/measure.js';
import { Cluster } from '../test/helpers/cluster.js';
import { loadAverage } from './suite/measure.js';
import { medianWithRange } from './suite/stats.js';

const exec = promisify(execFile);
const RECORDS = Number(process.argv[2] ?? 200_000);
const REPEATS = Number(process.argv[3] ?? 3);
const SIZE = 1024;
const HERE = path.dirname(fileURLToPath(import.meta.url));

interface Setup {
  name: string;
  bootstrap: string;
  replicationFactor: number;
}

async function harness(bin: string, args: string[]): Promise<Record<string, number>> {
  const { stdout } = await exec(bin, args, { maxBuffer: 1 << 20, timeout: 300_000 });
  return JSON.parse(stdout.trim().split('\n').pop()!) as Record<string, number>;
}

let topicNo = 0;
async function freshTopic(s: Setup): Promise<string> {
  const name = `bench-rf${s.replicationFactor}-${topicNo++}`;
  const admin = new Admin({ bootstrapServers: s.bootstrap, connectTimeoutMs: 30_000 });
  try {
    const res = await admin.createTopics([
      { name, numPartitions: 3, replicationFactor: s.replicationFactor, configs: { 'min.insync.replicas': String(Math.min(2, s.replicationFactor)) } },
    ]);
    const err = res.get(name);
    if (err) throw new Error(`cannot create ${name}: ${err.message}`);
    // Wait until every partition has a leader the clients can see.
    const deadline = Date.now() + 30_000;
    for (;;) {
      const md = await admin.describeTopics([name]).catch(() => undefined);
      const parts = md?.[0]?.partitions ?? [];
      if (parts.length === 3 && parts.every((p) => p.leader >= 0 && p.isr.length === s.replicationFactor)) break;
      if (Date.now() > deadline) throw new Error(`${name} has no leaders after 30 s`);
      await new Promise((r) => setTimeout(r, 200));
    }
  } finally {
    await admin.close();
  }
  return name;
}

/** Seconds until the high watermarks of `topic`'s 3 partitions add up to RECORDS. */
async function untilReplicated(s: Setup, topic: string): Promise<number> {
  const started = Date.now();
  const admin = new Admin({ bootstrapServers: s.bootstrap, connectTimeoutMs: 30_000 });
  try {
    const queries = [0, 1, 2].map((partition) => ({ topic, partition, timestamp: -1n }));
    for (;;) {
      const hw = (await admin.listOffsets(queries)).reduce((sum, a) => sum + Number(a.offset), 0);
      if (hw >= RECORDS) return (Date.now() - started) / 1000;
      if (Date.now() - started > 120_000) throw new Error(`${topic}: high watermarks at ${hw} of ${RECORDS} after 120 s`);
      await new Promise((r) => setTimeout(r, 10));
    }
  } finally {
    await admin.close();
  }
}

async function measure(bin: string, s: Setup, acks: '1' | 'all'): Promise<string> {
  const mbs: number[] = [];
  const replicated: number[] = [];
  for (let i = 0; i < REPEATS; i++) {
    const topic = await freshTopic(s);
    const r = await harness(bin, rdkafkaProduceArgs(s.bootstrap, topic, { records: RECORDS, size: SIZE, acks }));
    if (r.failed !== 0) throw new Error(`${r.failed} records failed (${s.name}, acks=${acks})`);
    const catchUp = await untilReplicated(s, topic);
    mbs.push(r.mb_per_s!);
    replicated.push((RECORDS * SIZE) / 1048576 / (r.seconds! + catchUp));
    console.error(`${s.name} acks=${acks} repeat ${i + 1}: ${r.mb_per_s!.toFixed(1)} MB/s; replicated after ${catchUp.toFixed(2)} s more`);
  }
  const topic = await freshTopic(s);
  const lat = await harness(bin, [
    'latency',
    '-b',
    s.bootstrap,
    '-t',
    topic,
    '-r',
    '5000',
    '-d',
    '5',
    '-w',
    '2',
    '-s',
    String(SIZE),
    '-a',
    acks === 'all' ? '-1' : '1',
    '-l',
    '0',
    '-X',
    'socket.nagle.disable=true',
  ]);
  return `| ${s.name} | ${acks} | ${medianWithRange(mbs)} | ${medianWithRange(replicated)} | ${lat.p50_ms!.toFixed(2)} | ${lat.p99_ms!.toFixed(2)} |`;
}

async function main(): Promise<void> {
  if (!existsSync('/usr/include/librdkafka/rdkafka.h')) throw new Error('librdkafka headers not found: apt-get install librdkafka-dev');
  if (!Cluster.available()) throw new Error("Debian's zookeeper package is not installed");
  const work = await mkdtemp(path.join(tmpdir(), 'fjord-replicated-bench-'));
  const bin = path.join(work, 'rdkafka-perf');
  await exec('gcc', ['-O2', '-o', bin, path.join(HERE, 'rdkafka-perf.c'), '-lrdkafka', '-lpthread']);
  const loadBefore = loadAverage();
  const rows: string[] = [];
  const single = await startTestBroker({ 'offsets.topic.replication.factor': '1' });
  try {
    const s: Setup = { name: 'one broker, RF 1', bootstrap: single.bootstrap, replicationFactor: 1 };
    for (const acks of ['1', 'all'] as const) rows.push(await measure(bin, s, acks));
  } finally {
    await single.stop();
  }
  const cluster = await Cluster.start({ props: { 'offsets.topic.replication.factor': '3' } });
  try {
    const s: Setup = { name: 'three brokers, RF 3, min ISR 2', bootstrap: cluster.bootstrap(), replicationFactor: 3 };
    for (const acks of ['1', 'all'] as const) rows.push(await measure(bin, s, acks));
  } finally {
    await cluster.stop();
    await rm(work, { recursive: true, force: true });
  }
  console.log(
    `records: ${RECORDS} x ${SIZE} B, ${REPEATS} repeats, 3 partitions; latency at 5,000 rec/s, linger.ms=0; ` +
      `load average before ${loadBefore}, after ${loadAverage()}\n\n` +
      `| setup | acks | produce MB/s median (range) | MB/s until replicated | latency p50 ms | latency p99 ms |\n|---|---|---|---|---|---|\n${rows.join('\n')}`,
  );
}

await main();
