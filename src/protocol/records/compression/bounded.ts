/**
 * Decompression with a hard cap on output bytes: the defence against compression bombs. A
 * client controls the compressed bytes; a 3 MB gzip stream can inflate to gigabytes, and a
 * zstd frame can declare 2 GB of content in its header. Every codec here refuses before it
 * produces (or allocates) more than `maxBytes`, and stops working as soon as the cap is passed:
 *
 * - gzip: zlib's `maxOutputLength`, which aborts inflation once the output passes the cap;
 * - snappy: the uncompressed length is a varint at the head of each raw block, checked first;
 * - lz4: a walk over the frame's block headers gives an upper bound on the output before any
 *   block is decoded (a block of c compressed bytes decodes to at most min(blockMax, ~255c));
 *   when that bound is over the cap, a small decoder here stops at the cap exactly;
 * - zstd: a declared content size is checked first; otherwise the frame is streamed into
 *   bounded chunks, with the decoder's window limited so a header cannot make it allocate GBs.
 *
 * Going over the cap throws DecompressionLimitError; malformed input throws whatever the codec
 * throws (callers map both to Kafka errors). The async variant runs gzip, snappy and lz4 on the
 * libuv thread pool and zstd in slices, so a large input never holds the event loop for long.
 */
import { gunzip, gunzipSync } from 'node:zlib';
import { promisify } from 'node:util';
import { decompressFrame as lz4DecompressFrameAsync, decompressFrameSync as lz4DecompressFrameSync } from 'lz4-napi';
import { uncompress as snappyUncompressAsync, uncompressSync as snappyUncompressSync } from 'snappy';
import zstdBinding from 'zstd-napi/binding.js';
import type { DCtx } from 'zstd-napi/binding.js';
import { CompressionType } from '../batch-header.js';
import { snappyBlocks } from './snappy.js';

/** Output would exceed the caller's cap. Carries the cap so the error message can name it. */
export class DecompressionLimitError extends Error {
  override name = 'DecompressionLimitError';
  constructor(
    readonly maxBytes: number,
    detail: string,
  ) {
    super(`decompressed size exceeds the limit of ${maxBytes} bytes (${detail})`);
  }
}

const gunzipAsync = promisify(gunzip);
const GZIP_ASYNC_CHUNK = 64 << 10;

// ---------------------------------------------------------------------------------- gzip

function isZlibTooLarge(err: unknown): boolean {
  return (err as NodeJS.ErrnoException | undefined)?.code === 'ERR_BUFFER_TOO_LARGE';
}

function gzipBounded(input: Buffer, maxBytes: number): Buffer {
  try {
    return gunzipSync(input, { maxOutputLength: Math.max(1, maxBytes) });
  } catch (err) {
    if (isZlibTooLarge(err)) throw new DecompressionLimitError(maxBytes, 'gzip');
    throw err;
  }
}

async function gzipBoundedAsync(input: Buffer, maxBytes: number): Promise<Buffer> {
  try {
    // 64 KiB output chunks: zlib's default 16 KiB means four times the callbacks and garbage on
    // the loop (a 32 MiB inflation: median worst loop gap 15 ms -> 1.4 ms, total 101 -> 54 ms).
    return await gunzipAsync(input, { maxOutputLength: Math.max(1, maxBytes), chunkSize: GZIP_ASYNC_CHUNK });
  } catch (err) {
    if (isZlibTooLarge(err)) throw new DecompressionLimitError(maxBytes, 'gzip');
    throw err;
  }
}

// -------------------------------------------------------------------------------- snappy

/** The uncompressed length a raw snappy block declares (a little-endian base-128 varint). */
export function snappyDeclaredLength(block: Buffer): number {
  let value = 0;
  for (let i = 0, shift = 0; i < 5 && i < block.length; i++, shift += 7) {
    const b = block.readUInt8(i);
    value += (b & 0x7f) * 2 ** shift;
    if (b < 0x80) return value;
  }
  throw new Error('snappy: malformed uncompressed-length header');
}

function checkSnappyTotal(blocks: Buffer[], maxBytes: number): void {
  let total = 0;
  for (const b of blocks) total += snappyDeclaredLength(b);
  if (total > maxBytes) throw new DecompressionLimitError(maxBytes, `snappy declares ${total} bytes`);
}

function asBuffer(out: string | Buffer): Buffer {
  return typeof out === 'string' ? Buffer.from(out) : out;
}

function snappyBounded(input: Buffer, maxBytes: number): Buffer {
  const blocks = snappyBlocks(input);
  checkSnappyTotal(blocks, maxBytes);
  const out = blocks.map((b) => asBuffer(snappyUncompressSync(b, { asBuffer: true })));
  const only = out.length === 1 ? out[0] : undefined;
  return only ?? Buffer.concat(out);
}

