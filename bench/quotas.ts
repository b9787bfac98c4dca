/**
 * Client quotas (issue 15), two parts:
 *
 *   node --import tsx bench/quotas.ts throttle [seconds=33]
 *   node --import tsx bench/quotas.ts overhead [requests=20000] [repeats=3]
 *
 * throttle: a broker in this process with Kafka's default quota windows (quota.window.num=11 of
 * 1 s) and producer_byte_rate=1048576 on client id `greedy`. A greedy confluent-kafka producer
 * (10 kB values, acks=1, keeps librdkafka's queue full) runs `seconds`; a second producer, client
 * id `normal`, runs alone for 6 s first and then 6 s beside the greedy one. Reported: the greedy
 * rate over the whole run and per 11 s (Kafka's windows first allow a burst of bound × 10 s, then
 * hold the average at the bound), the normal rate alone and beside it, and the throttle times
 * librdkafka saw.
 *
 * overhead: what quotas cost Produce and Fetch when none applies. `requests` Produce requests
 * (one 100-byte record, acks=1, v9) then `requests` Fetch requests (v12, 1 kB max, from offset 0),
 * 32 in flight on one connection, for: no quota at all; quotas on another client id (the
 * resolution is looked up, cached); a quota on this client id too high to throttle (every request
 * recorded). Rounds are interleaved, `repeats` times; the median requests/s is reported. Run it
 * also from a checkout of main (before quotas) for the "before" line.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import net from 'node:net';
import { once } from 'node:events';
import { Broker } from '../src/server/broker.js';
import { buildBrokerConfig } from '../src/server/config/index.js';
import { silentLogger } from '../src/server/logger.js';
import { FetchRequestCodec, ProduceRequestCodec } from '../src/protocol/messages/index.js';
import { encodeRequest } from '../test/helpers/raw-client.js';
import { CompressionType, encodeBatch } from '../src/protocol/records/index.js';
import { loadAverage } from './suite/measure.js';
import { median } from './suite/stats.js';

const MB = 1024 * 1024;

async function startBroker(props: Record<string, string>): Promise<{ broker: Broker; bootstrap: string; port: number; dir: string }> {
  const dir = await mkdtemp(join(tmpdir(), 'fjord-bench-quotas-'));
  const broker = new Broker(buildBrokerConfig(new Map(Object.entries({ listeners: 'PLAINTEXT://127.0.0.1:0', 'log.dirs': dir, ...props }))), silentLogger());
  await broker.start();
  const port = broker.boundPorts().get('PLAINTEXT')!;
  return { broker, bootstrap: `127.0.0.1:${port}`, port, dir };
}

async function throttle(seconds: number): Promise<void> {
  const { greedyProducer, rateBetween } = await import('../test/interop/quota-clients.js');
  const { Admin } = await import('../src/client/index.js');
  const { broker, bootstrap, dir } = await startBroker({});
  const admin = new Admin({ bootstrapServers: bootstrap });
  try {
    await admin.createTopics([
      { name: 'greedy-t', numPartitions: 1, replicationFactor: 1 },
      { name: 'normal-t', numPartitions: 1, replicationFactor: 1 },
    ]);
    await admin.alterClientQuotas([{ entity: [{ entityType: 'client-id', entityName: 'greedy' }], ops: [{ key: 'producer_byte_rate', value: 1048576 }] }]);
    const alone = await greedyProducer(bootstrap, 'normal-t', 'normal', 6);
    const greedyRun = greedyProducer(bootstrap, 'greedy-t', 'greedy', seconds);
    await new Promise((r) => setTimeout(r, 12_000)); // into the greedy run's held phase
    const beside = await greedyProducer(bootstrap, 'normal-t', 'normal', 6);
    const greedy = await greedyRun;
    const fmt = (bps: number): string => `${(bps / MB).toFixed(2)} MB/s`;
    console.log(`load average ${loadAverage()}`);
    console.log(
      `greedy, producer_byte_rate=1048576, quota.window.num=11: ${fmt(rateBetween(greedy, greedy.start, greedy.end))} over ${(greedy.end - greedy.start).toFixed(1)} s`,
    );
    for (let t = 0; t + 11 <= greedy.end - greedy.start + 0.01; t += 11) {
      console.log(`  seconds ${t}-${t + 11}: ${fmt(rateBetween(greedy, greedy.start + t, greedy.start + t + 11))}`);
    }
    const thr = greedy.throttles.map((x) => x[1] * 1000);
    console.log(
      `  throttle_time_ms seen by librdkafka: ${thr.length} responses, median ${(thr.length > 0 ? median(thr) : 0).toFixed(0)} ms, max ${Math.max(0, ...thr).toFixed(0)} ms`,
    );
    console.log(
      `normal alone: ${fmt(rateBetween(alone, alone.start + 1, alone.end))}; beside the throttled greedy producer: ${fmt(rateBetween(beside, beside.start + 1, beside.end))}`,
    );
  } finally {
    await admin.close();
    await broker.stop();
    await rm(dir, { recursive: true, force: true });
  }
}

/** CPU µs of this process (broker and client) per request of the last pipelined() run. */
let lastCpuUsPerRequest = 0;

