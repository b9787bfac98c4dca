/**
 * Snappy codec. Java clients (and the Kafka broker) wrap snappy in xerial-snappy's stream
 * framing:
 *
 *   header: 0x82 'S' 'N' 'A' 'P' 'P' 'Y' 0x00, int32 version (1), int32 compatible version (1)
 *   then blocks: [int32 BE compressed length][raw snappy block]
 *
 * Other clients (kafkajs, librdkafka optionally) send one raw snappy block. Decompression
 * accepts both; compression writes the xerial framing like Kafka does.
 */
import { compressSync, uncompressSync } from 'snappy';

export const XERIAL_MAGIC = Buffer.from([0x82, 0x53, 0x4e, 0x41, 0x50, 0x50, 0x59, 0x00]);
const XERIAL_HEADER_SIZE = 16;
/** Kafka's SnappyOutputStream default block size. */
const XERIAL_BLOCK_SIZE = 32 * 1024;

export function isXerialFramed(input: Buffer): boolean {
  return input.length >= XERIAL_HEADER_SIZE && input.subarray(0, XERIAL_MAGIC.length).equals(XERIAL_MAGIC);
}

function rawUncompress(block: Buffer): Buffer {
  const out = uncompressSync(block, { asBuffer: true });
  // With asBuffer the binding always returns a Buffer; the union type is the library's.
  return typeof out === 'string' ? Buffer.from(out) : out;
}

export function snappyCompress(input: Buffer): Buffer {
  const parts: Buffer[] = [];
  const header = Buffer.alloc(XERIAL_HEADER_SIZE);
  XERIAL_MAGIC.copy(header, 0);
  header.writeInt32BE(1, 8);
  header.writeInt32BE(1, 12);
  parts.push(header);
  for (let pos = 0; pos < input.length; pos += XERIAL_BLOCK_SIZE) {
    const block = compressSync(input.subarray(pos, pos + XERIAL_BLOCK_SIZE));
    const len = Buffer.allocUnsafe(4);
    len.writeInt32BE(block.length, 0);
    parts.push(len, block);
  }
  return Buffer.concat(parts);
}

/** The raw snappy blocks of a payload: one block, or xerial's [int32 length][block] sequence. */
export function snappyBlocks(input: Buffer): Buffer[] {
  if (!isXerialFramed(input)) return [input];
  const blocks: Buffer[] = [];
  let pos = XERIAL_HEADER_SIZE;
  while (pos < input.length) {
    if (pos + 4 > input.length) throw new Error('xerial snappy: truncated block length');
    const len = input.readInt32BE(pos);
    pos += 4;
    if (len < 0 || pos + len > input.length) throw new Error(`xerial snappy: invalid block length ${len}`);
    blocks.push(input.subarray(pos, pos + len));
    pos += len;
  }
  return blocks;
}

export function snappyDecompress(input: Buffer): Buffer {
  const blocks = snappyBlocks(input).map(rawUncompress);
  const only = blocks.length === 1 ? blocks[0] : undefined;
  return only ?? Buffer.concat(blocks);
}
