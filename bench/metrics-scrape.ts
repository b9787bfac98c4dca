/**
 * Issue 23: the cost of a metrics scrape at 10,000 partitions. An in-process broker creates
 * 100 topics × 100 partitions (small segments and indexes so the logs fit on disk), then times
 * `broker.metrics.metrics()` (the whole Prometheus text of the broker's registry) and measures
 * its size and the longest the event loop was held meanwhile, with
 * metrics.partition.level.enable on, then again after a restart on the same directory with it off.
 * Issue 26: the third argument sets num.io.threads (default 1): at N > 1 the per-partition families
 * read the shard workers' partitions through PartitionShards.partitionStates.
 * Run: node --import tsx bench/metrics-scrape.ts [topics, default 100] [partitions per topic, default 100] [num.io.threads, default 1]
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { Admin } from '../src/client/index.js';
import { Broker } from '../src/server/broker.js';
import { buildBrokerConfig } from '../src/server/config/index.js';
import { silentLogger } from '../src/server/logger.js';
import { median } from './suite/stats.js';

const topics = Number(process.argv[2] ?? '100');
const perTopic = Number(process.argv[3] ?? '100');
const ioThreads = Number(process.argv[4] ?? '1');
const SCRAPES = 10;

async function startBroker(dir: string, partitionLevel: boolean): Promise<{ broker: Broker; bootstrap: string }> {
  const raw = new Map(
    Object.entries({
      listeners: 'PLAINTEXT://127.0.0.1:0',
      'log.dirs': dir,
      'log.segment.bytes': '1048576',
      'log.index.size.max.bytes': '4096',
      'metrics.partition.level.enable': String(partitionLevel),
      'num.io.threads': String(ioThreads),
    }),
  );
  const broker = new Broker(buildBrokerConfig(raw), silentLogger());
  await broker.start();
  const port = [...broker.boundPorts().values()][0]!;
  return { broker, bootstrap: `127.0.0.1:${port}` };
}

async function measure(broker: Broker, label: string): Promise<string> {
  await broker.metrics.metrics(); // warm-up
  const times: number[] = [];
  let bytes = 0;
  let lines = 0;
  const delay = monitorEventLoopDelay({ resolution: 1 });
  delay.enable();
  for (let i = 0; i < SCRAPES; i++) {
    const t0 = performance.now();
    const text = await broker.metrics.metrics();
    times.push(performance.now() - t0);
    bytes = Buffer.byteLength(text);
    lines = text.split('\n').filter((l) => l !== '' && !l.startsWith('#')).length;
    await new Promise((r) => setImmediate(r));
  }
  delay.disable();
  const maxBlockMs = delay.max / 1e6;
  return `| ${label} | ${median(times).toFixed(1)} ms (min ${Math.min(...times).toFixed(1)}, max ${Math.max(...times).toFixed(1)}) | ${(bytes / 1024).toFixed(0)} KiB | ${lines} | ${maxBlockMs.toFixed(1)} ms |`;
}

const dir = await mkdtemp(path.join(os.tmpdir(), 'fjord-metrics-scrape-'));
try {
  const rows: string[] = [];
  let b = await startBroker(dir, true);
  const admin = new Admin({ bootstrapServers: b.bootstrap });
  const t0 = performance.now();
  for (let t = 0; t < topics; t += 10) {
    const batch = Array.from({ length: Math.min(10, topics - t) }, (_, i) => ({ name: `scrape-${t + i}`, numPartitions: perTopic, replicationFactor: 1 }));
    const res = await admin.createTopics(batch, { timeoutMs: 600_000 });
    for (const [name, err] of res) if (err) throw new Error(`${name}: ${err.message}`);
  }
  await admin.close();
  console.error(`created ${topics * perTopic} partitions in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
  rows.push(await measure(b.broker, `${topics * perTopic} partitions, num.io.threads=${ioThreads}, metrics.partition.level.enable=true`));
  await b.broker.stop();
  b = await startBroker(dir, false);
  rows.push(await measure(b.broker, `${topics * perTopic} partitions, num.io.threads=${ioThreads}, metrics.partition.level.enable=false`));
  await b.broker.stop();
  console.log(
    `load average ${os
      .loadavg()
      .map((l) => l.toFixed(1))
      .join(' ')}; ${os.cpus().length} CPUs; median of ${SCRAPES} scrapes`,
  );
  console.log('| broker | scrape time (median) | size | samples | longest event-loop block |');
  console.log('|---|---|---|---|---|');
  for (const r of rows) console.log(r);
} finally {
  await rm(dir, { recursive: true, force: true });
}
