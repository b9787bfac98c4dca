/**
 * What the PartitionShards seam (issue 26, docs/threads.md step 0) costs on the produce and
 * fetch paths: the Produce and Fetch handlers of two source trees, an earlier commit (the
 * baseline) and the work tree, driven in ONE process, in turns, on brokers started in this
 * process, with no network in between (so the handler-to-log path is all that is measured, and
 * a cost added there shows larger than through a socket).
 *
 *   node --import tsx --expose-gc --max-semi-space-size=64 --min-semi-space-size=64 \
 *     bench/seam-cost.ts BASELINE_REF [rounds=3] [requests=300]
 *
 * - The baseline's src/ is extracted (`git archive`) into a temporary directory sharing this
 *   checkout's node_modules, and loaded through tsx like the work tree's: same transpiler, same
 *   process, same heap settings.
 * - Each build's broker hosts one topic of 8 partitions. A round is, per build (ABBA order
 *   across rounds): `requests` Produce requests (acks=1, 8 partitions x a 128 KiB batch of 1 KiB
 *   records: 1 MiB each) decoded and handed to the Produce handler, then as many Fetch requests reading those batches
 *   back (8 partitions, one batch each; decoded beforehand, their read buffers given back as the
 *   socket would). A gc() runs before each timed window. Then 20 more of each, counting the JS
 *   heap they allocate (heapBytesPerRequest): the figure a machine's load does not move.
 * - CPU per MB is process.cpuUsage (user + system, every thread: V8's GC helpers too) over the
 *   window, per MB of record payload: it tolerates a loaded machine far better than MB/s.
 *   Prints each round, then the median per build and path and after/before, with the load average.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, rm, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { PerformanceObserver } from 'node:perf_hooks';
import { getHeapStatistics } from 'node:v8';
import { loadAverage } from './suite/measure.js';
import { median } from './suite/stats.js';

const exec = promisify(execFile);
const [BASELINE, roundsArg, requestsArg] = process.argv.slice(2);
const ROUNDS = Number(roundsArg ?? 3);
const REQUESTS = Number(requestsArg ?? 300);
const PARTITIONS = 8;
const RECORDS_PER_BATCH = 128;
const RECORD_BYTES = 1024;
const MB = 1024 * 1024;
/** Requests per heap window: few enough that no scavenge runs in a 64 MB semi-space. */
const HEAP_REQUESTS = 20;
const ROOT = path.join(path.dirname(fileURLToPath(import.meta.url)), '..');

/** One build under test: its broker and a produce and a fetch call through its own handlers. */
interface Build {
  name: string;
  produce(): Promise<void>;
  fetch(batch: number): Promise<void>;
  stop(): Promise<void>;
}

