/**
 * Issue 26, threads step 1: what shard workers cost and save, in-process (no network, the real
 * validation and append code). Produces 1 KiB records in ~1 MiB requests over 8 partitions
 * (one 128 KiB batch per partition per request, 4 requests in flight) through (a) today's
 * in-thread path (ReplicaManager on the main thread), (b) 1, (c) 2 and (d) 4 shard workers
 * (WorkerShards: the request's bytes in a SharedArrayBuffer slab, one message per shard).
 * Per run: MB/s, and each thread's CPU per MB (/proc/self/task/TID/schedstat: run time in ns):
 * the main thread, each worker thread (the threads that appeared when the workers started), the
 * rest (V8's helpers, libuv's pool); the main thread's CPU per request (the hand-over cost h of
 * docs/threads.md section 4 plus its bookkeeping); the postMessage calls per request to and from
 * the workers (each one wakes a sleeping thread). The load average is printed with every run.
 *
 *   node --import tsx bench/shard-scaling.ts [--mb 128] [--repeats 2] [--in-flight 4] [--modes 0,1,2,4] [--profile DIR]
 *
 * Runs alternate their order between repeats (inline, 1, 2, 4, then 4, 2, 1, inline). On a
 * loaded machine MB/s is noise; CPU per MB per thread is the figure to read.
 */
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { writeFile } from 'node:fs/promises';
import { Session } from 'node:inspector/promises';
import pino from 'pino';
import { encodeBatch, type KafkaRecord } from '../src/protocol/records/index.js';
import type { TopicInfo } from '../src/metadata/cluster-model.js';
import { buildBrokerConfig } from '../src/server/config/index.js';
import { LogManager } from '../src/storage/manager/log-manager.js';
import { ReplicaManager } from '../src/replication/replica-manager.js';
import { brokerLogDefaults } from '../src/replication/log-config.js';
import { MetadataMirror } from '../src/replication/shards/worker/metadata-mirror.js';
import { WorkerShards } from '../src/replication/shards/worker/worker-shards.js';
import type { AppendOutcome, AppendRequest } from '../src/replication/append/leader-appends.js';

const arg = (name: string, dflt: number): number => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : dflt;
};
const TOTAL_MB = arg('mb', 128);
const REPEATS = arg('repeats', 2);
const profileAt = process.argv.indexOf('--profile');
/** Where to write each run's main-thread CPU profile of the measured window (JS frames only: what runs outside JS shows as idle or program). */
const PROFILE_DIR = profileAt > 0 ? process.argv[profileAt + 1] : undefined;
const modesAt = process.argv.indexOf('--modes');
/** 0 is the in-thread path, n > 0 that many workers. */
const MODES = modesAt > 0 ? process.argv[modesAt + 1]!.split(',').map(Number) : [0, 1, 2, 4];
const PARTITIONS = 8;
const RECORDS_PER_BATCH = 128;
const IN_FLIGHT = arg('in-flight', 4);
const TOPIC: TopicInfo = {
  name: 'scaling',
  topicId: 'AAAAAAAAAAAAAAAAAAAAAQ',
  internal: false,
  configs: {},
  partitions: Array.from({ length: PARTITIONS }, (_, partition) => ({ partition, leader: 1, leaderEpoch: 0, replicas: [1], isr: [1], offlineReplicas: [] })),
};
const REQ: AppendRequest = { requiredAcks: 1, origin: 'client', produceVersion: 9 };

function batch(p: number): Buffer {
  const records: KafkaRecord[] = Array.from({ length: RECORDS_PER_BATCH }, (_, i) => ({
    attributes: 0,
    timestampDelta: 0,
    offsetDelta: i,
    key: null,
    value: Buffer.alloc(1024 - 8, (p * 31 + i) % 251),
    headers: [],
  }));
  return encodeBatch({ records, baseTimestamp: BigInt(Date.now()) });
}
const BATCHES = Array.from({ length: PARTITIONS }, (_, p) => batch(p));
const REQUEST_BYTES = BATCHES.reduce((a, b) => a + b.length, 0);
const REQUESTS = Math.ceil((TOTAL_MB * 1024 * 1024) / REQUEST_BYTES);

/** One request's frame: the batches back to back in one buffer (shared memory for the workers, as a network thread's slab). */
function frame(shared: boolean): Buffer[] {
  const buf = shared ? Buffer.from(new SharedArrayBuffer(REQUEST_BYTES)) : Buffer.allocUnsafeSlow(REQUEST_BYTES);
  let at = 0;
  return BATCHES.map((b) => {
    b.copy(buf, at);
    const part = buf.subarray(at, at + b.length);
    at += b.length;
    return part;
  });
}

async function threadTimes(): Promise<Map<number, number>> {
  const out = new Map<number, number>();
  for (const tid of await readdir('/proc/self/task')) {
    const text = await readFile(`/proc/self/task/${tid}/schedstat`, 'utf8').catch(() => '');
    if (text) out.set(Number(tid), Number(text.split(' ')[0]));
  }
  return out;
}

type Produce = (parts: { topic: string; partition: number; records: Buffer }[]) => Promise<AppendOutcome[]>;