/** Sends `frames` with at most `window` unanswered; resolves with the elapsed ms. */
async function pipelined(port: number, frames: Buffer[], window = 32): Promise<number> {
  const cpu0 = process.cpuUsage();
  const socket = net.connect(port, '127.0.0.1');
  await once(socket, 'connect');
  socket.setNoDelay(true);
  let pending: Buffer = Buffer.alloc(0);
  let answered = 0;
  let sent = 0;
  const t0 = performance.now();
  await new Promise<void>((resolve, reject) => {
    const pump = (): void => {
      while (sent < frames.length && sent - answered < window) socket.write(frames[sent++]!);
    };
    socket.on('data', (chunk: Buffer) => {
      pending = pending.length === 0 ? chunk : Buffer.concat([pending, chunk]);
      while (pending.length >= 4 && pending.length >= 4 + pending.readInt32BE(0)) {
        pending = pending.subarray(4 + pending.readInt32BE(0));
        answered++;
      }
      if (answered === frames.length) resolve();
      else pump();
    });
    socket.on('error', reject);
    pump();
  });
  const ms = performance.now() - t0;
  const cpu = process.cpuUsage(cpu0);
  lastCpuUsPerRequest = (cpu.user + cpu.system) / frames.length;
  socket.destroy();
  return ms;
}

