/**
 * Micro-benchmark of produce-path validation alone, before vs after record-level validation,
 * in the same process:
 *   before: batch header + CRC + the plain length walk (what prepareProducedRecords did, which
 *           never looked inside compressed batches);
 *   after:  prepareProducedRecords as the broker calls it (header, CRC, the walk with offset,
 *           timestamp and key checks, capped inflation of compressed batches, max-timestamp fix).
 * Run: node --import tsx bench/produce-validation.ts [seconds-per-round=0.2] (5 alternating rounds, best kept)
 * MB/s are of uncompressed records.
 */
import { randomBytes } from 'node:crypto';
import { CompressionType, encodeBatch, validateBatches, type KafkaRecord } from '../src/protocol/records/index.js';
import { prepareProducedRecords, type ProduceLimits } from '../src/storage/append/produce-validation.js';

const secondsPerCase = Number(process.argv[2] ?? '0.2');
const LIMITS: ProduceLimits = { maxMessageBytes: 1048588, maxUncompressedBytes: 32 * 1048588, compacted: false, topicPartition: 'bench-0' };

function records(count: number, valueSize: number): KafkaRecord[] {
  const text = Buffer.from('the quick brown fox jumps over the lazy dog '.repeat(Math.ceil(valueSize / 44))).subarray(0, valueSize / 2);
  return Array.from({ length: count }, (_, i) => ({
    attributes: 0,
    timestampDelta: i,
    offsetDelta: i,
    key: Buffer.from(`key-${i}`),
    value: Buffer.concat([randomBytes(valueSize / 2), text]),
    headers: [],
  }));
}

async function measure(run: () => unknown): Promise<number> {
  const deadline = performance.now() + secondsPerCase * 1000;
  let n = 0;
  const start = performance.now();
  while (performance.now() < deadline) {
    for (let i = 0; i < 10; i++) await run();
    n += 10;
  }
  return n / ((performance.now() - start) / 1000);
}

const shapes: [string, KafkaRecord[]][] = [
  ['1000 x 1 KiB (librdkafka-like)', records(1000, 1024)],
  ['8000 x 100 B', records(8000, 100)],
];
console.log(`5 alternating rounds of ${secondsPerCase}s, best kept; MB/s of uncompressed records (before = header + CRC + length walk)`);
for (const [shape, recs] of shapes) {
  const raw = encodeBatch({ records: recs, compression: CompressionType.None, baseTimestamp: 1_700_000_000_000n }).length - 61;
  for (const compression of [CompressionType.None, CompressionType.Lz4, CompressionType.Zstd]) {
    const batch = encodeBatch({ records: recs, compression, baseTimestamp: 1_700_000_000_000n });
    // Alternate the two, five rounds each, and keep each one's best: the machine is shared.
    let before = 0;
    let after = 0;
    for (let round = 0; round < 5; round++) {
      before = Math.max(before, await measure(() => validateBatches(batch, { fromClient: true })));
      after = Math.max(after, await measure(() => prepareProducedRecords(batch, { fromClient: true, produceVersion: 9, limits: LIMITS })));
    }
    const mb = (perSecond: number): string => ((perSecond * raw) / 1e6).toFixed(0).padStart(6);
    console.log(
      `${shape.padEnd(32)} ${CompressionType[compression].padEnd(5)} before ${mb(before)} MB/s  after ${mb(after)} MB/s  (${((after / before) * 100).toFixed(0)}%)`,
    );
  }
}
