/**
 * XXH32, needed only to repair the LZ4 frame header checksum that Kafka wrote wrongly for
 * magic-0 messages (it hashed the frame magic number too). Written from the public XXH32
 * specification.
 */
const P1 = 0x9e3779b1;
const P2 = 0x85ebca77;
const P3 = 0xc2b2ae3d;
const P4 = 0x27d4eb2f;
const P5 = 0x165667b1;

function rotl(x: number, r: number): number {
  return (x << r) | (x >>> (32 - r));
}

function round(acc: number, lane: number): number {
  acc = (acc + Math.imul(lane, P2)) | 0;
  return Math.imul(rotl(acc, 13), P1);
}

export function xxhash32(input: Buffer, seed = 0): number {
  const len = input.length;
  let pos = 0;
  let h: number;
  if (len >= 16) {
    let v1 = (seed + P1 + P2) | 0;
    let v2 = (seed + P2) | 0;
    let v3 = seed | 0;
    let v4 = (seed - P1) | 0;
    while (pos + 16 <= len) {
      v1 = round(v1, input.readUInt32LE(pos));
      v2 = round(v2, input.readUInt32LE(pos + 4));
      v3 = round(v3, input.readUInt32LE(pos + 8));
      v4 = round(v4, input.readUInt32LE(pos + 12));
      pos += 16;
    }
    h = (rotl(v1, 1) + rotl(v2, 7) + rotl(v3, 12) + rotl(v4, 18)) | 0;
  } else {
    h = (seed + P5) | 0;
  }
  h = (h + len) | 0;
  while (pos + 4 <= len) {
    h = (h + Math.imul(input.readUInt32LE(pos), P3)) | 0;
    h = Math.imul(rotl(h, 17), P4);
    pos += 4;
  }
  while (pos < len) {
    h = (h + Math.imul(input.readUInt8(pos), P5)) | 0;
    h = Math.imul(rotl(h, 11), P1);
    pos++;
  }
  h ^= h >>> 15;
  h = Math.imul(h, P2);
  h ^= h >>> 13;
  h = Math.imul(h, P3);
  h ^= h >>> 16;
  return h >>> 0;
}
