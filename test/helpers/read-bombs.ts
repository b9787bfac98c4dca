/**
 * Compression bombs as v2 record batches, built by streaming so the test process never holds
 * the inflated bytes: a gzip batch of one record with a huge zero value (900 MB -> ~0.9 MB),
 * and a zstd batch of many 1 MiB zero records whose frame declares the whole content size
 * (2 GiB -> ~64 KB). The batches are well formed (CRC, counts), so only their inflated size is
 * hostile; tests write them into a log directly, as data written before validation existed.
 */
import { createGzip, gzipSync } from 'node:zlib';
import zstdBinding from 'zstd-napi/binding.js';
import { CompressionType, RECORD_BATCH_OVERHEAD, writeBatchHeader } from '../../src/protocol/records/batch-header.js';
import { sizeOfVarInt, writeVarInt } from '../../src/protocol/records/varint.js';

const ZERO_CHUNK = Buffer.alloc(1 << 20);

/** The bytes of one record before its value: length, attributes, deltas, null key, value length. */
function recordPrefix(offsetDelta: number, valueSize: number): Buffer {
  // body: attributes(1) tsDelta(varint 0: 1) offsetDelta key(-1: 1) valueLen value headers(0: 1)
  const body = 1 + 1 + sizeOfVarInt(offsetDelta) + 1 + sizeOfVarInt(valueSize) + valueSize + 1;
  const out = Buffer.alloc(sizeOfVarInt(body) + 1 + 1 + sizeOfVarInt(offsetDelta) + 1 + sizeOfVarInt(valueSize));
  let pos = writeVarInt(out, 0, body);
  out[pos++] = 0; // attributes
  pos = writeVarInt(out, pos, 0); // timestampDelta
  pos = writeVarInt(out, pos, offsetDelta);
  pos = writeVarInt(out, pos, -1); // null key
  writeVarInt(out, pos, valueSize);
  return out;
}

const HEADERS_NONE = Buffer.from([0]);

function batchAround(section: Buffer, codec: CompressionType, count: number, timestamp: bigint): Buffer {
  const buf = Buffer.alloc(RECORD_BATCH_OVERHEAD + section.length);
  section.copy(buf, RECORD_BATCH_OVERHEAD);
  writeBatchHeader(buf, {
    baseOffset: 0n,
    partitionLeaderEpoch: 0,
    attributes: codec,
    lastOffsetDelta: count - 1,
    baseTimestamp: timestamp,
    maxTimestamp: timestamp,
    producerId: -1n,
    producerEpoch: -1,
    baseSequence: -1,
    recordsCount: count,
  });
  return buf;
}

/** A gzip batch holding one record whose value is `valueBytes` zero bytes. */
export async function gzipValueBomb(valueBytes: number, timestamp = 1_700_000_000_000n): Promise<Buffer> {
  const gz = createGzip({ level: 9 });
  const parts: Buffer[] = [];
  gz.on('data', (c: Buffer) => parts.push(c));
  const done = new Promise<void>((resolve, reject) => {
    gz.on('end', resolve);
    gz.on('error', reject);
  });
  const write = (b: Buffer): Promise<void> => new Promise((resolve) => (gz.write(b) ? resolve() : gz.once('drain', resolve)));
  await write(recordPrefix(0, valueBytes));
  for (let left = valueBytes; left > 0; left -= ZERO_CHUNK.length) await write(left >= ZERO_CHUNK.length ? ZERO_CHUNK : ZERO_CHUNK.subarray(0, left));
  await write(HEADERS_NONE);
  gz.end();
  await done;
  return batchAround(Buffer.concat(parts), CompressionType.Gzip, 1, timestamp);
}

/**
 * A zstd batch of `records` records of 1 MiB zero values; the frame header declares the total
 * content size (`records` MiB and a few bytes).
 */
export function zstdDeclaringBomb(records: number, timestamp = 1_700_000_000_000n): Buffer {
  const cctx = new zstdBinding.CCtx();
  cctx.setParameter(zstdBinding.CParameter.compressionLevel, 3);
  const parts: Buffer[] = [];
  let total = 0;
  for (let i = 0; i < records; i++) total += recordPrefix(i, ZERO_CHUNK.length).length + ZERO_CHUNK.length + 1;
  cctx.setPledgedSrcSize(total);
  const out = Buffer.alloc(1 << 20);
  const feed = (input: Buffer, end: boolean): void => {
    let rest = input;
    for (;;) {
      const [left, produced, consumed] = cctx.compressStream2(out, rest, end ? zstdBinding.EndDirective.end : zstdBinding.EndDirective.continue);
      if (produced > 0) parts.push(Buffer.from(out.subarray(0, produced)));
      rest = rest.subarray(consumed);
      if (rest.length === 0 && (!end || left === 0)) return;
    }
  };
  for (let i = 0; i < records; i++) {
    feed(recordPrefix(i, ZERO_CHUNK.length), false);
    feed(ZERO_CHUNK, false);
    feed(HEADERS_NONE, i === records - 1);
  }
  return batchAround(Buffer.concat(parts), CompressionType.Zstd, records, timestamp);
}

/**
 * A gzip batch of `count` minimal records (null key, null value, no headers: 8-10 bytes each),
 * built as bytes: a batch that is small on disk and within the read cap once inflated, but
 * would become millions of objects if decoded into an array.
 */
export function tinyRecordsBatch(count: number, timestamp = 1_700_000_000_000n): Buffer {
  const section = Buffer.alloc(count * 10);
  let pos = 0;
  for (let i = 0; i < count; i++) {
    const body = 1 + 1 + sizeOfVarInt(i) + 1 + 1 + 1;
    pos = writeVarInt(section, pos, body);
    section[pos++] = 0; // attributes
    section[pos++] = 0; // timestampDelta
    pos = writeVarInt(section, pos, i);
    pos = writeVarInt(section, pos, -1); // key
    pos = writeVarInt(section, pos, -1); // value
    section[pos++] = 0; // headers
  }
  return batchAround(gzipSync(section.subarray(0, pos)), CompressionType.Gzip, count, timestamp);
}
