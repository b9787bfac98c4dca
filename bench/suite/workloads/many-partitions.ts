/**
 * Issue 26's 10,000-partition figures on one broker in a child process (bin/kafka-server-start.sh,
 * temp log dir, free port): create the partitions, write a batch of records to each, then read
 * the broker's memory (VmRSS, VmHWM, the JS heap), its open files, producing throughput across all
 * the partitions (librdkafka, keyless records spread over every partition), the time a clean
 * shutdown takes and the time a restart takes until ApiVersions answers and Metadata lists every
 * partition with its leader. The JS heap comes from a preloaded module (NODE_OPTIONS --require)
 * that writes process.memoryUsage() to a file on SIGUSR2, so nothing in the broker changes for it.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdir, readdir, readFile, writeFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { freePort } from '../../free-port.js';
import { RawClient } from '../../../test/helpers/raw-client.js';
import { batchOf } from '../../../test/server/handlers/data-plane-helpers.js';
import {
  ApiVersionsRequestCodec,
  ApiVersionsResponseCodec,
  CreateTopicsRequestCodec,
  CreateTopicsResponseCodec,
  MetadataRequestCodec,
  MetadataResponseCodec,
  ProduceRequestCodec,
  ProduceResponseCodec,
} from '../../../src/protocol/messages/index.js';
import type { Sample, Workload } from '../workload.js';

export interface ManyPartitionsOptions {
  /** Repository root: bin/kafka-server-start.sh and config/server.properties are read from it. */
  root: string;
  /** Scratch directory (the log dir and the memory probe go under it). */
  workDir: string;
  topics: number;
  partitionsPerTopic: number;
  /** Records written to each partition before the memory is read (one batch per partition). */
  recordsPerPartition: number;
  /** Compiled bench/rdkafka-perf.c; without it no throughput is measured. */
  rdkafkaPerf?: string;
  throughputRecords: number;
  recordBytes: number;
  /** Extra broker overrides (key -> value). */
  overrides?: Record<string, string>;
  /**
   * Node flags for the broker (e.g. --cpu-prof --cpu-prof-dir=DIR, which NODE_OPTIONS refuses): the
   * broker then runs as `node FLAGS dist/server/main.js`, what the script would exec.
   */
  nodeArgs?: string[];
  log(line: string): void;
  /** Called with the log dir after the clean shutdown, before the restart (e.g. to keep a copy). */
  afterShutdown?(logDir: string): Promise<void>;
}

export interface MemorySnapshot {
  rssMB: number;
  hwmMB: number;
  heapUsedMB: number;
  heapTotalMB: number;
  externalMB: number;
  fds: number;
}

export interface ManyPartitionsResult {
  partitions: number;
  firstStartMs: number;
  createMs: number;
  fillMs: number;
  afterFill: MemorySnapshot;
  throughput?: { mbPerS: number; recordsPerS: number; cpuSecondsPerGB: number };
  afterThroughput?: MemorySnapshot;
  shutdownMs: number;
  /** Spawn to ApiVersions answered. */
  restartListeningMs: number;
  /** Spawn to Metadata listing every partition with a leader. */
  restartMs: number;
  /** The broker's CPU time (user + system) from spawn to that moment: the restart's cost, load or not. */
  restartCpuSeconds: number;
  afterRestart: MemorySnapshot;
}

const PROBE = `const fs = require('node:fs');
process.on('SIGUSR2', () => {
  // Where asked, a heap snapshot first (it collects garbage, so the figures after it are what is kept).
  if (process.env.FJORD_BENCH_HEAP_SNAPSHOTS) require('node:v8').writeHeapSnapshot(require('node:path').join(process.env.FJORD_BENCH_HEAP_SNAPSHOTS, Date.now() + '.heapsnapshot'));
  const m = process.memoryUsage();
  fs.writeFileSync(process.env.FJORD_BENCH_MEMORY_OUT + '.tmp', JSON.stringify(m));
  fs.renameSync(process.env.FJORD_BENCH_MEMORY_OUT + '.tmp', process.env.FJORD_BENCH_MEMORY_OUT);
});
`;