async function overhead(requests: number, repeats: number): Promise<void> {
  const { broker, port, dir } = await startBroker({ 'auto.create.topics.enable': 'false' });
  const store = broker.services.clientEntities;
  try {
    await broker.services.metadata.createTopic({ name: 'ov', numPartitions: 1, replicationFactor: 1, internal: false });
    await broker.services.replicaManager.syncTopic('ov');
    const batch = encodeBatch({
      records: [{ attributes: 0, timestampDelta: 0, offsetDelta: 0, key: null, value: Buffer.alloc(100, 120), headers: [] }],
      baseTimestamp: 1_700_000_000_000n,
      compression: CompressionType.None,
      producerId: -1n,
      producerEpoch: -1,
      baseSequence: -1,
    });
    const produceFrames = Array.from({ length: requests }, (_, i) =>
      encodeRequest(
        0,
        ProduceRequestCodec,
        9,
        {
          transactionalId: null,
          acks: 1,
          timeoutMs: 5000,
          topicData: [{ name: 'ov', partitionData: [{ index: 0, records: batch }] }],
        },
        i + 1,
        'bench',
      ),
    );
    const fetchFrames = Array.from({ length: requests }, (_, i) =>
      encodeRequest(
        1,
        FetchRequestCodec,
        12,
        {
          replicaId: -1,
          maxWaitMs: 0,
          minBytes: 0,
          maxBytes: 1024,
          topics: [{ topic: 'ov', partitions: [{ partition: 0, fetchOffset: 0n, partitionMaxBytes: 1024 }] }],
        },
        i + 1,
        'bench',
      ),
    );
    const cases: [string, () => Promise<void>][] = [
      [
        'no quotas',
        async () => {
          await store.set('clients/other', {});
          await store.set('clients/bench', {});
        },
      ],
      [
        'quotas on another client id',
        async () => {
          await store.set('clients/bench', {});
          await store.set('clients/other', { producer_byte_rate: '1000', consumer_byte_rate: '1000', request_percentage: '10.0' });
        },
      ],
      [
        'quota on this client id, never reached',
        async () => {
          await store.set('clients/other', {});
          await store.set('clients/bench', { producer_byte_rate: '1000000000000', consumer_byte_rate: '1000000000000', request_percentage: '1000000.0' });
        },
      ],
    ];
    const results = new Map<string, { produce: number[]; fetch: number[]; produceCpu: number[]; fetchCpu: number[] }>();
    await pipelined(port, produceFrames.slice(0, 2000)); // warm-up
    for (let r = 0; r < repeats; r++) {
      for (const [name, setUp] of cases) {
        const supported = await setUp().then(
          () => true,
          () => false,
        );
        if (!supported) continue;
        const res = results.get(name) ?? { produce: [], fetch: [], produceCpu: [], fetchCpu: [] };
        res.produce.push(requests / ((await pipelined(port, produceFrames)) / 1000));
        res.produceCpu.push(lastCpuUsPerRequest);
        res.fetch.push(requests / ((await pipelined(port, fetchFrames)) / 1000));
        res.fetchCpu.push(lastCpuUsPerRequest);
        results.set(name, res);
      }
    }
    console.log(`load average ${loadAverage()}; ${requests} requests per round, ${repeats} rounds, median (range) requests/s`);
    for (const [name, res] of results) {
      const line = (xs: number[]): string => `${median(xs).toFixed(0)} (${Math.min(...xs).toFixed(0)}-${Math.max(...xs).toFixed(0)})`;
      console.log(
        `${name.padEnd(40)} produce ${line(res.produce)} req/s, ${median(res.produceCpu).toFixed(1)} CPU µs/req   fetch ${line(res.fetch)} req/s, ${median(res.fetchCpu).toFixed(1)} CPU µs/req`,
      );
    }
    // The quota checks alone, where this build has them: ns per call.
    const quotas = (broker.services as { quotas?: { produce: { recordAndGetThrottleTimeMs(p: unknown, c: string, v: number): number } } }).quotas;
    if (quotas) {
      const principal = { principalType: 'User', name: 'ANONYMOUS' };
      const perCall = (): number => {
        const n = 2_000_000;
        const t0 = performance.now();
        for (let i = 0; i < n; i++) quotas.produce.recordAndGetThrottleTimeMs(principal, 'bench', 100);
        return ((performance.now() - t0) * 1e6) / n;
      };
      await store.set('clients/bench', {});
      await store.set('clients/other', {});
      const off = perCall();
      await store.set('clients/other', { producer_byte_rate: '1000' });
      const cached = perCall();
      await store.set('clients/bench', { producer_byte_rate: '1000000000000' });
      const recorded = perCall();
      console.log(
        `produce quota check alone: ${off.toFixed(1)} ns/call with no quota, ${cached.toFixed(1)} ns with quotas on others (cached lookup), ${recorded.toFixed(1)} ns recording on a sensor`,
      );
    }
  } finally {
    await broker.stop();
    await rm(dir, { recursive: true, force: true });
  }
}

const [mode, a, b] = process.argv.slice(2);
if (mode === 'throttle') await throttle(Number(a ?? 33));
else if (mode === 'overhead') await overhead(Number(a ?? 20000), Number(b ?? 3));
else {
  console.error('usage: bench/quotas.ts throttle [seconds] | overhead [requests] [repeats]');
  process.exitCode = 1;
}