async function loadBuild(name: string, root: string): Promise<Build> {
  const src = (p: string) => import(path.join(root, 'src', p));
  const { Broker } = await src('server/broker.ts');
  const { buildBrokerConfig } = await src('server/config/index.ts');
  const { silentLogger } = await src('server/logger.ts');
  const { fetchReadBuffers } = await src('storage/segment/read-buffer-pool.ts');
  const { produceHandler } = await src('server/handlers/00-produce.ts');
  const { fetchHandler } = await src('server/handlers/01-fetch.ts');
  const { ProduceRequestCodec, FetchRequestCodec } = await src('protocol/messages/index.ts');
  const { Reader, Writer } = await src('protocol/primitives/index.ts');
  const { encodeBatch } = await src('protocol/records/index.ts');
  const { ANONYMOUS } = await src('security/principal.ts');
  const dir = await mkdtemp(path.join(tmpdir(), `fjord-seam-${name}-`));
  const config = buildBrokerConfig(
    new Map([
      ['listeners', 'PLAINTEXT://127.0.0.1:0'],
      ['log.dirs', dir],
    ]),
  );
  const broker = new Broker(config, silentLogger(), {});
  await broker.start();
  const services = broker.services;
  await services.metadata.createTopic({ name: 'seam', numPartitions: PARTITIONS, replicationFactor: 1, configs: {} });
  await services.replicaManager.syncTopic('seam');
  const value = Buffer.alloc(RECORD_BYTES, 7);
  const batch = encodeBatch({
    records: Array.from({ length: RECORDS_PER_BATCH }, (_, i) => ({ attributes: 0, timestampDelta: 0, offsetDelta: i, key: null, value, headers: [] })),
    baseTimestamp: BigInt(Date.now()),
  });
  const connection = {
    connectionId: 'c',
    clientHost: '127.0.0.1',
    clientPort: 1,
    listenerName: 'PLAINTEXT',
    localPort: 2,
    securityProtocol: 'PLAINTEXT',
    principal: ANONYMOUS,
  };
  const encode = (codec: { write(w: unknown, v: unknown, version: number): void }, body: unknown, version: number): Buffer => {
    const w = new Writer(1 << 20);
    codec.write(w, body, version);
    return w.result();
  };
  const produceBytes = encode(
    ProduceRequestCodec,
    {
      transactionalId: null,
      acks: 1,
      timeoutMs: 5000,
      topicData: [{ name: 'seam', partitionData: Array.from({ length: PARTITIONS }, (_, index) => ({ index, records: batch })) }],
    },
    9,
  );
  const fetchRequest = (n: number): unknown =>
    fetchHandler.decode(
      new Reader(
        encode(
          FetchRequestCodec,
          {
            replicaId: -1,
            maxWaitMs: 0,
            minBytes: 0,
            maxBytes: 64 << 20,
            sessionEpoch: -1,
            topics: [
              {
                topic: 'seam',
                partitions: Array.from({ length: PARTITIONS }, (_, partition) => ({
                  partition,
                  fetchOffset: BigInt(n * RECORDS_PER_BATCH),
                  partitionMaxBytes: batch.length,
                })),
              },
            ],
          },
          12,
        ),
      ),
      12,
    );
  // Decoded before the timed windows: what is timed is the handlers and below.
  const fetches = Array.from({ length: (ROUNDS + 1) * REQUESTS }, (_, n) => fetchRequest(n));
  const ctx = (apiKey: number, apiVersion: number) => ({ header: { apiKey, apiVersion, correlationId: 1, clientId: 'seam-bench' }, connection, services });
  return {
    name,
    async produce() {
      // Decoded per request (the records are views of the frame; the append writes offsets into them).
      await produceHandler.handle(produceHandler.decode(new Reader(produceBytes), 9), ctx(0, 9));
    },
    async fetch(n) {
      const res = await fetchHandler.handle(fetches[n], ctx(1, 12));
      // The socket would give the read buffers back once written: so does this.
      for (const t of res.responses) for (const p of t.partitions) if (p.records) fetchReadBuffers.release(p.records);
    },
    async stop() {
      await broker.stop();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

const gc = (globalThis as { gc?: () => void }).gc;

async function cpuMsPerMb(run: () => Promise<void>): Promise<number> {
  gc?.();
  const before = process.cpuUsage();
  await run();
  const d = process.cpuUsage(before);
  const mb = (REQUESTS * PARTITIONS * RECORDS_PER_BATCH * RECORD_BYTES) / MB;
  return (d.user + d.system) / 1000 / mb;
}

let gcCount = 0;
new PerformanceObserver((list) => void (gcCount += list.getEntries().length)).observe({ entryTypes: ['gc'] });

/**
 * JS heap bytes allocated per request over `n` requests: after a full gc() the young generation
 * is empty and fills by bump allocation, so the growth of the used heap is what was allocated,
 * provided no collection ran meanwhile (-1 when one did: run with a larger semi-space). Off-heap
 * record bytes (Buffers over 4 KiB) are not counted; what the seam adds (objects, arrays,
 * closures, promises) is. Independent of the machine's load.
 */
async function heapBytesPerRequest(n: number, run: (i: number) => Promise<void>): Promise<number> {
  gc?.();
  // The forced collection's own entry reaches the observer a few turns later: let it land first.
  await new Promise((r) => setTimeout(r, 20));
  const gcs = gcCount;
  const before = getHeapStatistics().used_heap_size;
  for (let i = 0; i < n; i++) await run(i);
  const after = getHeapStatistics().used_heap_size;
  return gcCount === gcs ? (after - before) / n : -1;
}

async function main(): Promise<void> {
  if (!BASELINE) throw new Error('usage: node --import tsx --expose-gc bench/seam-cost.ts BASELINE_REF [rounds=3] [requests=300]');
  if (!gc) console.log('(no --expose-gc: windows start with whatever garbage the last one left)');
  const baseRoot = await mkdtemp(path.join(tmpdir(), 'fjord-seam-base-'));
  const builds: Build[] = [];
  try {
    await exec('bash', ['-c', `git -C '${ROOT}' archive '${BASELINE}' src | tar -x -C '${baseRoot}'`]);
    await symlink(path.join(ROOT, 'node_modules'), path.join(baseRoot, 'node_modules'));
    builds.push(await loadBuild('before', baseRoot), await loadBuild('after', ROOT));
    const loadBefore = loadAverage();
    const figures = new Map<string, number[]>();
    const note = (key: string, v: number) => figures.set(key, [...(figures.get(key) ?? []), v]);
    for (let round = 0; round < ROUNDS + 1; round++) {
      const order = round % 2 === 0 ? builds : [...builds].reverse();
      for (const b of order) {
        const produce = await cpuMsPerMb(async () => {
          for (let i = 0; i < REQUESTS; i++) await b.produce();
        });
        const fetch = await cpuMsPerMb(async () => {
          for (let i = 0; i < REQUESTS; i++) await b.fetch(round * REQUESTS + i);
        });
        const produceHeap = await heapBytesPerRequest(HEAP_REQUESTS, () => b.produce());
        const fetchHeap = await heapBytesPerRequest(HEAP_REQUESTS, (i) => b.fetch(round * REQUESTS + i));
        // Round 0 warms both (JIT, page cache) and is not counted.
        if (round > 0) {
          note(`${b.name} produce`, produce);
          note(`${b.name} fetch`, fetch);
          if (produceHeap >= 0) note(`${b.name} produce heap`, produceHeap);
          if (fetchHeap >= 0) note(`${b.name} fetch heap`, fetchHeap);
        }
        console.log(
          `round ${round}${round === 0 ? ' (warm-up)' : ''} ${b.name}: produce ${produce.toFixed(3)} CPU ms/MB, ${produceHeap.toFixed(0)} heap B/request; ` +
            `fetch ${fetch.toFixed(3)} CPU ms/MB, ${fetchHeap.toFixed(0)} heap B/request (load ${loadAverage()})`,
        );
      }
    }
    console.log(
      `\nbaseline ${BASELINE}; ${ROUNDS} rounds of ${REQUESTS} requests of ${PARTITIONS} x ${RECORDS_PER_BATCH} x ${RECORD_BYTES} B; load average before ${loadBefore}, after ${loadAverage()}\n`,
    );
    console.log('| path | before CPU ms/MB median (range) | after CPU ms/MB median (range) | after / before |');
    console.log('|---|---|---|---|');
    for (const pathName of ['produce', 'fetch']) {
      const a = figures.get(`before ${pathName}`)!;
      const b = figures.get(`after ${pathName}`)!;
      const range = (xs: number[]) => `${median(xs).toFixed(3)} (${Math.min(...xs).toFixed(3)}–${Math.max(...xs).toFixed(3)})`;
      console.log(`| ${pathName} | ${range(a)} | ${range(b)} | ${((100 * median(b)) / median(a)).toFixed(1)}% |`);
    }
    console.log('\n| path | before JS heap B/request median (range) | after JS heap B/request median (range) | after - before |');
    console.log('|---|---|---|---|');
    for (const pathName of ['produce', 'fetch']) {
      const a = figures.get(`before ${pathName} heap`) ?? [];
      const b = figures.get(`after ${pathName} heap`) ?? [];
      if (a.length === 0 || b.length === 0) {
        console.log(`| ${pathName} | a collection ran in every window: raise --max-semi-space-size | | |`);
        continue;
      }
      const range = (xs: number[]) => `${median(xs).toFixed(0)} (${Math.min(...xs).toFixed(0)}–${Math.max(...xs).toFixed(0)})`;
      console.log(`| ${pathName} | ${range(a)} | ${range(b)} | ${(median(b) - median(a)).toFixed(0)} |`);
    }
  } finally {
    for (const b of builds) await b.stop().catch(() => undefined);
    await rm(baseRoot, { recursive: true, force: true });
  }
}

await main();
