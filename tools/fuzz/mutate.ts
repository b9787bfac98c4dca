/**
 * The corpus and the mutations applied to it. Every input is the bytes written to one connection
 * for one step: usually one frame (size prefix + body), sometimes a lie about the size, a
 * truncated frame, or random bytes.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

export const CORPUS_DIR = resolve(import.meta.dirname, '../../test/fixtures/fuzz-corpus');

export interface CorpusEntry {
  source: string;
  apiKey: number;
  version: number;
  /** The frame with its 4-byte size prefix. */
  frame: Buffer;
}

/** Splits a corpus file: size-prefixed frames back to back, as they went over the wire. */
export function parseCorpusFile(source: string, bytes: Buffer): CorpusEntry[] {
  const out: CorpusEntry[] = [];
  let pos = 0;
  while (pos + 4 <= bytes.length) {
    const size = bytes.readInt32BE(pos);
    if (size < 8 || pos + 4 + size > bytes.length) throw new Error(`${source}: bad frame size ${size} at ${pos}`);
    const frame = bytes.subarray(pos, pos + 4 + size);
    out.push({ source, apiKey: frame.readInt16BE(4), version: frame.readInt16BE(6), frame });
    pos += 4 + size;
  }
  if (pos !== bytes.length) throw new Error(`${source}: ${bytes.length - pos} trailing bytes`);
  return out;
}

/** Writes frames in the corpus file format. */
export function formatCorpusFile(frames: readonly Buffer[]): Buffer {
  return Buffer.concat(frames as Buffer[]);
}

export function loadCorpus(dir = CORPUS_DIR): CorpusEntry[] {
  const out: CorpusEntry[] = [];
  for (const f of readdirSync(dir).sort()) {
    if (f.endsWith('.bin')) out.push(...parseCorpusFile(f.slice(0, -4), readFileSync(join(dir, f))));
  }
  return out;
}

/** A small seeded PRNG (mulberry32): runs are reproducible from --seed. */
export class Rng {
  private s: number;
  constructor(seed: number) {
    this.s = seed >>> 0;
  }
  next(): number {
    let t = (this.s = (this.s + 0x6d2b79f5) >>> 0);
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }
  int(n: number): number {
    return Math.floor(this.next() * n);
  }
  pick<T>(a: readonly T[]): T {
    return a[this.int(a.length)]!;
  }
  bytes(n: number): Buffer {
    const b = Buffer.allocUnsafe(n);
    for (let i = 0; i < n; i++) b[i] = this.int(256);
    return b;
  }
}

// AFL's "interesting values", as int8/16/32/64 in the wire's big-endian order.
const INTERESTING_32 = [0, 1, -1, 0x7f, 0x80, 0xff, 0x100, 0x7fff, -0x8000, 0xffff, 0x10000, 0x7fffffff, -0x80000000, 100_000_000, 25_000];
const INTERESTING_64 = [0n, -1n, 1n, 0x7fffffffffffffffn, -0x8000000000000000n, 0xffffffffn, 1n << 53n];

export type MutationKind =
  | 'bitflip'
  | 'byte'
  | 'insert'
  | 'delete'
  | 'interesting'
  | 'varint'
  | 'size-lie'
  | 'truncate'
  | 'splice'
  | 'duplicate'
  | 'header'
  | 'random'
  | 'valid'
  | 'multi';

export const MUTATION_KINDS: readonly MutationKind[] = [
  'bitflip',
  'byte',
  'insert',
  'delete',
  'interesting',
  'varint',
  'size-lie',
  'truncate',
  'splice',
  'duplicate',
  'header',
  'random',
  'valid',
  'multi',
];

/** Re-writes the size prefix to the body's real length (most mutations keep the frame well framed). */
function reframe(body: Buffer): Buffer {
  const out = Buffer.allocUnsafe(4 + body.length);
  out.writeInt32BE(body.length, 0);
  body.copy(out, 4);
  return out;
}

/** A position in the body past the 8 bytes of key, version and correlation id (when there is one). */
function bodyPos(rng: Rng, body: Buffer): number {
  if (body.length <= 8) return rng.int(Math.max(1, body.length));
  return 8 + rng.int(body.length - 8);
}

export interface Mutation {
  kind: MutationKind;
  bytes: Buffer;
}

/** One input: a mutation of a corpus frame, or a frame made up from nothing. */
export function mutate(rng: Rng, corpus: readonly CorpusEntry[], servedKeys: readonly number[]): Mutation {
  const kind = rng.pick(MUTATION_KINDS);
  return { kind, bytes: apply(kind, rng, corpus, servedKeys) };
}

