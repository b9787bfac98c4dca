/**
 * A user topic with cleanup.policy=compact is compacted by the broker's own cleaner (its timer),
 * wherever the partition lives: on the main thread at num.io.threads=1, on a shard worker at N > 1
 * (FJORD_TEST_IO_THREADS=3). What the cleaner reached goes to the directory's
 * cleaner-offset-checkpoint (at N > 1 through the main thread, shared-dir-files.ts), and a restart
 * on the same directory reads it back.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { rm } from 'node:fs/promises';
import { encodeBatch, iterateBatches, lastOffsetAt } from '../../src/protocol/records/index.js';
import { readOffsetCheckpoint, CLEANER_OFFSET_CHECKPOINT } from '../../src/storage/checkpoint/checkpoint-files.js';
import { startTestBroker, type TestBroker } from '../helpers/broker.js';
import { RawClient } from '../helpers/raw-client.js';
import { createTopic, fetchOne, produce, valuesOf } from './handlers/data-plane-helpers.js';

const TOPIC = 'compacted-keys';
const KEYS = 5;
const ROUNDS = 10;
const FILLERS = 3;
/** Offsets one phase writes: ROUNDS batches of KEYS records, then FILLERS; each batch its own segment (segment.bytes). */
const PHASE_END = KEYS * ROUNDS + FILLERS;
const PROPS = { 'log.cleaner.backoff.ms': '100', 'log.flush.offset.checkpoint.interval.ms': '100' };

/** The first dirty offset the directory's cleaner-offset-checkpoint holds for the partition, once it reaches `atLeast`. */
async function cleanedTo(b: TestBroker, atLeast: number): Promise<number> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const offset = (await readOffsetCheckpoint(join(b.dir, CLEANER_OFFSET_CHECKPOINT))).get(`${TOPIC}-0`) ?? -1;
    if (offset >= atLeast) return offset;
    assert.ok(Date.now() < deadline, `the cleaner-offset-checkpoint did not reach ${atLeast} in 30 s (it says ${offset})`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** One batch of records keyed `key` → `value`, values padded so each batch fills a segment. */
function keyed(entries: readonly [key: string, value: string][]): Buffer {
  return encodeBatch({
    records: entries.map(([key, value], i) => ({
      attributes: 0,
      timestampDelta: i,
      offsetDelta: i,
      key: Buffer.from(key),
      value: Buffer.from(value.padEnd(80, '.')),
      headers: [],
    })),
    baseTimestamp: BigInt(Date.now()),
  });
}

/** ROUNDS rounds writing keys k0..k4 again, then filler records with keys of their own that roll the last round out of the active segment (never cleaned). */
async function writeRounds(c: RawClient, phase: number): Promise<void> {
  const send = async (batch: Buffer) => assert.equal((await produce(c, 9, TOPIC, 0, batch)).responses[0]!.partitionResponses[0]!.errorCode, 0);
  for (let round = 0; round < ROUNDS; round++) await send(keyed(Array.from({ length: KEYS }, (_, k) => [`k${k}`, `p${phase}r${round}-k${k}`])));
  for (let i = 0; i < FILLERS; i++) await send(keyed([[`filler-${phase}-${i}`, `filler-${phase}-${i}`.padEnd(500, '.')]]));
}

/** Every value of the partition, padding removed (a fetch reads one segment: fetched again from the next offset to the end). */
async function valuesNow(c: RawClient): Promise<string[]> {
  const out: string[] = [];
  for (let offset = 0; ; ) {
    const p = (await fetchOne(c, 12, TOPIC, 0, offset)).responses[0]!.partitions[0]!;
    assert.equal(p.errorCode, 0);
    if (!p.records || p.records.length === 0) return out;
    out.push(...valuesOf(p.records).map((v) => v.replace(/\.+$/, '')));
    for (const e of iterateBatches(p.records)) offset = lastOffsetAt(p.records, e.start) + 1;
  }
}

test('the cleaner compacts a user topic on whichever thread hosts it; its offset is checkpointed, and it goes on from there after a restart', async () => {
  let b = await startTestBroker(PROPS);
  const dir = b.dir;
  let c: RawClient | undefined;
  try {
    await createTopic(b, TOPIC, 1, { 'cleanup.policy': 'compact', 'segment.bytes': '600', 'min.cleanable.dirty.ratio': '0.01' });
    c = await RawClient.connect(b.port);
    await writeRounds(c, 0);
    await cleanedTo(b, PHASE_END - 1); // the last filler is the active segment
    const latest = (phase: number) => Array.from({ length: KEYS }, (_, k) => `p${phase}r${ROUNDS - 1}-k${k}`);
    const fillers = (phase: number) => Array.from({ length: FILLERS }, (_, i) => `filler-${phase}-${i}`);
    assert.deepEqual(await valuesNow(c), [...latest(0), ...fillers(0)], 'each key at its latest value only');
    c.close();
    await b.stop({ keepDir: true });

    b = await startTestBroker(PROPS, dir);
    c = await RawClient.connect(b.port);
    await writeRounds(c, 1);
    await cleanedTo(b, 2 * PHASE_END - 1);
    assert.deepEqual(await valuesNow(c), [...fillers(0), ...latest(1), ...fillers(1)], 'the keys of the first phase superseded by the second');
  } finally {
    c?.close();
    await b.stop({ keepDir: true });
    await rm(dir, { recursive: true, force: true });
  }
});
