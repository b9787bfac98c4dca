/**
 * A broker child process for the read-side bomb tests: it starts a broker on a free port and a
 * temp dir, and writes straight into topic logs (bypassing produce validation, as data written
 * before validation existed): `gz` holds [small batch, 900 MB gzip bomb, small batch], `zs`
 * holds [batch at T-1000, zstd batch declaring 2 GiB at T, batch at T+1000], `lz` as `gz` with
 * a 64 MiB lz4 bomb. Then it prints one JSON line {port} and serves until SIGTERM, when it prints
 * its worst event-loop delay {eventLoopMaxMs}. The parent samples its RSS from /proc.
 *
 * The bombs are written by a first, single-threaded broker (the append needs the Partition on
 * this thread, and no seam call appends without validation), which then stops; the broker that
 * serves the reads restarts on the same directory with FJORD_TEST_IO_THREADS, so the reads are
 * tested on shard workers too.
 */
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { gzipValueBomb, zstdDeclaringBomb } from '../../helpers/read-bombs.js';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startTestBroker, type TestBroker } from '../../helpers/broker.js';
import { CompressionType, encodeBatch } from '../../../src/protocol/records/index.js';

export const T = 1_700_000_000_000;

function lz4ValueBomb(size: number, ts: number): Buffer {
  return encodeBatch({
    records: [{ attributes: 0, timestampDelta: 0, offsetDelta: 0, key: null, value: Buffer.alloc(size), headers: [] }],
    baseTimestamp: BigInt(ts),
    compression: CompressionType.Lz4,
  });
}

function small(values: string[], ts: number): Buffer {
  return encodeBatch({
    records: values.map((v, i) => ({ attributes: 0, timestampDelta: 0, offsetDelta: i, key: null, value: Buffer.from(v), headers: [] })),
    baseTimestamp: BigInt(ts),
    compression: CompressionType.Gzip,
  });
}

async function main(): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'fjord-bombs-'));
  const writer = await startTestBroker({ 'num.io.threads': '1' }, dir);
  await writeBombs(writer);
  await writer.stop();
  const b = await startTestBroker({}, dir);
  // The broker's own view of fairness: the longest the event loop was held while serving.
  const loop = monitorEventLoopDelay({ resolution: 1 });
  loop.enable();
  process.stdout.write(`${JSON.stringify({ port: b.port })}\n`);
  process.on('SIGTERM', () => {
    loop.disable();
    process.stdout.write(`${JSON.stringify({ eventLoopMaxMs: loop.max / 1e6, eventLoopP99Ms: loop.percentile(99) / 1e6 })}\n`);
    void b
      .stop()
      .then(() => rm(dir, { recursive: true, force: true }))
      .then(() => process.exit(0));
  });
}

/** The three topics' batches, appended on a single-threaded broker `b`. */
async function writeBombs(b: TestBroker): Promise<void> {
  // Partition.appendAsLeader: the log append behind produce, without produce's validation.
  const make = async (name: string): Promise<(batch: Buffer) => Promise<unknown>> => {
    await b.broker.services.metadata.createTopic({ name, numPartitions: 1, replicationFactor: 1, configs: {} });
    await b.broker.services.replicaManager.syncTopic(name);
    const p = b.broker.services.replicaManager.getPartition(name, 0)!;
    return (batch) => p.appendAsLeader(batch);
  };
  const gz = await make('gz');
  await gz(small(['before-1', 'before-2'], T));
  await gz(await gzipValueBomb(900_000_000, BigInt(T)));
  await gz(small(['after'], T));
  // lz4: 64 MiB of zeros, where the frame's block headers cannot rule a bomb out, so the capped
  // decoder runs.
  const lz = await make('lz');
  await lz(small(['before-1', 'before-2'], T));
  await lz(lz4ValueBomb(64 << 20, T));
  await lz(small(['after'], T));
  const zs = await make('zs');
  await zs(small(['early'], T - 1000));
  await zs(zstdDeclaringBomb(2048, BigInt(T)));
  await zs(small(['late'], T + 1000));
}

void main().catch((err: unknown) => {
  process.stderr.write(`${String((err as Error)?.stack ?? err)}\n`);
  process.exit(1);
});
