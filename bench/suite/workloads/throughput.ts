/**
 * The throughput workloads of `npm run bench`: produce (1 KiB and 100 B, acks=1 and acks=all,
 * 1, 8 and 64 partitions) beside NATS JetStream, Redis Streams and dd; consume from the page
 * cache and cold beside NATS JetStream and iperf3; compressed produce (lz4, zstd; Fjord only).
 */
import { execFileSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import { formatNumber, ratio } from '../stats.js';
import type { Figure, FjordHandle, NatsHandle, RedisHandle, Sample, SuiteContext, TargetCheck, Workload } from '../workload.js';
import {
  ddLimit,
  evictFromPageCache,
  fjordConsume,
  fjordProduce,
  iperf3Limit,
  natsConsume,
  natsDelete,
  natsProduce,
  redisProduce,
  throughputSamples,
} from '../measure.js';

const sizeLabel = (size: number) => (size >= 1024 ? `${size / 1024} KiB` : `${size} B`);
const partitionsLabel = (n: number) => `${n} partition${n === 1 ? '' : 's'}`;
/** Records per run: 200,000 of 1 KiB (195 MiB), 500,000 of 100 B (48 MiB); a twentieth of that with --quick. */
const recordsFor = (ctx: SuiteContext, size: number) => (size >= 1024 ? 200_000 : 500_000) / (ctx.quick ? 20 : 1);

interface Systems {
  fjord?: FjordHandle;
  /** Fjord with num.io.threads = the core count (shard workers; docs/threads.md): the "all threads" column. */
  fjordThreads?: FjordHandle;
  nats?: NatsHandle;
  redis?: RedisHandle;
}

/** Starts the servers among `names` that --systems selects; runs `body`; stops them all. */
async function withSystems<T>(
  ctx: SuiteContext,
  names: readonly ('fjord' | 'fjord-threads' | 'nats' | 'redis')[],
  body: (s: Systems) => Promise<T>,
): Promise<T> {
  const s: Systems = {};
  try {
    if (names.includes('fjord') && ctx.wants('fjord')) s.fjord = await ctx.startFjord();
    if (names.includes('fjord-threads') && ctx.wants('fjord-threads'))
      s.fjordThreads = await ctx.startFjord({ 'num.io.threads': String(availableParallelism()) });
    if (names.includes('nats') && ctx.wants('nats')) s.nats = await ctx.startNats();
    if (names.includes('redis') && ctx.wants('redis')) s.redis = await ctx.startRedis();
    return await body(s);
  } finally {
    await Promise.all([s.fjord?.stop(), s.fjordThreads?.stop(), s.nats?.stop(), s.redis?.stop()]);
  }
}

/**
 * Fjord's worst and best ratio against `other` over the rows `rows` selects, judged against
 * `threshold`. Where missed, the note says whether Fjord's one event loop was the limit.
 */
export function ratioTarget(
  target: string,
  figures: readonly Figure[],
  other: string,
  threshold: number,
  rows: (c: string) => boolean,
  otherFallback = false,
): TargetCheck | undefined {
  const mb = figures.filter((f) => f.metric === 'MB/s' && rows(f.case));
  const fallback = otherFallback ? figures.find((f) => f.system === other && f.metric === 'MB/s') : undefined;
  const pairs = mb
    .filter((f) => f.system === 'fjord')
    .map((f) => {
      const o = mb.find((x) => x.system === other && x.case === f.case) ?? fallback;
      return { case: f.case, fjord: f.value, other: o?.value, r: ratio(f.value, o?.value) };
    })
    .filter((p) => Number.isFinite(p.r));
  if (pairs.length === 0) return undefined;
  pairs.sort((a, b) => a.r - b.r);
  const worst = pairs[0]!;
  const best = pairs.at(-1)!;
  const met = worst.r >= threshold;
  const busy = figures.find((f) => f.system === 'fjord' && f.case === worst.case && f.metric === 'server CPU % of a core');
  // CPU per GB tolerates a loaded machine where MB/s does not: shown beside the worst row.
  const cpu = (system: string) => figures.find((f) => f.system === system && f.case === worst.case && f.metric === 'server CPU s/GB');
  const cpuFjord = cpu('fjord');
  const cpuOther = cpu(other);
  const cpuNote =
    cpuFjord !== undefined && cpuOther !== undefined ? `; server CPU there ${formatNumber(cpuFjord.value)} against ${formatNumber(cpuOther.value)} s/GB` : '';
  const note = met
    ? undefined
    : busy === undefined
      ? 'see the table'
      : busy.value >= 85
        ? `Fjord's one event loop is saturated on ${worst.case} (${formatNumber(busy.value)}% of a core): the data path needs more cores (issue 26's threads); profile with node --cpu-prof`
        : `Fjord's server was ${formatNumber(busy.value)}% busy on ${worst.case}: the load generator or the machine's other load limits this figure`;
  return {
    target,
    met,
    figure:
      `${worst.r.toFixed(2)}× at worst (${worst.case}: ${formatNumber(worst.fjord)} against ${formatNumber(worst.other!)} MB/s${cpuNote})` +
      (pairs.length > 1 ? `, ${best.r.toFixed(2)}× at best (${best.case})` : ''),
    note,
  };
}

/**
 * V8 compiles a broker's hot path while it runs: a fresh Fjord spends about twice a warm one's CPU
 * per MB on its first 200 MB and ~30% more on the next 2 GB (bench/RESULTS.md, "Issue 26: the
 * default broker's produce CPU"). A broker in service is warm, so each Fjord produces 2 GB of
 * 1 KiB records, not measured, before the first measured run; NATS (Go) and Redis (C) are
 * compiled ahead of time and need none. Skipped with --quick.
 */
async function warmUp(ctx: SuiteContext, brokers: (FjordHandle | undefined)[]): Promise<void> {
  if (ctx.quick) return;
  for (const fjord of brokers) {
    if (fjord === undefined) continue;
    ctx.log('produce: warm-up, 2 GB of 1 KiB records (not measured)');
    await fjord.createTopic('warm-up', 8);
    await fjordProduce(ctx, fjord, 'warm-up', { records: 2_000_000, size: 1024, acks: '1' });
    await fjord.deleteTopic('warm-up');
    // The deleted logs are removed in the background and the 2 GB are dirty pages: both done
    // before the first measured run, so neither overlaps it (sync writes every dirty page back).
    const deadline = Date.now() + 120_000;
    while (readdirSync(fjord.logDir).some((name) => name.startsWith('warm-up-')) && Date.now() < deadline) await sleep(200);
    execFileSync('sync');
  }
}

const produce: Workload = {
  name: 'produce',
  order: 10,
  title: 'Produce throughput',
  description:
    'Each system runs as its own process; its CPU time comes from /proc/PID/stat. Fjord: bench/rdkafka-perf.c (librdkafka, linger.ms=5, ' +
    'batch.size=1 MB, no key) into a fresh topic. NATS JetStream: bench/nats-perf.c, async publish with at most 8,192 unacknowledged ' +
    'messages; a partition maps to a stream (file store, 1 replica), records spread round-robin over them; JetStream acknowledges once its ' +
    'one replica stored a message, so its one run stands in both the acks=1 and acks=all rows. Redis Streams: redis-benchmark -P 64 XADD ' +
    '(50 connections), one stream per partition (key chosen at random per command), appendonly everysec; Redis has no acks setting, so its ' +
    'one run also stands in both rows. Limit: dd of 256 MiB (1 MiB blocks, conv=fdatasync) to the log directory’s disk. ' +
    '"server CPU % of a core" near 100 means the server, not its load generator, was the limit. "Fjord, 1 thread" is the default broker ' +
    '(num.io.threads=1); "Fjord, all threads" the same broker at num.io.threads = the core count, its partitions on shard worker threads ' +
    '(docs/threads.md; the load generator runs on the same cores). Each Fjord first produces 2 GB that are not measured, so that V8 has ' +
    'compiled its hot path as in a broker in service (NATS and Redis are compiled ahead of time).',
  systems: ['fjord', 'fjord-threads', 'nats', 'redis', 'dd'],
  limit: 'dd',
  async run(ctx) {
    const sizes = [1024, 100];
    const partitions = ctx.quick ? [1, 8] : [1, 8, 64];
    const samples: Sample[] = [];
    await withSystems(ctx, ['fjord', 'fjord-threads', 'nats', 'redis'], async (s) => {
      await warmUp(ctx, [s.fjord, s.fjordThreads]);
      for (const repeat of ctx.repeatIndices()) {
        for (const size of sizes) {
          for (const p of partitions) {
            const records = recordsFor(ctx, size);
            const label = (acks: string) => `${sizeLabel(size)}, ${partitionsLabel(p)}, acks=${acks}`;
            for (const system of ctx.rotate(['fjord', 'fjord-threads', 'nats', 'redis'] as const, repeat)) {
              if (!ctx.wants(system)) continue;
              ctx.log(`produce ${label('1/all')}: ${system} (repeat ${repeat + 1})`);
              const fjord = system === 'fjord' ? s.fjord : system === 'fjord-threads' ? s.fjordThreads : undefined;
              if (fjord !== undefined) {
                for (const acks of ['1', 'all'] as const) {
                  const topic = `produce-${size}-${p}-${acks}-${repeat}`;
                  await fjord.createTopic(topic, p);
                  samples.push(...throughputSamples(label(acks), system, await fjordProduce(ctx, fjord, topic, { records, size, acks })));
                  await fjord.deleteTopic(topic);
                }
              } else if (system === 'nats' && s.nats !== undefined) {
                const name = `produce_${size}_${p}_${repeat}`;
                const m = await natsProduce(ctx, s.nats, name, p, { records, size, acks: 'all' });
                await natsDelete(ctx, s.nats, name, p);
                for (const acks of ['1', 'all']) samples.push(...throughputSamples(label(acks), 'nats', m));
              } else if (system === 'redis' && s.redis !== undefined) {
                const m = await redisProduce(ctx, s.redis, `produce:${size}:${p}`, p, { records, size, acks: '1' });
                for (const acks of ['1', 'all']) samples.push(...throughputSamples(label(acks), 'redis', m));
              }
            }
          }
        }
        if (ctx.wants('dd')) {
          const m = await ddLimit(ctx, s.fjord?.logDir ?? ctx.tmpDir, ctx.quick ? 16 : 256);
          samples.push(...throughputSamples('disk limit: dd 1 MiB blocks, fdatasync', 'dd', m).filter((x) => x.metric === 'MB/s'));
        }
      }
    });
    const figures = ctx.medians(samples);
    const targets = [
      ratioTarget('produce ≥ 3× NATS JetStream', figures, 'nats', 3, () => true),
      ratioTarget('produce ≥ 3× Redis Streams', figures, 'redis', 3, () => true),
    ].filter((t): t is TargetCheck => t !== undefined);
    return {
      figures,
      targets,
      notes: [`${recordsFor(ctx, 1024).toLocaleString('en-US')} records of 1 KiB, ${recordsFor(ctx, 100).toLocaleString('en-US')} of 100 B per run.`],
    };
  },
};

const consume: Workload = {
  name: 'consume',
  order: 20,
  title: 'Consume throughput (page cache and cold)',
  description:
    'The records (1 KiB) are produced first (not timed), then read from the beginning. Fjord: bench/rdkafka-perf.c consume (assigned ' +
    'partitions, no group; fetch.max.bytes and max.partition.fetch.bytes 10 MiB, so a Fetch response holds at most 10 MiB on 1 and on 8 ' +
    'partitions alike: 50 MB responses on 8 partitions went beyond glibc’s largest mmap threshold and cost the client a fresh mmap, ' +
    'every page faulted in, per response; records taken off the consumer queue in batches of up to 4096 with ' +
    'rd_kafka_consume_batch_queue, each counted with its value’s length: a poll per record spent about 40% of the consumer’s ' +
    'application thread in locks and clock reads; each partition assigned at its log start offset, asked for before the clock starts, ' +
    'so that librdkafka’s own ListOffsets, which now and then went out 500 ms late, is not timed). NATS JetStream: bench/nats-perf.c, one ordered push consumer per stream (no acks, flow ' +
    'control). "page cache": right after producing. "cold": the log files were first evicted from the page cache (fdatasync + ' +
    'posix_fadvise(DONTNEED) on each file of that system’s log directory, not drop_caches, which would hit every process on the machine); ' +
    'NATS may still serve recent blocks from its own in-memory block cache. Redis Streams has no consume run here. Limit: loopback iperf3, one stream.',
  systems: ['fjord', 'fjord-threads', 'nats', 'iperf3'],
  limit: 'iperf3',
  async run(ctx) {
    const size = 1024;
    const records = recordsFor(ctx, size);
    const samples: Sample[] = [];
    await withSystems(ctx, ['fjord', 'fjord-threads', 'nats'], async (s) => {
      for (const repeat of ctx.repeatIndices()) {
        for (const p of [1, 8]) {
          const label = (kind: string) => `1 KiB, ${partitionsLabel(p)}, ${kind}`;
          for (const system of ctx.rotate(['fjord', 'fjord-threads', 'nats', 'iperf3'] as const, repeat)) {
            if (!ctx.wants(system) || (system === 'iperf3' && p !== 1)) continue;
            ctx.log(`consume ${label('page cache / cold')}: ${system} (repeat ${repeat + 1})`);
            const fjord = system === 'fjord' ? s.fjord : system === 'fjord-threads' ? s.fjordThreads : undefined;
            if (fjord !== undefined) {
              const topic = `consume-${p}-${repeat}`;
              await fjord.createTopic(topic, p);
              await fjordProduce(ctx, fjord, topic, { records, size, acks: '1' });
              samples.push(...throughputSamples(label('page cache'), system, await fjordConsume(ctx, fjord, topic, records)));
              await evictFromPageCache(ctx, fjord.logDir);
              samples.push(...throughputSamples(label('cold'), system, await fjordConsume(ctx, fjord, topic, records)));
              await fjord.deleteTopic(topic);
            } else if (system === 'nats' && s.nats !== undefined) {
              const name = `consume_${p}_${repeat}`;
              await natsProduce(ctx, s.nats, name, p, { records, size, acks: 'all' });
              samples.push(...throughputSamples(label('page cache'), 'nats', await natsConsume(ctx, s.nats, name, p, records, size)));
              await evictFromPageCache(ctx, s.nats.storeDir);
              samples.push(...throughputSamples(label('cold'), 'nats', await natsConsume(ctx, s.nats, name, p, records, size)));
              await natsDelete(ctx, s.nats, name, p);
            } else if (system === 'iperf3') {
              const m = await iperf3Limit(ctx, ctx.quick ? 1 : 3);
              samples.push(...throughputSamples('loopback limit: iperf3, 1 stream', 'iperf3', m).filter((x) => x.metric === 'MB/s'));
            }
          }
        }
      }
    });
    const figures = ctx.medians(samples);
    const targets = [
      ratioTarget('consume ≥ 50% of loopback iperf3 on 1 and on 8 partitions', figures, 'iperf3', 0.5, (c) => c.endsWith('page cache'), true),
    ].filter((t): t is TargetCheck => t !== undefined);
    return { figures, targets, notes: [`${records.toLocaleString('en-US')} records of 1 KiB per run.`] };
  },
};

const compression: Workload = {
  name: 'compression',
  order: 25,
  title: 'Compressed produce (Fjord)',
  description:
    'Fjord only: bench/rdkafka-perf.c produce of 1 KiB records with librdkafka compression.type none, lz4 and zstd, acks=1 (the ' +
    'broker validates, and for a compressed batch decompresses, every batch). The payload is one repeated byte, which compresses far ' +
    'better than real data: the figures show the broker’s per-batch cost, not a codec’s speed on real records.',
  systems: ['fjord'],
  async run(ctx) {
    const size = 1024;
    const records = recordsFor(ctx, size);
    const samples: Sample[] = [];
    if (!ctx.wants('fjord')) return { figures: [] };
    await withSystems(ctx, ['fjord'], async (s) => {
      for (const repeat of ctx.repeatIndices()) {
        for (const p of [1, 8]) {
          for (const codec of ctx.rotate(['none', 'lz4', 'zstd'], repeat)) {
            ctx.log(`compression ${codec}, ${partitionsLabel(p)} (repeat ${repeat + 1})`);
            const topic = `compressed-${codec}-${p}-${repeat}`;
            await s.fjord!.createTopic(topic, p);
            const m = await fjordProduce(ctx, s.fjord!, topic, { records, size, acks: '1', codec });
            samples.push(...throughputSamples(`1 KiB, ${partitionsLabel(p)}, ${codec}`, 'fjord', m));
            await s.fjord!.deleteTopic(topic);
          }
        }
      }
    });
    // Rows in a fixed order: by partitions, then none, lz4, zstd (the rotation changes which is seen first).
    const rank = (c: string) => Number.parseInt(c.split(', ')[1]!, 10) * 10 + ['none', 'lz4', 'zstd'].findIndex((k) => c.endsWith(k));
    const figures = ctx.medians(samples).sort((a, b) => rank(a.case) - rank(b.case));
    return { figures };
  },
};

export default [produce, consume, compression];
