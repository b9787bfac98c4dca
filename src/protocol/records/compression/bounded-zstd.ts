/**
 * Zstandard decompression with a hard cap on output bytes (see bounded.ts for the whole
 * defence): a declared content size is checked first; otherwise the frame is streamed into
 * bounded chunks, with the decoder's window limited so a header cannot make it allocate GBs.
 * Its own file because of the decoder contexts it keeps (one for one-shot decoding, a small pool
 * for streams that yield between slices).
 */
import zstdBinding from 'zstd-napi/binding.js';
import type { DCtx } from 'zstd-napi/binding.js';
import { DecompressionLimitError } from './decompression-limit.js';

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

export function zstdBounded(input: Buffer, maxBytes: number): Buffer {
  const fast = zstdFastPath(input, maxBytes);
  if (fast) return fast;
  const parts = [...zstdStream(input, maxBytes)];
  return parts.length === 1 ? parts[0]! : Buffer.concat(parts);
}

export async function zstdBoundedAsync(input: Buffer, maxBytes: number): Promise<Buffer> {
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
  return parts.length === 1 ? parts[0]! : Buffer.concat(parts);
}
