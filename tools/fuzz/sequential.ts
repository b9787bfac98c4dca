/**
 * Finds the batch that breaks a broker, for failures that need the state earlier inputs built:
 *   npx tsx tools/fuzz/sequential.ts [--seed N] [--batches N] [--every N]
 * Replays the fuzzer's batches of a seed one at a time, in order, on a fresh broker, and every
 * `every` batches runs a canary: the probe, then one record produced to the first three and the
 * last partition of every topic. When the canary fails it replays from scratch checking after every batch of the last
 * window, prints the first batch after which the canary fails, and saves its inputs (replay.ts
 * format) in the temp dir.
 */
import { writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ALL_HANDLERS } from '../../src/server/handlers/index.js';
import { encodeBatch } from '../../src/protocol/records/batch.js';
import type { CreateTopicsRequest, MetadataRequest, MetadataResponse, ProduceRequest, ProduceResponse } from '../../src/protocol/messages/index.js';
import { BrokerProcess } from './broker-process.js';
import { batchSeed, envelope } from './fuzz.js';
import { loadCorpus, mutate, Rng } from './mutate.js';
import { probe } from './probe.js';
import { FuzzConnection, framingOf } from './wire.js';

const args = process.argv.slice(2);
const opt = (name: string, def: number): number => {
  const i = args.indexOf(name);
  return i >= 0 ? Number(args[i + 1]) : def;
};
const seed = opt('--seed', 1);
const batches = opt('--batches', 5000);
const every = opt('--every', 25);
const corpus = loadCorpus();
const keys = ALL_HANDLERS.map((h) => h.apiKey);

function batchInputs(batch: number): Buffer[] {
  const rng = new Rng(batchSeed(seed, batch));
  const n = 1 + rng.int(4);
  return Array.from({ length: n }, () => mutate(rng, corpus, keys).bytes);
}

let cid = 1;
async function canary(c: FuzzConnection): Promise<string | null> {
  const p = await probe(c, 'fuzz-steady', 3, 3000);
  if (!p.ok) return `probe: ${p.error}`;
  const md = (await c.request<MetadataRequest>(3, 12, { topics: null }, 3000, cid++)) as MetadataResponse;
  const records = encodeBatch({
    records: [{ attributes: 0, timestampDelta: 0, offsetDelta: 0, key: null, value: Buffer.from('canary'), headers: [] }],
    baseTimestamp: BigInt(Date.now()),
  });
  for (const t of md.topics) {
    if (t.isInternal || t.errorCode !== 0 || !t.name) continue;
    try {
      const res = (await c.request<ProduceRequest>(
        0,
        7,
        {
          acks: 1,
          timeoutMs: 1000,
          topicData: [
            {
              name: t.name,
              partitionData: t.partitions.filter((_p, i) => i < 3 || i === t.partitions.length - 1).map((p) => ({ index: p.partitionIndex, records })),
            },
          ],
        },
        3000,
        cid++,
      )) as ProduceResponse;
      void res;
    } catch (e) {
      return `produce to ${t.name} (${t.partitions.length} partitions): ${e instanceof Error ? e.message : String(e)}`;
    }
  }
  return null;
}

/** Replays batches [0, upTo); checks at `check(batch)`; returns the first failing batch. */
async function run(upTo: number, check: (batch: number) => boolean): Promise<{ batch: number; why: string } | null> {
  const b = await BrokerProcess.start();
  try {
    const c = await FuzzConnection.connect(b.port);
    await c.request<CreateTopicsRequest>(19, 7, { topics: [{ name: 'fuzz-steady', numPartitions: 3, replicationFactor: 1 }] }, 5000, cid++);
    for (let batch = 0; batch < upTo; batch++) {
      const inputs = batchInputs(batch);
      const conn = await FuzzConnection.connect(b.port);
      for (const x of inputs) await conn.write(x);
      await conn.waitClosed(framingOf(Buffer.concat(inputs), 100 * 2 ** 20).inSync ? 50 : 5);
      conn.close();
      if (check(batch)) {
        const why = c.closed ? 'canary connection closed' : await canary(c);
        if (why) return { batch, why };
      }
    }
    c.close();
    return null;
  } finally {
    console.log(`  broker stopped on SIGTERM: ${await b.stop(5000)}`);
  }
}

console.log(`seed ${seed}: replaying up to ${batches} batches, canary every ${every}`);
const coarse = await run(batches, (b) => b % every === every - 1);
if (!coarse) {
  console.log('no failure');
} else {
  console.log(`canary failed after batch ${coarse.batch}: ${coarse.why}; narrowing down`);
  const fine = await run(coarse.batch + 1, (b) => b > coarse.batch - every);
  const found = fine ?? coarse;
  const inputs = batchInputs(found.batch);
  const file = join(tmpdir(), `fjord-fuzz-seed${seed}-batch${found.batch}.bin`);
  writeFileSync(file, Buffer.concat(inputs.map(envelope)));
  console.log(`first failing batch: ${found.batch} (${found.why}); its inputs: ${file}`);
  for (const x of inputs)
    console.log(
      `  key ${x.length >= 6 ? x.readInt16BE(4) : '-'} v${x.length >= 8 ? x.readInt16BE(6) : '-'} ${x.length} B: ${x.subarray(0, 64).toString('hex')}`,
    );
}
