/**
 * LZ4 frame decompression with a hard cap on output bytes (see bounded.ts for the whole
 * defence). A walk over the frame's block headers gives an upper bound on the output before any
 * block is decoded (a block of c compressed bytes decodes to at most min(blockMax, ~255c)); when
 * that bound is over the cap, a small decoder here stops at the cap exactly, yielding to the
 * event loop in the async variant. Its own file because the frame walk and the capped block
 * decoder are most of the bounded decompression code and concern LZ4 alone.
 */
import { decompressFrame as lz4DecompressFrameAsync, decompressFrameSync as lz4DecompressFrameSync } from 'lz4-napi';
import { DecompressionLimitError, checkDecompressedSize } from './decompression-limit.js';

const LZ4_FRAME_MAGIC = 0x184d2204;
const LZ4_SKIPPABLE_MASK = 0xfffffff0;
const LZ4_SKIPPABLE_MAGIC = 0x184d2a50;
/** Each byte of an LZ4 sequence can stand for at most 255 output bytes (length extensions). */
const LZ4_MAX_EXPANSION = 255;
const LZ4_BLOCK_MAX: Readonly<Record<number, number>> = { 4: 64 << 10, 5: 256 << 10, 6: 1 << 20, 7: 4 << 20 };

interface Lz4Block {
  start: number;
  size: number;
  /** Stored uncompressed (the high bit of the block header). */
  stored: boolean;
}

interface Lz4Layout {
  blocks: Lz4Block[];
  /** Upper bound on the output, from headers alone (exact when every frame declares its size). */
  bound: number;
}

/** Walks the frame(s) in `input`: block positions and an output bound. Throws when malformed. */
function lz4Layout(input: Buffer): Lz4Layout {
  let pos = 0;
  let bound = 0;
  const blocks: Lz4Block[] = [];
  while (pos < input.length) {
    if (pos + 4 > input.length) throw new Error('lz4: truncated frame magic');
    const magic = input.readUInt32LE(pos);
    if ((magic & LZ4_SKIPPABLE_MASK) >>> 0 === LZ4_SKIPPABLE_MAGIC) {
      if (pos + 8 > input.length) throw new Error('lz4: truncated skippable frame');
      pos += 8 + input.readUInt32LE(pos + 4);
      continue;
    }
    if (magic !== LZ4_FRAME_MAGIC) throw new Error('lz4: bad frame magic');
    if (pos + 7 > input.length) throw new Error('lz4: truncated frame descriptor');
    const flg = input[pos + 4]!;
    const blockMax = LZ4_BLOCK_MAX[(input[pos + 5]! >> 4) & 0x07];
    if (blockMax === undefined) throw new Error('lz4: bad block maximum size');
    const blockChecksum = (flg & 0x10) !== 0;
    const contentChecksum = (flg & 0x04) !== 0;
    let desc = pos + 6;
    let declared = -1;
    if (flg & 0x08) {
      if (desc + 8 > input.length) throw new Error('lz4: truncated content size');
      declared = Number(input.readBigUInt64LE(desc));
      desc += 8;
    }
    if (flg & 0x01) desc += 4; // dictionary id
    pos = desc + 1; // header checksum byte
    let frameBound = 0;
    for (;;) {
      if (pos + 4 > input.length) throw new Error('lz4: truncated block header');
      const word = input.readUInt32LE(pos);
      pos += 4;
      if (word === 0) break; // end mark
      const size = word & 0x7fffffff;
      const stored = (word & 0x80000000) !== 0;
      if (size > blockMax) throw new Error('lz4: block larger than its declared maximum');
      if (pos + size > input.length) throw new Error('lz4: truncated block');
      blocks.push({ start: pos, size, stored });
      frameBound += stored ? size : Math.min(blockMax, size * LZ4_MAX_EXPANSION + 16);
      pos += size + (blockChecksum ? 4 : 0);
    }
    if (contentChecksum) pos += 4;
    bound += declared >= 0 ? Math.min(declared, frameBound) : frameBound;
  }
  return { blocks, bound };
}

/** An upper bound on the bytes the LZ4 frame(s) in `input` decode to, from headers alone. */
export function lz4OutputBound(input: Buffer): number {
  return lz4Layout(input).bound;
}

function lz4Corrupt(what: string): Error {
  return new Error(`lz4: corrupt block (${what})`);
}

/**
 * Decodes the blocks into one buffer of at most `maxBytes`, stopping at the first byte past the
 * cap. Used when the header bound cannot rule a bomb out (a frame of few, large blocks): the
 * native decoder would allocate a whole block's maximum first. Linked blocks work because the
 * output is one contiguous buffer that matches may reach back into.
 */
/** The capped decoder offers a yield point after about this much output, even inside a block. */
const LZ4_STEP_BYTES = 256 << 10;

