/**
 * LZ4 codec: the standard LZ4 *frame* format (magic 0x184D2204), as Kafka writes for magic 1
 * and 2. lz4-napi (lz4_flex) decodes frames from Java Kafka (64 KB independent blocks, no
 * content checksum) and from kafkajs-lz4 (content checksum) alike.
 *
 * Magic-0 messages are different: Kafka before 0.10 computed the frame-descriptor checksum over
 * the magic number as well, so strict decoders reject those frames. `lz4DecompressLegacy`
 * repairs that byte first when it does not match the correct checksum.
 */
import { compressFrameSync, decompressFrameSync } from 'lz4-napi';
import { xxhash32 } from './xxhash32.js';

const LZ4_FRAME_MAGIC = 0x184d2204;
const FLG_CONTENT_SIZE = 0x08;
const FLG_DICT_ID = 0x01;

export function lz4Compress(input: Buffer): Buffer {
  return compressFrameSync(input);
}

export function lz4Decompress(input: Buffer): Buffer {
  return decompressFrameSync(input);
}

/** Returns the header-checksum byte position and the correct value, or null if not a frame. */
function descriptorChecksum(input: Buffer): { at: number; value: number } | null {
  if (input.length < 7 || input.readUInt32LE(0) !== LZ4_FRAME_MAGIC) return null;
  const flg = input.readUInt8(4);
  let descriptorEnd = 6; // FLG + BD
  if (flg & FLG_CONTENT_SIZE) descriptorEnd += 8;
  if (flg & FLG_DICT_ID) descriptorEnd += 4;
  if (input.length <= descriptorEnd) return null;
  const value = (xxhash32(input.subarray(4, descriptorEnd)) >>> 8) & 0xff;
  return { at: descriptorEnd, value };
}

/**
 * A magic-0 LZ4 frame with its header checksum made correct (a copy when it was Kafka's
 * historically wrong one), so strict decoders, bounded ones included, accept it.
 */
export function lz4RepairMagic0Checksum(input: Buffer): Buffer {
  const hc = descriptorChecksum(input);
  if (hc === null || input[hc.at] === hc.value) return input;
  const fixed = Buffer.from(input);
  fixed[hc.at] = hc.value;
  return fixed;
}

/** Decodes LZ4 from a magic-0 message, tolerating Kafka's historically wrong header checksum. */
export function lz4DecompressLegacy(input: Buffer): Buffer {
  return lz4Decompress(lz4RepairMagic0Checksum(input));
}

/** Rewrites a correct LZ4 frame into Kafka's broken magic-0 form (for tests and old peers). */
export function lz4BreakChecksumForMagic0(frame: Buffer): Buffer {
  const hc = descriptorChecksum(frame);
  if (hc === null) return frame;
  const broken = Buffer.from(frame);
  broken[hc.at] = (xxhash32(frame.subarray(0, hc.at)) >>> 8) & 0xff;
  return broken;
}
