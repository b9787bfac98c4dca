/**
 * Issue 26: a broker with 10,000 partitions (bench/suite/workloads/many-partitions.ts does the
 * measuring): RSS, JS heap, open files, start-up, clean shutdown, restart, throughput.
 *
 *   npx tsc -p tsconfig.json && node --import tsx bench/many-partitions.ts [TOPICSxPARTITIONS ...]
 *
 * Layouts default to 1x10000 and 100x100. BENCH_RECORDS (200000) 100-byte records are produced
 * across the one-topic layout with librdkafka (bench/rdkafka-perf.c, compiled here).
 * FJORD_BENCH_HEAP_SNAPSHOTS=DIR writes a heap snapshot there before each memory reading.
 * BENCH_BASE=DIR measures a second build too (a checkout of another commit, built, with node_modules),
 * each layout on both builds one after the other, order alternating: before/after figures of one run.
 * BENCH_BROKER_NODE_ARGS runs the broker as `node ARGS dist/server/main.js` (e.g. "--cpu-prof --cpu-prof-dir=/tmp/p").
 */
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { loadAverage, measureManyPartitions, type ManyPartitionsResult } from './suite/workloads/many-partitions.js';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const layouts = (process.argv.slice(2).length > 0 ? process.argv.slice(2) : ['1x10000', '100x100']).map((l) => {
  const [t, p] = l.split('x').map(Number);
  if (!t || !p) throw new Error(`layout ${l}: expected TOPICSxPARTITIONS`);
  return { topics: t, perTopic: p };
});

const work = await mkdtemp(path.join(os.tmpdir(), 'fjord-many-partitions-'));
try {
  const bin = path.join(work, 'rdkafka-perf');
  await promisify(execFile)('gcc', ['-O2', '-o', bin, path.join(HERE, 'rdkafka-perf.c'), '-lrdkafka', '-lpthread']);
  const rows: string[] = [];
  const builds = [{ name: 'this build', root: path.join(HERE, '..') }];
  if (process.env.BENCH_BASE) builds.push({ name: `base (${path.basename(process.env.BENCH_BASE)})`, root: path.resolve(process.env.BENCH_BASE) });
  const runs = layouts.flatMap((layout, i) => (i % 2 === 0 ? builds : [...builds].reverse()).map((build) => ({ ...layout, build })));
  for (const { topics, perTopic, build } of runs) {
    const dir = path.join(work, `${topics}x${perTopic}`);
    const before = loadAverage();
    const r: ManyPartitionsResult = await measureManyPartitions({
      root: build.root,
      workDir: dir,
      topics,
      partitionsPerTopic: perTopic,
      recordsPerPartition: 10,
      rdkafkaPerf: bin,
      throughputRecords: Number(process.env.BENCH_RECORDS ?? 200_000),
      recordBytes: 100,
      nodeArgs: process.env.BENCH_BROKER_NODE_ARGS?.split(' ').filter((a) => a !== ''),
      log: (line) => console.error(`[${topics}x${perTopic} ${build.name}] ${line}`),
    });
    await rm(dir, { recursive: true, force: true });
    const mem = (m: ManyPartitionsResult['afterFill']): string =>
      `${m.rssMB.toFixed(0)} / ${m.hwmMB.toFixed(0)} MB, heap ${m.heapUsedMB.toFixed(0)} MB, ${m.fds} fds`;
    const s = (ms: number): string => `${(ms / 1000).toFixed(1)} s`;
    rows.push(
      `| ${topics} × ${perTopic}${builds.length > 1 ? `, ${build.name}` : ''} | ${s(r.createMs)} | ${mem(r.afterFill)} | ${r.throughput ? `${r.throughput.mbPerS.toFixed(1)} MB/s, ${Math.round(r.throughput.recordsPerS)} rec/s, ${r.throughput.cpuSecondsPerGB.toFixed(0)} CPU s/GB` : '—'} | ${s(r.shutdownMs)} | ${s(r.restartListeningMs)} / ${s(r.restartMs)} (CPU ${r.restartCpuSeconds.toFixed(1)} s) | ${mem(r.afterRestart)} | ${before} → ${loadAverage()} |`,
    );
  }
  console.log(
    '| layout | create | after 10 records each: RSS / HWM, heap, fds | produce 100 B to all partitions | clean shutdown | restart: ApiVersions / all partitions in Metadata (broker CPU) | after restart: RSS / HWM, heap, fds | load average |',
  );
  console.log('|---|---|---|---|---|---|---|---|');
  for (const r of rows) console.log(r);
} finally {
  await rm(work, { recursive: true, force: true });
}
