/**
 * One measured run per system, shared by the workloads: produce or consume N records with the
 * system's load generator while reading the server's CPU time, and the machine's limits (dd to
 * the log directory's disk, loopback iperf3). Each returns the bytes moved, the seconds and the
 * server's CPU seconds, from which the workloads derive MB/s, records/s and CPU s/GB.
 */
import { spawn } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { loadavg } from 'node:os';
import path from 'node:path';
import { freePort } from '../free-port.js';
import { track } from './fjord-child.js';
import { cpuSecondsPerGB, mbPerSecond } from './stats.js';
import type { FjordHandle, NatsHandle, RedisHandle, Sample, SuiteContext, SystemHandle, SystemName } from './workload.js';

const CLOCK_TICKS = 100; // USER_HZ on Linux

/** utime + stime of a process, in seconds, from /proc/PID/stat. */
export async function processCpuSeconds(pid: number): Promise<number> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
  // The command name may hold spaces and parentheses: fields count from after the last ')'.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS;
}

/** utime + stime of one thread of a process (`tid` = `pid` is its main thread), in milliseconds; 0 once the thread is gone. */
export async function threadCpuMs(pid: number, tid: number): Promise<number> {
  const stat = await readFile(`/proc/${pid}/task/${tid}/stat`, 'utf8').catch(() => '');
  if (stat === '') return 0;
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return Math.round(((Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS) * 1000);
}

/** utime + stime of a process, in milliseconds (10 ms steps). */
export async function processCpuMs(pid: number): Promise<number> {
  return Math.round((await processCpuSeconds(pid)) * 1000);
}

export async function processRssBytes(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  const m = /VmRSS:\s+(\d+) kB/.exec(status);
  return m ? Number(m[1]) * 1024 : Number.NaN;
}

/** The 1, 5 and 15 minute load averages, as printed beside every figure: "1.23 0.98 0.75". */
export function loadAverage(): string {
  return loadavg()
    .map((l) => l.toFixed(2))
    .join(' ');
}

export interface Measured {
  records: number;
  bytes: number;
  seconds: number;
  /** CPU seconds of the server process during the run (NaN for the limits). */
  serverCpu: number;
}

/** The samples of one measured run: MB/s, records/s, and (for servers) CPU s/GB and CPU busy %. */
export function throughputSamples(c: string, system: SystemName, m: Measured): Sample[] {
  const out: Sample[] = [
    { case: c, system, metric: 'MB/s', value: mbPerSecond(m.bytes, m.seconds), higherIsBetter: true },
    { case: c, system, metric: 'records/s', value: m.records / m.seconds, higherIsBetter: true },
  ];
  if (Number.isFinite(m.serverCpu)) {
    out.push({ case: c, system, metric: 'server CPU s/GB', value: cpuSecondsPerGB(m.serverCpu, m.bytes), higherIsBetter: false });
    out.push({ case: c, system, metric: 'server CPU % of a core', value: (100 * m.serverCpu) / m.seconds, higherIsBetter: false });
  }
  return out;
}

async function withCpu(server: Pick<SystemHandle, 'cpuSeconds'>, run: () => Promise<Omit<Measured, 'serverCpu'>>): Promise<Measured> {
  const before = await server.cpuSeconds();
  const m = await run();
  return { ...m, serverCpu: (await server.cpuSeconds()) - before };
}

function check(what: string, r: Record<string, number>, records: number): void {
  if ((r.failed ?? 0) !== 0 || r.records !== records) throw new Error(`${what}: ${r.records} of ${records} records, ${r.failed ?? 0} failed`);
}

export interface ProduceSpec {
  records: number;
  size: number;
  /** '1' or 'all' (Kafka); NATS and Redis have one acknowledgement mode (see the workloads' notes). */
  acks: '1' | 'all';
  /** librdkafka compression.type (Fjord only). */
  codec?: string;
}

/** bench/rdkafka-perf.c's produce arguments as every bench runs it: linger.ms=5, batch.size=1 MB, no key. */
export function rdkafkaProduceArgs(bootstrap: string, topic: string, spec: ProduceSpec): string[] {
  return [
    ...['produce', '-b', bootstrap, '-t', topic, '-n', String(spec.records), '-s', String(spec.size)],
    ...['-a', spec.acks === 'all' ? '-1' : '1', '-l', '5', '-B', '1000000', '-X', `compression.type=${spec.codec ?? 'none'}`],
  ];
}

/** rdkafka-perf produce (linger.ms=5, batch.size=1 MB) into `topic`, which must exist; CPU from `fjord.cpuSeconds` (a cluster may sum its brokers). */
export async function fjordProduce(
  ctx: SuiteContext,
  fjord: Pick<FjordHandle, 'bootstrap' | 'cpuSeconds'>,
  topic: string,
  spec: ProduceSpec,
): Promise<Measured> {
  const bin = await ctx.tool('rdkafka-perf');
  const args = rdkafkaProduceArgs(fjord.bootstrap, topic, spec);
  ctx.command(`<tmp>/rdkafka-perf ${args.join(' ')}`.replace(fjord.bootstrap, 'HOST:PORT').replace(` -t ${topic} `, ' -t TOPIC '));
  return withCpu(fjord, async () => {
    const r = await ctx.execJson(bin, args);
    check(`rdkafka-perf produce ${topic}`, r, spec.records);
    return { records: r.records!, bytes: r.bytes!, seconds: r.seconds! };
  });
}

/** rdkafka-perf consume of `records` records from every partition of `topic` (assigned, no group). */
export async function fjordConsume(ctx: SuiteContext, fjord: Pick<FjordHandle, 'bootstrap' | 'cpuSeconds'>, topic: string, records: number): Promise<Measured> {
  const bin = await ctx.tool('rdkafka-perf');
  const args = ['consume', '-b', fjord.bootstrap, '-t', topic, '-n', String(records)];
  ctx.command(`<tmp>/rdkafka-perf ${args.join(' ')}`.replace(fjord.bootstrap, 'HOST:PORT').replace(` -t ${topic} `, ' -t TOPIC '));
  return withCpu(fjord, async () => {
    const r = await ctx.execJson(bin, args);
    check(`rdkafka-perf consume ${topic}`, r, records);
    return { records: r.records!, bytes: r.bytes!, seconds: r.seconds! };
  });
}

/** nats-perf produce to `streams` streams named `name`_i (created when missing). */
export async function natsProduce(ctx: SuiteContext, nats: NatsHandle, name: string, streams: number, spec: ProduceSpec): Promise<Measured> {
  const bin = await ctx.tool('nats-perf');
  const args = ['produce', '-u', nats.url, '-t', name, '-p', String(streams), '-n', String(spec.records), '-s', String(spec.size)];
  ctx.command(`<tmp>/nats-perf ${args.join(' ')}`.replace(nats.url, 'nats://HOST:PORT').replace(` -t ${name} `, ' -t NAME '));
  return withCpu(nats, async () => {
    const r = await ctx.execJson(bin, args);
    check(`nats-perf produce ${name}`, r, spec.records);
    return { records: r.records!, bytes: r.bytes!, seconds: r.seconds! };
  });
}

export async function natsConsume(ctx: SuiteContext, nats: NatsHandle, name: string, streams: number, records: number, size: number): Promise<Measured> {
  const bin = await ctx.tool('nats-perf');
  const args = ['consume', '-u', nats.url, '-t', name, '-p', String(streams), '-n', String(records), '-s', String(size)];
  ctx.command(`<tmp>/nats-perf ${args.join(' ')}`.replace(nats.url, 'nats://HOST:PORT').replace(` -t ${name} `, ' -t NAME '));
  return withCpu(nats, async () => {
    const r = await ctx.execJson(bin, args);
    check(`nats-perf consume ${name}`, r, records);
    return { records: r.records!, bytes: r.bytes!, seconds: r.seconds! };
  });
}

/** Deletes the streams `name`_0.. so the next repeat starts on an empty store. */
export async function natsDelete(ctx: SuiteContext, nats: NatsHandle, name: string, streams: number): Promise<void> {
  const bin = await ctx.tool('nats-perf');
  const r = await ctx.exec(bin, ['delete', '-u', nats.url, '-t', name, '-p', String(streams)]);
  if (r.code !== 0) throw new Error(`nats-perf delete ${name}: ${r.stderr.trim()}`);
}

/**
 * redis-benchmark XADD with -P 64 (64 commands pipelined per connection, its 50 default
 * connections); with several streams the key is `name:__rand_int__` over `streams` keys. Every
 * key is deleted afterwards (FLUSHALL) so repeats start alike.
 */
export async function redisProduce(ctx: SuiteContext, redis: RedisHandle, name: string, streams: number, spec: ProduceSpec): Promise<Measured> {
  const key = streams > 1 ? `${name}:__rand_int__` : name;
  const args = ['-p', String(redis.port), '-n', String(spec.records), '-P', '64', '--csv'];
  if (streams > 1) args.push('-r', String(streams));
  args.push('XADD', key, '*', 'f', 'x'.repeat(spec.size));
  ctx.command(
    `redis-benchmark ${args.join(' ').replace('x'.repeat(spec.size), `<${spec.size} x>`).replace(String(redis.port), 'PORT').replace(` ${key} `, ' KEY ')}`,
  );
  const m = await withCpu(redis, async () => {
    const r = await ctx.exec('redis-benchmark', args);
    const last = r.stdout.trim().split('\n').pop() ?? '';
    const rps = Number(last.split(',')[1]?.replace(/"/g, ''));
    if (r.code !== 0 || !(rps > 0)) throw new Error(`redis-benchmark failed (${r.code}): ${(r.stderr || r.stdout).trim().slice(-500)}`);
    return { records: spec.records, bytes: spec.records * spec.size, seconds: spec.records / rps };
  });
  await ctx.exec('redis-cli', ['-p', String(redis.port), 'FLUSHALL']);
  return m;
}

/** dd of `mib` MiB from /dev/zero to `dir`'s disk, bs=1M, conv=fdatasync: what the disk takes. */
export async function ddLimit(ctx: SuiteContext, dir: string, mib: number): Promise<Measured> {
  const file = path.join(dir, 'dd.bench');
  const args = ['if=/dev/zero', `of=${file}`, 'bs=1M', `count=${mib}`, 'conv=fdatasync'];
  ctx.command(`dd ${args.join(' ').replace(dir, '<log dir>')}`);
  const r = await ctx.exec('dd', args);
  await ctx.exec('rm', ['-f', file]);
  const m = /(\d+) bytes .* copied, ([\d.,]+) s/.exec(r.stderr);
  if (r.code !== 0 || !m) throw new Error(`dd failed: ${r.stderr.trim()}`);
  return { records: mib, bytes: Number(m[1]), seconds: Number(m[2]!.replace(',', '.')), serverCpu: Number.NaN };
}

/** Loopback iperf3, one stream, for `seconds`: what TCP on this machine carries. */
export async function iperf3Limit(ctx: SuiteContext, seconds: number): Promise<Measured> {
  const port = await freePort();
  const server = track(spawn('iperf3', ['-s', '-p', String(port), '-1'], { stdio: 'ignore' }));
  try {
    const args = ['-c', '127.0.0.1', '-p', String(port), '-t', String(seconds), '-J'];
    ctx.command(`iperf3 -s -p PORT -1; iperf3 ${args.join(' ').replace(String(port), 'PORT')}`);
    // The server's "listening" line is block-buffered into a pipe: try the client until the
    // server accepts (a refused connection fails at once), within a deadline.
    const deadline = performance.now() + 15_000;
    for (;;) {
      // A refused connection can still exit 0 with -J: the JSON then has `error` and no `end` sums.
      const r = await ctx.exec('iperf3', args);
      let report: { error?: string; end?: { sum_received?: { bytes: number; seconds: number } } } = {};
      try {
        report = JSON.parse(r.stdout) as typeof report;
      } catch {}
      const received = report.end?.sum_received;
      if (r.code === 0 && received !== undefined && received.seconds > 0) {
        return { records: 0, bytes: received.bytes, seconds: received.seconds, serverCpu: Number.NaN };
      }
      if (performance.now() > deadline || server.exitCode !== null) throw new Error(`iperf3 failed: ${report.error ?? r.stdout.slice(-500)}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  } finally {
    if (server.exitCode === null) server.kill();
  }
}

/**
 * Evicts `dir`'s files from the page cache: fdatasync then posix_fadvise(POSIX_FADV_DONTNEED) on
 * each file (a small Python helper), so only these files go cold; `echo 1 > drop_caches` would
 * also evict what every other process on the machine has cached.
 */
export async function evictFromPageCache(ctx: SuiteContext, dir: string): Promise<void> {
  const script = [
    'import os, sys',
    'for root, _, files in os.walk(sys.argv[1]):',
    '    for f in files:',
    '        fd = os.open(os.path.join(root, f), os.O_RDONLY)',
    '        try:',
    '            os.fdatasync(fd)',
    '            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)',
    '        finally:',
    '            os.close(fd)',
  ].join('\n');
  ctx.command(`python3 -c '<for each file: fdatasync, posix_fadvise(POSIX_FADV_DONTNEED)>' <log dir>`);
  const r = await ctx.exec('/usr/bin/python3', ['-c', script, dir]);
  if (r.code !== 0) throw new Error(`evicting ${dir} from the page cache: ${r.stderr.trim()}`);
}
