/**
 * Fjord's client library against kafkajs on the same broker, in the same run.
 *
 *   node --import tsx bench/client.ts [records=200000]
 *
 * The broker runs in its own process (src/server/main.ts, temp log dir) so it does not share an
 * event loop with the clients. Per record size (100 B, 1 KiB), each case writes `records`
 * records to a fresh one-partition topic, acks=1, no compression, and reports records/s and
 * MB/s of payload (value bytes) over the wall time from the first send to the last ack:
 * - fjord produce(): `Producer.produce(record, callback)`, at most 4 batches' worth outstanding
 *   (what kafka-producer-perf-test does);
 * - fjord send(): `await`-free `Producer.send()` promises, same bound;
 * - kafkajs send(): `producer.send({ messages })` with 1,000 messages per call, 5 calls in flight.
 * Consumers then read the topic fjord produced from offset 0: Fjord's `Consumer` with `assign()`
 * and `poll()`, kafkajs's `eachBatch` (timed from its first batch, so its group join is not
 * counted).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Kafka, logLevel } from 'kafkajs';
import { Admin, Consumer, DEFAULT_BATCH_SIZE, Producer } from '../src/client/index.js';
import { type FjordChild, startSourceBroker } from './suite/fjord-child.js';

const RECORDS = Number(process.argv[2] ?? 200_000);
const SIZES = [100, 1024];

interface Figure {
  name: string;
  records: number;
  bytes: number;
  ms: number;
}

const line = (f: Figure): string =>
  `${f.name.padEnd(34)} ${Math.round((f.records / f.ms) * 1000)
    .toLocaleString('en-US')
    .padStart(10)} rec/s ${((f.bytes / 1048576 / f.ms) * 1000).toFixed(1).padStart(7)} MB/s`;

/** This tree's broker, from source under tsx (no build needed), on a free port and `dir`. */
function startBroker(dir: string): Promise<FjordChild> {
  return startSourceBroker(dir, { 'group.initial.rebalance.delay.ms': '0' });
}

async function fjordProduce(bootstrap: string, topic: string, value: Buffer, usePromises: boolean): Promise<Figure> {
  const producer = new Producer({ bootstrapServers: bootstrap, acks: 1 });
  await producer.connect();
  const limit = 4 * DEFAULT_BATCH_SIZE;
  let outstanding = 0;
  let failed = 0;
  let wake: (() => void) | null = null;
  const done = (err: Error | null): void => {
    if (err) failed++;
    outstanding -= value.length;
    if (wake !== null && outstanding <= limit / 2) {
      const w = wake;
      wake = null;
      w();
    }
  };
  const started = performance.now();
  for (let i = 0; i < RECORDS; i++) {
    outstanding += value.length;
    if (usePromises) producer.send({ topic, value }).then(() => done(null), done);
    else producer.produce({ topic, value }, done);
    if (outstanding >= limit) await new Promise<void>((r) => (wake = r));
  }
  await producer.flush();
  const ms = performance.now() - started;
  await producer.close();
  if (failed > 0) throw new Error(`${failed} records failed`);
  return { name: `fjord ${usePromises ? 'send()' : 'produce()'} ${value.length} B`, records: RECORDS, bytes: RECORDS * value.length, ms };
}

async function kafkajsProduce(kafka: Kafka, topic: string, value: Buffer): Promise<Figure> {
  const producer = kafka.producer({ allowAutoTopicCreation: false });
  await producer.connect();
  const perCall = 1000;
  const messages = Array.from({ length: perCall }, () => ({ value }));
  const started = performance.now();
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < RECORDS) {
      const n = Math.min(perCall, RECORDS - next);
      next += n;
      await producer.send({ topic, acks: 1, messages: n === perCall ? messages : messages.slice(0, n) });
    }
  };
  await Promise.all(Array.from({ length: 5 }, worker));
  const ms = performance.now() - started;
  await producer.disconnect();
  return { name: `kafkajs send() ${value.length} B`, records: RECORDS, bytes: RECORDS * value.length, ms };
}

async function fjordConsume(bootstrap: string, topic: string, size: number): Promise<Figure> {
  const consumer = new Consumer({ bootstrapServers: bootstrap });
  consumer.assign([{ topic, partition: 0 }]);
  consumer.seek({ topic, partition: 0 }, 0n);
  let count = 0;
  let bytes = 0;
  const started = performance.now();
  while (count < RECORDS) {
    for (const r of await consumer.poll(5000)) {
      count++;
      bytes += r.value?.length ?? 0;
    }
  }
  const ms = performance.now() - started;
  await consumer.close();
  return { name: `fjord poll() ${size} B`, records: count, bytes, ms };
}

async function kafkajsConsume(kafka: Kafka, topic: string, size: number): Promise<Figure> {
  const consumer = kafka.consumer({ groupId: `bench-${topic}`, maxBytesPerPartition: 1048576 });
  await consumer.connect();
  await consumer.subscribe({ topic, fromBeginning: true });
  let count = 0;
  let bytes = 0;
  let started = 0;
  const finished = new Promise<number>((resolve) => {
    void consumer.run({
      eachBatch: async ({ batch }) => {
        if (started === 0) started = performance.now();
        for (const m of batch.messages) {
          count++;
          bytes += m.value?.length ?? 0;
        }
        if (count >= RECORDS) resolve(performance.now());
      },
    });
  });
  const ended = await finished;
  await consumer.disconnect();
  return { name: `kafkajs eachBatch ${size} B`, records: count, bytes, ms: ended - started };
}

async function main(): Promise<void> {
  const dir = await mkdtemp(path.join(tmpdir(), 'fjord-client-bench-'));
  const broker = await startBroker(dir);
  const bootstrap = broker.bootstrap;
  const kafka = new Kafka({ brokers: [bootstrap], clientId: 'bench', logLevel: logLevel.NOTHING });
  const admin = new Admin({ bootstrapServers: bootstrap });
  const figures: Figure[] = [];
  try {
    for (const size of SIZES) {
      const value = Buffer.alloc(size, 'x');
      const topics = { fjord: `fjord-${size}`, promises: `promises-${size}`, kafkajs: `kafkajs-${size}` };
      await admin.createTopics(Object.values(topics).map((name) => ({ name, numPartitions: 1, replicationFactor: 1 })));
      for (const f of [
        await fjordProduce(bootstrap, topics.fjord, value, false),
        await fjordProduce(bootstrap, topics.promises, value, true),
        await kafkajsProduce(kafka, topics.kafkajs, value),
        await fjordConsume(bootstrap, topics.fjord, size),
        await kafkajsConsume(kafka, topics.fjord, size),
      ]) {
        console.log(line(f));
        figures.push(f);
      }
    }
  } finally {
    await admin.close();
    await broker.stop();
    await rm(dir, { recursive: true, force: true });
  }
}

await main();