async function snappyBoundedAsync(input: Buffer, maxBytes: number): Promise<Buffer> {
  const blocks = snappyBlocks(input);
  checkSnappyTotal(blocks, maxBytes);
  const out: Buffer[] = [];
  for (const b of blocks) out.push(asBuffer(await snappyUncompressAsync(b, { asBuffer: true })));
  const only = out.length === 1 ? out[0] : undefined;
  return only ?? Buffer.concat(out);
}

// ----------------------------------------------------------------------------------- lz4

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
    const flg = input.readUInt8(pos + 4);
    const blockMax = LZ4_BLOCK_MAX[(input.readUInt8(pos + 5) >> 4) & 0x07];
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
      const token = input.readUInt8(ip++);
      let literals = token >>> 4;
      if (literals === 15) {
        let b: number;
        do {
          if (ip >= end) throw lz4Corrupt('literal length');
          b = input.readUInt8(ip++);
          literals += b;
        } while (b === 255);
      }
      if (ip + literals > end) throw lz4Corrupt('literals past the block');
      if (op + literals > limit) throw tooLarge();
      if (literals <= SHORT_COPY) {
        // in bounds: ip + literals <= end and op + literals <= limit were checked just above
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
      const offset = input.readUInt16LE(ip);
      ip += 2;
      if (offset === 0 || offset > op) throw lz4Corrupt('match offset out of range');
      let match = (token & 15) + 4;
      if ((token & 15) === 15) {
        let b: number;
        do {
          if (ip >= end) throw lz4Corrupt('match length');
          b = input.readUInt8(ip++);
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
          for (let i = 0; i < n; i++) out[op + i] = out[from + i]!; // from + n <= op: in bounds
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

function checkActual(out: Buffer, maxBytes: number, codec: string): Buffer {
  if (out.length > maxBytes) throw new DecompressionLimitError(maxBytes, `${codec} inflated to ${out.length} bytes`);
  return out;
}

/**
 * The native decoder is used when the header bound is within the cap (plus one 64 KiB block of
 * slack, so work stays bounded); otherwise the capped decoder stops at the cap.
 */
function lz4Bounded(input: Buffer, maxBytes: number): Buffer {
  const layout = lz4Layout(input);
  if (layout.bound > maxBytes + (64 << 10)) return lz4DecodeCapped(input, layout, maxBytes);
  return checkActual(lz4DecompressFrameSync(input), maxBytes, 'lz4');
}

async function lz4BoundedAsync(input: Buffer, maxBytes: number): Promise<Buffer> {
  const layout = lz4Layout(input);
  if (layout.bound > maxBytes + (64 << 10)) return lz4DecodeCappedAsync(input, layout, maxBytes);
  return checkActual(await lz4DecompressFrameAsync(input), maxBytes, 'lz4');
}

// ---------------------------------------------------------------------------------- zstd

/**
 * The largest window a frame may ask the decoder to keep (2^24 = 16 MiB). Producers' streaming
 * encoders use 2^21..2^23 at their usual levels; a hostile header asking for 2^31 is refused
 * instead of allocated.
 */
const ZSTD_WINDOW_LOG_MAX = 24;
const ZSTD_CHUNK = 256 << 10;
let zstdContext: DCtx | undefined;

function newZstdDctx(): DCtx {
  const dctx = new zstdBinding.DCtx();
  dctx.setParameter(zstdBinding.DParameter.windowLogMax, ZSTD_WINDOW_LOG_MAX);
  return dctx;
}

/** The context of one-shot (synchronous, never interleaved) decoding. */
function zstdDctx(): DCtx {
  if (!zstdContext) zstdContext = newZstdDctx();
  return zstdContext;
}

/**
 * Contexts of streams: an async stream yields between slices, so two streams in flight must
 * not share one (they did: concurrent batches decoded as 'Data corruption detected', or worse).
 * Up to ZSTD_IDLE_CONTEXTS idle ones are kept for reuse.
 */
const zstdIdle: DCtx[] = [];
const ZSTD_IDLE_CONTEXTS = 4;

/** Sum of the frames' declared content sizes, or null when any frame leaves it out. */
function zstdDeclaredSize(input: Buffer): number | null {
  let total = 0;
  let frame = input;
  while (frame.length > 0) {
    const size = zstdBinding.getFrameContentSize(frame);
    if (size === null) return null;
    total += size;
    frame = frame.subarray(zstdBinding.findFrameCompressedSize(frame));
  }
  return total;
}

/**
 * Streams `input` into chunks of at most ZSTD_CHUNK bytes, so the async variant can yield
 * between them and the cap is checked after every chunk.
 */
function* zstdStream(input: Buffer, maxBytes: number): Generator<Buffer, void, void> {
  const dctx = zstdIdle.pop() ?? newZstdDctx();
  dctx.reset(zstdBinding.ResetDirective.sessionOnly);
  try {
    let remaining = input;
    let total = 0;
    let flushing = true;
    while (remaining.length > 0 || flushing) {
      const chunk = Buffer.allocUnsafe(ZSTD_CHUNK);
      const [hint, produced, consumed] = dctx.decompressStream(chunk, remaining);
      remaining = remaining.subarray(consumed);
      total += produced;
      if (total > maxBytes) {
        dctx.reset(zstdBinding.ResetDirective.sessionOnly);
        throw new DecompressionLimitError(maxBytes, 'zstd stream');
      }
      if (produced > 0) yield chunk.subarray(0, produced);
      // hint 0: a frame is complete and flushed; stop once the input is used up too.
      flushing = hint !== 0 || produced === ZSTD_CHUNK;
      if (remaining.length === 0 && hint !== 0 && produced === 0 && consumed === 0) throw new Error('zstd: truncated frame');
    }
  } finally {
    if (zstdIdle.length < ZSTD_IDLE_CONTEXTS) zstdIdle.push(dctx);
  }
}

function zstdFastPath(input: Buffer, maxBytes: number): Buffer | null {
  const declared = zstdDeclaredSize(input);
  if (declared === null) return null;
  if (declared > maxBytes) throw new DecompressionLimitError(maxBytes, `zstd frame declares ${declared} bytes`);
  const out = Buffer.allocUnsafe(declared);
  const written = zstdDctx().decompress(out, input);
  if (written !== declared) throw new Error(`zstd: frame declared ${declared} bytes but held ${written}`);
  return out;
}

/** One-shot decoding (declared sizes) is used up to this size; above, the async path slices. */
const ZSTD_ONE_SHOT_ASYNC_MAX = 1 << 20;

function zstdBounded(input: Buffer, maxBytes: number): Buffer {
  const fast = zstdFastPath(input, maxBytes);
  if (fast) return fast;
  const parts = [...zstdStream(input, maxBytes)];
  const only = parts.length === 1 ? parts[0] : undefined;
  return only ?? Buffer.concat(parts);
}

async function zstdBoundedAsync(input: Buffer, maxBytes: number): Promise<Buffer> {
  const declared = zstdDeclaredSize(input);
  if (declared !== null && declared > maxBytes) throw new DecompressionLimitError(maxBytes, `zstd frame declares ${declared} bytes`);
  if (declared !== null && declared <= ZSTD_ONE_SHOT_ASYNC_MAX) return zstdBounded(input, maxBytes);
  const parts: Buffer[] = [];
  let sinceYield = 0;
  for (const part of zstdStream(input, maxBytes)) {
    parts.push(part);
    sinceYield += part.length;
    if (sinceYield >= ZSTD_ONE_SHOT_ASYNC_MAX) {
      sinceYield = 0;
      await new Promise<void>((resolve) => setImmediate(resolve));
    }
  }
  const only = parts.length === 1 ? parts[0] : undefined;
  return only ?? Buffer.concat(parts);
}

// ------------------------------------------------------------------------------ dispatch

/** Decompresses a batch's records section, refusing to produce more than `maxBytes`. */
export function decompressBounded(type: CompressionType, input: Buffer, maxBytes: number): Buffer {
  switch (type) {
    case CompressionType.None:
      return checkActual(input, maxBytes, 'uncompressed');
    case CompressionType.Gzip:
      return gzipBounded(input, maxBytes);
    case CompressionType.Snappy:
      return snappyBounded(input, maxBytes);
    case CompressionType.Lz4:
      return lz4Bounded(input, maxBytes);
    case CompressionType.Zstd:
      return zstdBounded(input, maxBytes);
    default:
      throw new RangeError(`unknown compression type ${String(type)}`);
  }
}

/**
 * As decompressBounded, but keeps the event loop free: gzip, snappy and lz4 decode on the libuv
 * thread pool, zstd in slices with a yield between them.
 */
export async function decompressBoundedAsync(type: CompressionType, input: Buffer, maxBytes: number): Promise<Buffer> {
  switch (type) {
    case CompressionType.None:
      return checkActual(input, maxBytes, 'uncompressed');
    case CompressionType.Gzip:
      return gzipBoundedAsync(input, maxBytes);
    case CompressionType.Snappy:
      return snappyBoundedAsync(input, maxBytes);
    case CompressionType.Lz4:
      return lz4BoundedAsync(input, maxBytes);
    case CompressionType.Zstd:
      return zstdBoundedAsync(input, maxBytes);
    default:
      throw new RangeError(`unknown compression type ${String(type)}`);
  }
}