const MB = 1024 * 1024;

interface Broker {
  child: ChildProcess;
  pid: number;
  spawnedAt: number;
  output: string[];
}

function delay(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

export async function measureManyPartitions(o: ManyPartitionsOptions): Promise<ManyPartitionsResult> {
  const logDir = path.join(o.workDir, 'logs');
  const probe = path.join(o.workDir, 'memory-probe.cjs');
  const memoryOut = path.join(o.workDir, 'memory.json');
  await mkdir(o.workDir, { recursive: true });
  await writeFile(probe, PROBE);
  const port = await freePort();
  const partitions = o.topics * o.partitionsPerTopic;
  const topicNames = Array.from({ length: o.topics }, (_, i) => (o.topics === 1 ? 'many' : `many-${i}`));

  const start = (): Broker => {
    const args = ['config/server.properties', '--override', `listeners=PLAINTEXT://127.0.0.1:${port}`, '--override', `log.dirs=${logDir}`];
    for (const [k, v] of Object.entries({ 'offsets.topic.replication.factor': '1', 'group.initial.rebalance.delay.ms': '0', ...o.overrides }))
      args.push('--override', `${k}=${v}`);
    const spawnedAt = performance.now();
    const [cmd, cmdArgs] =
      o.nodeArgs && o.nodeArgs.length > 0
        ? [process.execPath, [...o.nodeArgs, path.join(o.root, 'dist/server/main.js'), ...args]]
        : [path.join(o.root, 'bin/kafka-server-start.sh'), args];
    const child = spawn(cmd, cmdArgs, {
      cwd: o.root,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, NODE_OPTIONS: `--require ${probe}`, FJORD_BENCH_MEMORY_OUT: memoryOut },
    });
    const output: string[] = [];
    const keep = (d: Buffer): void => {
      output.push(d.toString());
      if (output.length > 50) output.shift();
    };
    child.stdout!.on('data', keep);
    child.stderr!.on('data', keep);
    return { child, pid: child.pid!, spawnedAt, output };
  };

  /** Resolves once ApiVersions answers, then once Metadata lists `expected` partitions with leaders. */
  const waitReady = async (b: Broker, expected: number): Promise<{ listeningMs: number; readyMs: number }> => {
    const deadline = performance.now() + 600_000;
    let client: RawClient | undefined;
    while (!client) {
      if (b.child.exitCode !== null) throw new Error(`broker exited with ${b.child.exitCode}: ${b.output.join('').slice(-2000)}`);
      if (performance.now() > deadline) throw new Error('broker did not listen within 600 s');
      try {
        client = await RawClient.connect(port);
      } catch {
        await delay(20);
      }
    }
    try {
      await client.request(18, ApiVersionsRequestCodec, ApiVersionsResponseCodec, 0, {});
      const listeningMs = performance.now() - b.spawnedAt;
      for (;;) {
        const md = await client.request(3, MetadataRequestCodec, MetadataResponseCodec, 1, { topics: null });
        let ready = 0;
        for (const t of md.topics) {
          if (t.errorCode !== 0) continue;
          for (const p of t.partitions) if (p.errorCode === 0 && p.leaderId >= 0) ready++;
        }
        if (ready >= expected) return { listeningMs, readyMs: performance.now() - b.spawnedAt };
        if (performance.now() > deadline) throw new Error(`only ${ready} of ${expected} partitions ready after 600 s`);
        await delay(20);
      }
    } finally {
      client.close();
    }
  };

  const snapshot = async (b: Broker): Promise<MemorySnapshot> => {
    await rm(memoryOut, { force: true });
    process.kill(b.pid, 'SIGUSR2');
    const deadline = performance.now() + 120_000;
    let heap: { heapUsed: number; heapTotal: number; external: number } | undefined;
    while (!heap) {
      try {
        heap = JSON.parse(await readFile(memoryOut, 'utf8')) as typeof heap;
      } catch {
        if (performance.now() > deadline) throw new Error('the memory probe did not answer SIGUSR2');
        await delay(20);
      }
    }
    const status = await readFile(`/proc/${b.pid}/status`, 'utf8');
    const kb = (name: string): number => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN);
    const fds = (await readdir(`/proc/${b.pid}/fd`)).length;
    return {
      rssMB: kb('VmRSS') / 1024,
      hwmMB: kb('VmHWM') / 1024,
      heapUsedMB: heap.heapUsed / MB,
      heapTotalMB: heap.heapTotal / MB,
      externalMB: heap.external / MB,
      fds,
    };
  };

  const cpuSeconds = async (pid: number): Promise<number> => {
    const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100; // utime, stime in clock ticks (USER_HZ 100)
  };

  const stop = async (b: Broker): Promise<number> => {
    const t0 = performance.now();
    const exited = once(b.child, 'exit');
    b.child.kill('SIGTERM');
    await exited;
    return performance.now() - t0;
  };

  await rm(logDir, { recursive: true, force: true });
  let broker = start();
  try {
    const first = await waitReady(broker, 0);
    o.log(`first start: ${(first.readyMs / 1000).toFixed(1)} s`);
    const client = await RawClient.connect(port);
    const t0 = performance.now();
    // Ten topics (or 1,000 partitions) per CreateTopics request
    const perRequest = Math.max(1, Math.min(10, Math.floor(1000 / o.partitionsPerTopic)));
    for (let i = 0; i < topicNames.length; i += perRequest) {
      const res = await client.request(19, CreateTopicsRequestCodec, CreateTopicsResponseCodec, 5, {
        topics: topicNames.slice(i, i + perRequest).map((name) => ({ name, numPartitions: o.partitionsPerTopic, replicationFactor: 1 })),
        timeoutMs: 600_000,
        validateOnly: false,
      });
      for (const t of res.topics) if (t.errorCode !== 0) throw new Error(`CreateTopics ${t.name}: error ${t.errorCode} ${t.errorMessage ?? ''}`);
    }
    const createMs = performance.now() - t0;
    o.log(`created ${partitions} partitions in ${(createMs / 1000).toFixed(1)} s`);
    // One batch of recordsPerPartition records per partition, 1,000 partitions per Produce request
    // Timestamped now: an old timestamp would roll every segment at the next append (log.roll.hours).
    const batch = batchOf(
      Array.from({ length: o.recordsPerPartition }, (_, i) => `record-${i}`.padEnd(100, '.')),
      { ts: BigInt(Date.now()) },
    );
    const targets = topicNames.flatMap((name) => Array.from({ length: o.partitionsPerTopic }, (_, p) => ({ name, p })));
    const t1 = performance.now();
    for (let i = 0; i < targets.length; i += 1000) {
      const byTopic = new Map<string, number[]>();
      for (const { name, p } of targets.slice(i, i + 1000)) byTopic.set(name, [...(byTopic.get(name) ?? []), p]);
      const res = await client.request(0, ProduceRequestCodec, ProduceResponseCodec, 7, {
        transactionalId: null,
        acks: 1,
        timeoutMs: 30_000,
        topicData: [...byTopic].map(([name, ps]) => ({ name, partitionData: ps.map((index) => ({ index, records: batch })) })),
      });
      for (const t of res.responses)
        for (const p of t.partitionResponses) if (p.errorCode !== 0) throw new Error(`Produce ${t.name}-${p.index}: error ${p.errorCode}`);
    }
    const fillMs = performance.now() - t1;
    client.close();
    o.log(`wrote ${o.recordsPerPartition} records to each partition in ${(fillMs / 1000).toFixed(1)} s`);
    const afterFill = await snapshot(broker);
    o.log(`after fill: ${JSON.stringify(afterFill)}`);

    let throughput: ManyPartitionsResult['throughput'];
    let afterThroughput: MemorySnapshot | undefined;
    if (o.rdkafkaPerf && o.topics === 1) {
      // Keyless records, no sticky partitioning: librdkafka spreads them over every partition.
      const cpu0 = await cpuSeconds(broker.pid);
      const perf = spawn(
        o.rdkafkaPerf,
        [
          'produce',
          '-b',
          `127.0.0.1:${port}`,
          '-t',
          topicNames[0]!,
          '-n',
          String(o.throughputRecords),
          '-s',
          String(o.recordBytes),
          '-a',
          '1',
          '-l',
          '5',
          '-X',
          'sticky.partitioning.linger.ms=0',
        ],
        { stdio: ['ignore', 'pipe', 'pipe'] },
      );
      let out = '';
      let err = '';
      perf.stdout!.on('data', (d: Buffer) => (out += d.toString()));
      perf.stderr!.on('data', (d: Buffer) => (err += d.toString()));
      const [code] = (await once(perf, 'exit')) as [number | null];
      if (code !== 0) throw new Error(`rdkafka-perf failed (${code}): ${err}`);
      const cpu = (await cpuSeconds(broker.pid)) - cpu0;
      const r = JSON.parse(out.trim().split('\n').at(-1)!) as { mb_per_s: number; records_per_s: number };
      throughput = { mbPerS: r.mb_per_s, recordsPerS: r.records_per_s, cpuSecondsPerGB: cpu / ((o.throughputRecords * o.recordBytes) / 1024 ** 3) };
      afterThroughput = await snapshot(broker);
      o.log(`throughput: ${JSON.stringify(throughput)}, after: ${JSON.stringify(afterThroughput)}`);
    }

    const shutdownMs = await stop(broker);
    o.log(`clean shutdown: ${(shutdownMs / 1000).toFixed(1)} s`);
    await o.afterShutdown?.(logDir);
    broker = start();
    const restart = await waitReady(broker, partitions);
    const restartCpuSeconds = await cpuSeconds(broker.pid);
    o.log(`restart: listening ${(restart.listeningMs / 1000).toFixed(1)} s, all partitions ${(restart.readyMs / 1000).toFixed(1)} s`);
    const afterRestart = await snapshot(broker);
    o.log(`after restart: ${JSON.stringify(afterRestart)}`);
    return {
      partitions,
      firstStartMs: first.readyMs,
      createMs,
      fillMs,
      afterFill,
      throughput,
      afterThroughput,
      shutdownMs,
      restartListeningMs: restart.listeningMs,
      restartMs: restart.readyMs,
      restartCpuSeconds,
      afterRestart,
    };
  } finally {
    if (broker.child.exitCode === null) await stop(broker);
  }
}