function apply(kind: MutationKind, rng: Rng, corpus: readonly CorpusEntry[], servedKeys: readonly number[]): Buffer {
  const base = rng.pick(corpus);
  const body = Buffer.from(base.frame.subarray(4));
  switch (kind) {
    case 'bitflip': {
      for (let i = 1 + rng.int(4); i > 0; i--) {
        const p = bodyPos(rng, body);
        body[p] = body[p]! ^ (1 << rng.int(8));
      }
      return reframe(body);
    }
    case 'byte': {
      for (let i = 1 + rng.int(4); i > 0; i--) body[bodyPos(rng, body)] = rng.int(256);
      return reframe(body);
    }
    case 'insert': {
      const p = bodyPos(rng, body);
      return reframe(Buffer.concat([body.subarray(0, p), rng.bytes(1 + rng.int(16)), body.subarray(p)]));
    }
    case 'delete': {
      const p = bodyPos(rng, body);
      return reframe(Buffer.concat([body.subarray(0, p), body.subarray(Math.min(body.length, p + 1 + rng.int(16)))]));
    }
    case 'interesting': {
      // a boundary value written over what is likely a length, count or int field
      for (let i = 1 + rng.int(2); i > 0; i--) {
        const width = rng.pick([1, 2, 4, 4, 4, 8]);
        const p = bodyPos(rng, body);
        if (p + width > body.length) continue;
        if (width === 8) body.writeBigInt64BE(rng.pick(INTERESTING_64), p);
        else {
          const v = rng.pick(INTERESTING_32);
          if (width === 4) body.writeInt32BE(v | 0, p);
          else if (width === 2) body.writeUInt16BE(v & 0xffff, p);
          else body[p] = v & 0xff;
        }
      }
      return reframe(body);
    }
    case 'varint': {
      // flexible versions count with unsigned varints: a huge or truncated one
      const p = bodyPos(rng, body);
      const v = rng.pick([
        Buffer.from([0xff, 0xff, 0xff, 0xff, 0x0f]),
        Buffer.from([0xff, 0xff, 0xff, 0xff, 0xff, 0xff]),
        Buffer.from([0x80]),
        Buffer.from([0x00]),
        Buffer.from([0xe8, 0x07]),
      ]);
      return reframe(Buffer.concat([body.subarray(0, p), v, body.subarray(Math.min(body.length, p + v.length))]));
    }
    case 'size-lie': {
      const out = Buffer.from(base.frame);
      const real = body.length;
      out.writeInt32BE(
        rng.pick([real + 1, real + 100, Math.max(0, real - 1), 0, 1, 7, -1, -0x80000000, 0x7fffffff, 100 * 1024 * 1024 + 1, 100 * 1024 * 1024]),
        0,
      );
      return out;
    }
    case 'truncate': {
      const cut = rng.int(body.length);
      // mostly a consistent frame whose body stops early; sometimes only a partial frame
      return rng.next() < 0.8 ? reframe(body.subarray(0, cut)) : base.frame.subarray(0, 4 + cut);
    }
    case 'splice': {
      const other = rng.pick(corpus).frame.subarray(4);
      const a = bodyPos(rng, body);
      const b = other.length > 8 ? 8 + rng.int(other.length - 8) : 0;
      return reframe(Buffer.concat([body.subarray(0, a), other.subarray(b)]));
    }
    case 'duplicate': {
      const a = bodyPos(rng, body);
      const len = 1 + rng.int(Math.min(256, body.length - a));
      const chunk = body.subarray(a, a + len);
      return reframe(Buffer.concat([body.subarray(0, a), chunk, chunk, body.subarray(a)]));
    }
    case 'header': {
      // a valid body under another key or version: served, unserved, or negative
      if (rng.next() < 0.5) body.writeInt16BE(rng.next() < 0.7 ? rng.pick(servedKeys) : rng.pick([-1, 17, 24, 36, 68, 1000, 0x7fff, -0x8000]), 0);
      else body.writeInt16BE(rng.pick([base.version + 1, base.version - 1, 0, -1, 0x7fff, 99]), 2);
      return reframe(body);
    }
    case 'random': {
      const n = rng.int(rng.next() < 0.9 ? 64 : 4096);
      const b = rng.bytes(n + 8);
      if (rng.next() < 0.7) b.writeInt16BE(rng.pick(servedKeys), 0);
      if (rng.next() < 0.5) b.writeInt16BE(rng.int(14), 2);
      return reframe(b);
    }
    case 'valid':
      return Buffer.from(base.frame);
    case 'multi': {
      // several (mutated) frames written in one go, pipelined
      const parts: Buffer[] = [];
      for (let i = 2 + rng.int(4); i > 0; i--)
        parts.push(apply(rng.pick(['bitflip', 'byte', 'valid', 'interesting', 'truncate'] as const), rng, corpus, servedKeys));
      return Buffer.concat(parts);
    }
  }
}
