/**
 * Micro-benchmark: encode / decode / validate throughput of ~16 KB record batches per codec.
 * Run: node --import tsx bench/records-codec.ts [seconds-per-case]
 * Throughput is in MB of *uncompressed* records section per second.
 */
import { randomBytes } from 'node:crypto';
import { CompressionType, type KafkaRecord, decodeBatch, encodeBatch, encodeRecords, validateBatchHeader } from '../src/protocol/records/index.js';

const secondsPerCase = Number(process.argv[2] ?? '0.5');
const TARGET = 16 * 1024;

/** ~16 KB of 100-byte values: half random, half repeated text, so codecs have work to do. */
function makeRecords(): KafkaRecord[] {
  const records: KafkaRecord[] = [];
  let size = 0;
  for (let i = 0; size < TARGET; i++) {
    const value = Buffer.concat([randomBytes(50), Buffer.from('the quick brown fox jumps over the lazy dog 0123456'.slice(0, 50))]);
    const r: KafkaRecord = { attributes: 0, timestampDelta: i, offsetDelta: i, key: Buffer.from(`key-${i}`), value, headers: [] };
    records.push(r);
    size = encodeRecords(records).length;
  }
  return records;
}

function measure(run: () => void): number {
  const deadline = process.hrtime.bigint() + BigInt(Math.round(secondsPerCase * 1e9));
  let iterations = 0;
  const start = process.hrtime.bigint();
  while (process.hrtime.bigint() < deadline) {
    for (let i = 0; i < 20; i++) run();
    iterations += 20;
  }
  const seconds = Number(process.hrtime.bigint() - start) / 1e9;
  return iterations / seconds;
}

const records = makeRecords();
const rawBytes = encodeRecords(records).length;
const mb = (perSecond: number): string => ((perSecond * rawBytes) / 1e6).toFixed(1).padStart(8);

console.log(`batch: ${records.length} records, ${rawBytes} bytes uncompressed; ${secondsPerCase}s per case`);
console.log('codec      size    encode MB/s  decode MB/s  validate MB/s  validate+walk MB/s');
for (const compression of [CompressionType.None, CompressionType.Gzip, CompressionType.Snappy, CompressionType.Lz4, CompressionType.Zstd]) {
  const batch = encodeBatch({ records, compression, baseTimestamp: BigInt(Date.now()) });
  const encode = measure(() => encodeBatch({ records, compression, baseTimestamp: 1n }));
  const decode = measure(() => decodeBatch(batch, 0, { maxBytes: 1 << 30 }));
  const validate = measure(() => validateBatchHeader(batch));
  const deep = measure(() => validateBatchHeader(batch, 0, { walkCompressed: true }));
  console.log(
    `${CompressionType[compression].padEnd(8)} ${String(batch.length).padStart(6)}  ${mb(encode)}     ${mb(decode)}     ${mb(validate)}       ${mb(deep)}`,
  );
}