export const loadAverage = (): string =>
  os
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(' ');

interface Layout {
  topics: number;
  perTopic: number;
}
const LAYOUTS: readonly Layout[] = [
  { topics: 1, perTopic: 10_000 },
  { topics: 100, perTopic: 100 },
];
const QUICK_LAYOUTS: readonly Layout[] = [
  { topics: 1, perTopic: 1000 },
  { topics: 10, perTopic: 100 },
];
const RSS_TARGET_MB = 250;
const RESTART_TARGET_S = 10;

const manyPartitions: Workload = {
  name: 'many-partitions',
  order: 40,
  title: '10,000 partitions',
  description:
    'Fjord only (NATS JetStream and Redis Streams have no partitions to compare with). One broker (bin/kafka-server-start.sh, temp log dir) gets ' +
    '10,000 partitions as 1 topic × 10,000 and as 100 topics × 100 (CreateTopics, 1,000 partitions a request), 10 records of 100 B written to ' +
    'each (one batch per partition, 1,000 partitions a Produce request); then its RSS (/proc/PID/status VmRSS), JS heap (process.memoryUsage() from a ' +
    'preloaded module, on SIGUSR2) and open files; on the one-topic layout, 100 B records produced by librdkafka (rdkafka-perf, acks=1, ' +
    'sticky.partitioning.linger.ms=0: each record to a random partition, so requests carry many partitions of a record or two); the time a ' +
    'SIGTERM takes to exit; and the restart on the same directories (clean shutdown marker: no recovery) until Metadata lists every partition ' +
    'with its leader. RSS is the largest of the three readings (after the writes, after the produce, after the restart).',
  systems: ['fjord'],
  primary: 'RSS MB',
  async run(ctx) {
    if (!ctx.wants('fjord')) return { figures: [] };
    const layouts = ctx.quick ? QUICK_LAYOUTS : LAYOUTS;
    const records = ctx.quick ? 20_000 : 200_000;
    const rdkafkaPerf = await ctx.tool('rdkafka-perf');
    ctx.command('node --import tsx bench/many-partitions.ts 1x10000 100x100   (the same measurement, one run, as a table)');
    ctx.command(`rdkafka-perf produce -b BROKER -t TOPIC -n ${records} -s 100 -a 1 -l 5 -X sticky.partitioning.linger.ms=0`);
    const samples: Sample[] = [];
    for (const repeat of ctx.repeatIndices()) {
      for (const { topics, perTopic } of ctx.rotate(layouts, repeat)) {
        const c = `${(topics * perTopic).toLocaleString('en-US')} partitions: ${topics} topic${topics > 1 ? 's' : ''} × ${perTopic.toLocaleString('en-US')}`;
        ctx.log(`many-partitions ${c} (repeat ${repeat + 1})`);
        const r = await measureManyPartitions({
          root: ctx.root,
          workDir: path.join(ctx.tmpDir, `many-partitions-${topics}x${perTopic}-${repeat}`),
          topics,
          partitionsPerTopic: perTopic,
          recordsPerPartition: 10,
          rdkafkaPerf,
          throughputRecords: records,
          recordBytes: 100,
          log: (line) => ctx.log(`  ${line}`),
        });
        await rm(path.join(ctx.tmpDir, `many-partitions-${topics}x${perTopic}-${repeat}`), { recursive: true, force: true });
        const rss = Math.max(r.afterFill.rssMB, r.afterThroughput?.rssMB ?? 0, r.afterRestart.rssMB);
        const add = (metric: string, value: number, higherIsBetter = false): void => {
          samples.push({ case: c, system: 'fjord', metric, value, higherIsBetter });
        };
        add('RSS MB', rss);
        add('JS heap MB', Math.max(r.afterFill.heapUsedMB, r.afterThroughput?.heapUsedMB ?? 0, r.afterRestart.heapUsedMB));
        add('open files', r.afterFill.fds);
        add('create s', r.createMs / 1000);
        add('clean shutdown s', r.shutdownMs / 1000);
        add('restart s', r.restartMs / 1000);
        add('restart CPU s', r.restartCpuSeconds);
        if (r.throughput) {
          add('produce 100 B MB/s', r.throughput.mbPerS, true);
          add('produce CPU s/GB', r.throughput.cpuSecondsPerGB);
        }
      }
    }
    const figures = ctx.medians(samples);
    const worst = (metric: string): { value: number; case: string } =>
      figures.filter((f) => f.metric === metric).reduce((a, f) => (f.value > a.value ? { value: f.value, case: f.case } : a), { value: 0, case: '' });
    const rss = worst('RSS MB');
    const restart = worst('restart s');
    const scale = ctx.quick ? ' (quick run: fewer partitions, not the target size)' : '';
    return {
      figures,
      targets: [
        {
          target: `≤ ${RSS_TARGET_MB} MB RSS with 10,000 partitions`,
          met: rss.value <= RSS_TARGET_MB,
          figure: `${rss.value.toFixed(0)} MB (${rss.case})${scale}`,
          ...(rss.value > RSS_TARGET_MB ? { note: 'JS heap and per-partition objects; see bench/RESULTS.md "10,000 partitions" for the heap breakdown' } : {}),
        },
        {
          target: `restart after a clean shutdown with 10,000 partitions ≤ ${RESTART_TARGET_S} s`,
          met: restart.value <= RESTART_TARGET_S,
          figure: `${restart.value.toFixed(1)} s (${restart.case})${scale}`,
          ...(restart.value > RESTART_TARGET_S
            ? { note: 'loading 10,000 logs: a few small file reads each, on one event loop; see the profile in bench/RESULTS.md' }
            : {}),
        },
      ],
      notes: [
        'RSS: the largest reading of a run; JS heap: process.memoryUsage().heapUsed, garbage not yet collected included.',
        'Produce: only the one-topic layout (rdkafka-perf produces to one topic); each record goes to a random partition, so a Produce request holds ~1 record per partition.',
      ],
    };
  },
};

export default manyPartitions;