/*
 * Legit frames (header bound within the cap) decode natively even when large: lz4-napi's
 * "async" frame decoder still holds the event loop ~3 ms per MiB of output (22-33 ms for an
 * 8 MiB batch, measured), but the JS decoder costs 10-50x more CPU on short-match data (36-58
 * MB/s), and a frame's header bound (4 MiB per lz4-napi block) cannot tell a 1 MB batch from
 * an 8 MB one. Bombs (bound over the cap) take the sliced JS decoder.
 */

/** Below this many bytes a plain loop beats Buffer#copy's call overhead. */
const SHORT_COPY = 48;

function* lz4DecodeCappedSteps(input: Buffer, layout: Lz4Layout, maxBytes: number): Generator<number, Buffer, void> {
  const out = Buffer.allocUnsafe(Math.min(maxBytes, layout.bound));
  const limit = out.length;
  let op = 0;
  const tooLarge = (): DecompressionLimitError => new DecompressionLimitError(maxBytes, 'lz4 blocks');
  let lastStep = 0;
  for (const block of layout.blocks) {
    yield op;
    let ip = block.start;
    const end = block.start + block.size;
    if (block.stored) {
      if (op + block.size > limit) throw tooLarge();
      input.copy(out, op, ip, end);
      op += block.size;
      continue;
    }
    while (ip < end) {
      const token = input[ip++]!;
      let literals = token >>> 4;
      if (literals === 15) {
        let b: number;
        do {
          if (ip >= end) throw lz4Corrupt('literal length');
          b = input[ip++]!;
          literals += b;
        } while (b === 255);
      }
      if (ip + literals > end) throw lz4Corrupt('literals past the block');
      if (op + literals > limit) throw tooLarge();
      if (literals <= SHORT_COPY) {
        for (let i = 0; i < literals; i++) out[op + i] = input[ip + i]!;
      } else {
        input.copy(out, op, ip, ip + literals);
      }
      ip += literals;
      op += literals;
      if (op - lastStep >= LZ4_STEP_BYTES) {
        lastStep = op;
        yield op;
      }
      if (ip === end) break; // the last sequence carries literals only
      if (ip + 2 > end) throw lz4Corrupt('match offset');
      const offset = input[ip]! | (input[ip + 1]! << 8);
      ip += 2;
      if (offset === 0 || offset > op) throw lz4Corrupt('match offset out of range');
      let match = (token & 15) + 4;
      if ((token & 15) === 15) {
        let b: number;
        do {
          if (ip >= end) throw lz4Corrupt('match length');
          b = input[ip++]!;
          match += b;
        } while (b === 255);
      }
      if (op + match > limit) throw tooLarge();
      // An overlapping match repeats the last `offset` bytes: copy them in runs that double,
      // since out[from, op) stays a whole number of periods (a byte loop costs ~15 ns/byte).
      const from = op - offset;
      let remaining = match;
      while (remaining > 0) {
        const n = Math.min(remaining, op - from);
        if (n <= SHORT_COPY) {
          for (let i = 0; i < n; i++) out[op + i] = out[from + i]!;
        } else {
          out.copy(out, op, from, from + n);
        }
        op += n;
        remaining -= n;
      }
    }
  }
  return out.subarray(0, op);
}

function lz4DecodeCapped(input: Buffer, layout: Lz4Layout, maxBytes: number): Buffer {
  const steps = lz4DecodeCappedSteps(input, layout, maxBytes);
  for (;;) {
    const r = steps.next();
    if (r.done) return r.value;
  }
}

/** As lz4DecodeCapped, yielding to the event loop after every ~256 KiB of output. */
async function lz4DecodeCappedAsync(input: Buffer, layout: Lz4Layout, maxBytes: number): Promise<Buffer> {
  const steps = lz4DecodeCappedSteps(input, layout, maxBytes);
  let lastYield = 0;
  for (;;) {
    const r = steps.next();
    if (r.done) return r.value;
    if (r.value - lastYield >= LZ4_STEP_BYTES) {
      lastYield = r.value;
      await new Promise<void>((resolve) => setImmediate(resolve));
    }
  }
}

/**
 * The native decoder is used when the header bound is within the cap (plus one 64 KiB block of
 * slack, so work stays bounded); otherwise the capped decoder stops at the cap.
 */
export function lz4Bounded(input: Buffer, maxBytes: number): Buffer {
  const layout = lz4Layout(input);
  if (layout.bound > maxBytes + (64 << 10)) return lz4DecodeCapped(input, layout, maxBytes);
  return checkDecompressedSize(lz4DecompressFrameSync(input), maxBytes, 'lz4');
}

export async function lz4BoundedAsync(input: Buffer, maxBytes: number): Promise<Buffer> {
  const layout = lz4Layout(input);
  if (layout.bound > maxBytes + (64 << 10)) return lz4DecodeCappedAsync(input, layout, maxBytes);
  return checkDecompressedSize(await lz4DecompressFrameAsync(input), maxBytes, 'lz4');
}
