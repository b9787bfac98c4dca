/**
 * Generators of hostile payloads (decompression bombs and the like), each built by streaming so
 * that the generator holds only its compressed output, never the inflated content.
 */
import zlib from 'node:zlib';
import { encodeLegacyMessage } from '../../src/protocol/records/legacy-message.js';
import { CompressionType, writeBatchHeader, RECORD_BATCH_OVERHEAD } from '../../src/protocol/records/batch-header.js';
import { writeVarInt, sizeOfVarInt } from '../../src/protocol/records/varint.js';

const CHUNK = 1 << 20;

/** Gzips what `produce(write)` writes, with back-pressure, returning only the compressed bytes. */
async function gzipStream(produce: (write: (b: Buffer) => Promise<void>) => Promise<void>): Promise<Buffer> {
  const gz = zlib.createGzip({ level: 6 });
  const out: Buffer[] = [];
  gz.on('data', (c: Buffer) => out.push(c));
  const ended = new Promise<void>((resolve, reject) => {
    gz.on('end', resolve);
    gz.on('error', reject);
  });
  await produce(
    (b) =>
      new Promise<void>((resolve) => {
        if (gz.write(b)) resolve();
        else gz.once('drain', resolve);
      }),
  );
  gz.end();
  await ended;
  return Buffer.concat(out);
}

/**
 * A legacy (magic 1) message set: one gzip wrapper whose inner set is `count` identical tiny
 * messages (empty key and value, every inner offset 0, as the attacker sent them: a broker must
 * not trust inner offsets anyway). 34 bytes of inflated content each; 100 MB gzips to ~305 KB,
 * 1 GB to ~3 MB.
 */
export async function legacyGzipBombMessageSet(inflatedBytes: number): Promise<{ messageSet: Buffer; innerMessages: number; inflatedBytes: number }> {
  const ts = BigInt(Date.now());
  const template = encodeLegacyMessage(1, 0n, 0, ts, null, Buffer.alloc(0));
  const per = template.length;
  const count = Math.max(1, Math.floor(inflatedBytes / per));
  const perChunk = Math.floor(CHUNK / per);
  const chunk = Buffer.alloc(perChunk * per);
  for (let i = 0; i < perChunk; i++) template.copy(chunk, i * per);
  const compressed = await gzipStream(async (write) => {
    for (let done = 0; done < count; ) {
      const n = Math.min(perChunk, count - done);
      await write(n === perChunk ? chunk : Buffer.from(chunk.subarray(0, n * per)));
      done += n;
    }
  });
  const wrapper = encodeLegacyMessage(1, BigInt(count - 1), CompressionType.Gzip, ts, null, compressed);
  return { messageSet: wrapper, innerMessages: count, inflatedBytes: count * per };
}

/** A v2 batch around already-compressed records. */
function v2Batch(compressedRecords: Buffer, compression: CompressionType, recordsCount: number, timestamp: bigint): Buffer {
  const batch = Buffer.alloc(RECORD_BATCH_OVERHEAD + compressedRecords.length);
  compressedRecords.copy(batch, RECORD_BATCH_OVERHEAD);
  writeBatchHeader(batch, {
    baseOffset: 0n,
    partitionLeaderEpoch: -1,
    attributes: compression,
    lastOffsetDelta: recordsCount - 1,
    baseTimestamp: timestamp,
    maxTimestamp: timestamp,
    producerId: -1n,
    producerEpoch: -1,
    baseSequence: -1,
    recordsCount,
  });
  return batch;
}

/** The bytes of one v2 record up to (not including) its value, for a value of `valueLen` bytes. */
function recordPrefix(valueLen: number): Buffer {
  // attributes, timestampDelta 0, offsetDelta 0, key length -1, value length, [value], headers 0
  const bodyLen = 1 + 1 + 1 + sizeOfVarInt(-1) + sizeOfVarInt(valueLen) + valueLen + 1;
  const head = Buffer.alloc(sizeOfVarInt(bodyLen) + 3 + sizeOfVarInt(-1) + sizeOfVarInt(valueLen));
  let p = writeVarInt(head, 0, bodyLen);
  head[p++] = 0;
  head[p++] = 0;
  head[p++] = 0;
  p = writeVarInt(head, p, -1);
  writeVarInt(head, p, valueLen);
  return head;
}

/** A gzip v2 batch holding one record whose value is `valueBytes` zero bytes (900 MB -> ~0.9 MB). */
export async function gzipHugeValueBatch(valueBytes: number): Promise<Buffer> {
  const zeros = Buffer.alloc(CHUNK);
  const compressed = await gzipStream(async (write) => {
    await write(recordPrefix(valueBytes));
    for (let left = valueBytes; left > 0; left -= CHUNK) await write(left >= CHUNK ? zeros : zeros.subarray(0, left));
    await write(Buffer.from([0])); // no headers
  });
  return v2Batch(compressed, CompressionType.Gzip, 1, BigInt(Date.now()));
}

const ZSTD_MAGIC = 0xfd2fb528;
const ZSTD_MAX_BLOCK = 128 * 1024;

/**
 * A zstd v2 batch whose frame declares (and really holds) `contentBytes` of content: one record
 * with a value of zeros, written as a raw block for the record's head and RLE blocks for the
 * zeros (4 bytes per 128 KB), so 2 GB of content is about 64 KB of frame. Built by hand so that no
 * compressor has to read 2 GB.
 */
export function zstdDeclaredHugeBatch(contentBytes: number): Buffer {
  if (contentBytes > 0xffffffff) throw new RangeError('a 4-byte frame content size holds at most 4 GB');
  const prefix = recordPrefix(0); // placeholder to size the head
  const valueLen = contentBytes - prefix.length - 1; // the value's length varint may be longer, fixed below
  let head = recordPrefix(valueLen);
  head = recordPrefix(contentBytes - head.length - 1);
  const zeroBytes = contentBytes - head.length; // value zeros plus the final 0 = no headers
  const blocks = Math.ceil(zeroBytes / ZSTD_MAX_BLOCK);
  const frame = Buffer.alloc(4 + 1 + 1 + 4 + 3 + head.length + blocks * 4);
  let p = frame.writeUInt32LE(ZSTD_MAGIC, 0);
  frame[p++] = 0x80; // Frame_Content_Size on 4 bytes, not single segment, no checksum, no dictionary
  frame[p++] = (17 - 10) << 3; // window 128 KB
  p = frame.writeUInt32LE(contentBytes, p);
  const blockHeader = (last: boolean, type: number, size: number): void => {
    const v = (last ? 1 : 0) | (type << 1) | (size << 3);
    frame[p++] = v & 0xff;
    frame[p++] = (v >>> 8) & 0xff;
    frame[p++] = (v >>> 16) & 0xff;
  };
  blockHeader(false, 0, head.length);
  p += head.copy(frame, p);
  for (let i = 0, left = zeroBytes; i < blocks; i++) {
    const n = Math.min(ZSTD_MAX_BLOCK, left);
    left -= n;
    blockHeader(i === blocks - 1, 1, n);
    frame[p++] = 0;
  }
  return v2Batch(frame.subarray(0, p), CompressionType.Zstd, 1, BigInt(Date.now()));
}