/** Runs REQUESTS produces, IN_FLIGHT at a time, each slot reusing its own frame (the log writes offsets into it). */
async function drive(produce: Produce, shared: boolean): Promise<number> {
  const slots = Array.from({ length: IN_FLIGHT }, () => frame(shared));
  let next = 0;
  const started = process.hrtime.bigint();
  await Promise.all(
    slots.map(async (parts) => {
      while (next < REQUESTS) {
        next++;
        const outcomes = await produce(parts.map((records, partition) => ({ topic: TOPIC.name, partition, records })));
        if (outcomes.some((o) => o.errorCode !== 0)) throw new Error(`produce failed: ${JSON.stringify(outcomes.find((o) => o.errorCode !== 0))}`);
      }
    }),
  );
  return Number(process.hrtime.bigint() - started) / 1e9;
}

async function run(mode: number): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'fjord-shard-scaling-'));
  const config = buildBrokerConfig(
    new Map([
      ['broker.id', '1'],
      ['log.dirs', dir],
    ]),
  );
  const before0 = await threadTimes();
  let produce: Produce;
  let close: () => Promise<void>;
  // postMessage calls to and from the workers (each one a wake-up of a sleeping thread).
  let posts = (): number[] => [NaN, NaN];
  if (mode === 0) {
    const mirror = new MetadataMirror(1, 0, 1);
    mirror.apply([TOPIC]);
    const logManager = await LogManager.open({ logDirs: [dir], defaults: brokerLogDefaults(config), highWatermarkSetByOwner: true, cleanerEnabled: false });
    const rm = await ReplicaManager.start({ config, metadata: mirror, logManager, logger: pino({ level: 'silent' }) });
    await rm.syncTopic(TOPIC.name);
    produce = (parts) => Promise.all(parts.map((p) => rm.appendRecords(p.topic, p.partition, p.records, REQ)));
    close = async () => {
      await rm.shutdown();
      await logManager.shutdown();
    };
  } else {
    const shards = await WorkerShards.open({ config, workers: mode, topics: [TOPIC] });
    produce = (parts) => shards.produce(parts, REQ);
    posts = () => [shards.stats.postsToWorkers, shards.stats.postsFromWorkers];
    close = () => shards.shutdown();
  }
  const workerTids = [...(await threadTimes()).keys()].filter((t) => !before0.has(t));
  const load = loadavg()[0]!.toFixed(1);
  const session = PROFILE_DIR ? new Session() : undefined;
  if (session) {
    session.connect();
    await session.post('Profiler.enable');
    await session.post('Profiler.setSamplingInterval', { interval: 100 });
    await session.post('Profiler.start');
  }
  const t0 = await threadTimes();
  const posts0 = posts();
  const seconds = await drive(produce, mode > 0);
  const t1 = await threadTimes();
  const perRequest = posts().map((n, i) => ((n - posts0[i]!) / REQUESTS).toFixed(2));
  if (session) {
    const { profile } = await session.post('Profiler.stop');
    await writeFile(join(PROFILE_DIR!, `shard-scaling-${mode}-${Date.now()}.cpuprofile`), JSON.stringify(profile));
    session.disconnect();
  }
  await close();
  await rm(dir, { recursive: true, force: true });
  const mb = (REQUESTS * REQUEST_BYTES) / (1024 * 1024);
  const cpu = (tid: number): number => ((t1.get(tid) ?? 0) - (t0.get(tid) ?? 0)) / 1e6; // ms
  const main = cpu(process.pid);
  // Each worker brings more than one thread (its event loop and a mostly idle helper): the busiest `mode` are the shards.
  const shardTids = workerTids.sort((a, b) => cpu(b) - cpu(a)).slice(0, mode);
  const workers = shardTids.map(cpu);
  const others = [...t1.keys()].filter((t) => t !== process.pid && !shardTids.includes(t)).reduce((a, t) => a + cpu(t), 0);
  const perMb = (ms: number): string => (ms / mb).toFixed(2);
  const total = main + workers.reduce((a, b) => a + b, 0) + others;
  return `| ${mode === 0 ? 'in-thread' : `${mode} worker${mode > 1 ? 's' : ''}`} | ${(mb / seconds).toFixed(0)} | ${perMb(main)} | ${
    workers.length ? workers.map(perMb).join(' / ') : '–'
  } | ${perMb(others)} | ${perMb(total)} | ${((main * 1000) / REQUESTS).toFixed(0)} | ${mode === 0 ? '–' : perRequest.join(' / ')} | ${load} |`;
}

console.log(
  `shard-scaling: ${REQUESTS} requests of ${(REQUEST_BYTES / 1024).toFixed(0)} KiB (${PARTITIONS} partitions x ${RECORDS_PER_BATCH} records of 1 KiB), ${IN_FLIGHT} in flight, acks=1`,
);
console.log(
  '| path | MB/s | main ms/MB | each worker ms/MB | other threads ms/MB | total ms/MB | main µs/request | postMessages per request, to / from workers | load avg (1 min) |',
);
console.log('|---|---|---|---|---|---|---|---|---|');
for (let r = 0; r < REPEATS; r++) {
  const order = r % 2 === 0 ? MODES : [...MODES].reverse();
  for (const mode of order) console.log(await run(mode));
}
