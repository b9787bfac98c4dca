import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { gzipSync } from 'node:zlib';
import { compressFrameSync } from 'lz4-napi';
import zstdBinding from 'zstd-napi/binding.js';
import { CompressionType } from '../../../src/protocol/records/batch-header.js';
import {
  DecompressionLimitError,
  compress,
  decompressBounded,
  decompressBoundedAsync,
  lz4OutputBound,
} from '../../../src/protocol/records/compression/index.js';
import { snappyCompress } from '../../../src/protocol/records/compression/snappy.js';

const CODECS = [CompressionType.Gzip, CompressionType.Snappy, CompressionType.Lz4, CompressionType.Zstd] as const;

/** Half random (incompressible), half zeros: realistic ratios, and the zeros make bombs. */
function sample(size: number): Buffer {
  const b = Buffer.alloc(size);
  randomBytes(size >> 1).copy(b);
  return b;
}

for (const codec of CODECS) {
  test(`codec ${CompressionType[codec]}: round trip within the cap, sync and async`, async () => {
    for (const size of [0, 1, 1000, 300_000, 2_000_000]) {
      const input = sample(size);
      const packed = compress(codec, input);
      assert.deepEqual(decompressBounded(codec, packed, size), input);
      assert.deepEqual(await decompressBoundedAsync(codec, packed, size), input);
    }
  });

  test(`codec ${CompressionType[codec]}: a bomb is refused with DecompressionLimitError`, async () => {
    const bomb = compress(codec, Buffer.alloc(64 << 20)); // 64 MiB of zeros
    assert.ok(bomb.length < 4 << 20, `bomb is small (${bomb.length} bytes)`);
    assert.throws(() => decompressBounded(codec, bomb, 1 << 20), DecompressionLimitError);
    await assert.rejects(decompressBoundedAsync(codec, bomb, 1 << 20), DecompressionLimitError);
  });
}

test('gzip: a multi-member stream is bounded over all members', () => {
  const member = gzipSync(Buffer.alloc(600_000));
  const two = Buffer.concat([member, member]);
  assert.equal(decompressBounded(CompressionType.Gzip, two, 1_200_000).length, 1_200_000);
  assert.throws(() => decompressBounded(CompressionType.Gzip, two, 1_000_000), DecompressionLimitError);
});

test('zstd: a header declaring 2 GB is refused before anything is allocated', () => {
  const real = compress(CompressionType.Zstd, Buffer.alloc(1000));
  assert.equal(zstdBinding.getFrameContentSize(real), 1000);
  // Rewrite the frame header to declare a 2^31-byte content size (frame header descriptor with
  // an 8-byte content-size field), keeping the data blocks: a cheap liar.
  const liar = Buffer.from(real);
  const fhd = liar.readUInt8(4);
  const fcsFlag = fhd >> 6;
  assert.ok(fcsFlag >= 0);
  const forged = Buffer.concat([liar.subarray(0, 4), Buffer.from([(fhd & 0x3f) | 0xc0])]);
  const rest = liar.subarray(5);
  const singleSegment = (fhd & 0x20) !== 0;
  const windowBytes = singleSegment ? 0 : 1;
  const dictBytes = [0, 1, 2, 4][fhd & 0x03] ?? assert.fail('a 2-bit field');
  const oldFcs = [singleSegment ? 1 : 0, 2, 4, 8][fcsFlag] ?? assert.fail('a 2-bit field');
  const fcs = Buffer.alloc(8);
  fcs.writeBigUInt64LE(2n ** 31n);
  const header = Buffer.concat([forged, rest.subarray(0, windowBytes + dictBytes), fcs]);
  const bombish = Buffer.concat([header, rest.subarray(windowBytes + dictBytes + oldFcs)]);
  assert.equal(zstdBinding.getFrameContentSize(bombish), 2 ** 31);
  const before = process.memoryUsage().arrayBuffers;
  assert.throws(() => decompressBounded(CompressionType.Zstd, bombish, 8 << 20), DecompressionLimitError);
  assert.ok(process.memoryUsage().arrayBuffers - before < 64 << 20, 'no large allocation');
});

test('zstd: frames without a content size (streaming encoders) decode through the bounded stream', async () => {
  const cctx = new zstdBinding.CCtx();
  const input = sample(3_000_000);
  const out = Buffer.alloc(zstdBinding.compressBound(input.length));
  // A streaming compression with end-of-frame: no pledged size, so no content size in the header.
  const [, first] = cctx.compressStream2(out, input, zstdBinding.EndDirective.continue);
  const [, last] = cctx.compressStream2(out.subarray(first), Buffer.alloc(0), zstdBinding.EndDirective.end);
  const frame = out.subarray(0, first + last);
  assert.equal(zstdBinding.getFrameContentSize(frame), null);
  assert.deepEqual(decompressBounded(CompressionType.Zstd, frame, input.length), input);
  assert.deepEqual(await decompressBoundedAsync(CompressionType.Zstd, frame, input.length), input);
  assert.throws(() => decompressBounded(CompressionType.Zstd, frame, input.length - 1), DecompressionLimitError);
  assert.throws(() => decompressBounded(CompressionType.Zstd, frame.subarray(0, frame.length - 10), input.length));
});

test('lz4: the header bound covers the real size and is near it for full blocks', () => {
  const input = sample(1_000_000);
  const frame = compressFrameSync(input);
  const bound = lz4OutputBound(frame);
  assert.ok(bound >= input.length, `bound ${bound} >= ${input.length}`);
  assert.ok(bound <= input.length + (4 << 20), `bound ${bound} is near ${input.length}`);
  assert.throws(() => lz4OutputBound(frame.subarray(0, 20)));
});

test('lz4: the capped decoder matches the native one on large-block frames, and stops at the cap', () => {
  // lz4-napi writes 4 MiB blocks: a 300 kB frame has a header bound of 4 MiB, over a 300 kB cap.
  for (const size of [1, 100, 70_000, 300_000, 1_500_000]) {
    const input = sample(size);
    const frame = compressFrameSync(input);
    assert.deepEqual(decompressBounded(CompressionType.Lz4, frame, size), input, `size ${size}`);
    if (size > 100) assert.throws(() => decompressBounded(CompressionType.Lz4, frame, size - 1), DecompressionLimitError);
  }
  const text = Buffer.from('abcabcabcabd'.repeat(50_000)); // overlapping matches
  assert.deepEqual(decompressBounded(CompressionType.Lz4, compressFrameSync(text), text.length), text);
});

test('snappy: xerial framing is bounded by the sum of its blocks', () => {
  const framed = snappyCompress(Buffer.alloc(200_000));
  assert.equal(decompressBounded(CompressionType.Snappy, framed, 200_000).length, 200_000);
  assert.throws(() => decompressBounded(CompressionType.Snappy, framed, 199_999), DecompressionLimitError);
});

test('corrupt input is an ordinary error, not a limit error', () => {
  for (const codec of CODECS) {
    const garbage = randomBytes(200);
    // Random bytes can open with a snappy length varint over the cap, which IS a limit error
    // (the test failed about one run in three): declare 16 bytes, then garbage.
    garbage[0] = 0x10;
    assert.throws(
      () => decompressBounded(codec, garbage, 1 << 20),
      (err: unknown) => err instanceof Error && !(err instanceof DecompressionLimitError),
      CompressionType[codec],
    );
  }
});

test('lz4: the capped decoder copies long overlapping matches fast and yields while decoding a bomb', async () => {
  // Short periods (1..7 bytes) repeated make overlapping matches of every length.
  for (const period of [1, 2, 3, 7]) {
    const unit = Buffer.from('abcdefg'.slice(0, period));
    const input = Buffer.concat([Buffer.from('head'), Buffer.alloc(3_000_000, unit), Buffer.from('tail')]);
    const frame = compressFrameSync(input);
    assert.deepEqual(decompressBounded(CompressionType.Lz4, frame, input.length), input, `period ${period}`);
    assert.deepEqual(await decompressBoundedAsync(CompressionType.Lz4, frame, input.length), input, `period ${period}`);
  }
  // 64 MiB of zeros against a 32 MiB cap: the byte-at-a-time copy took ~550 ms on the loop.
  const bomb = compressFrameSync(Buffer.alloc(64 << 20));
  let ticks = 0;
  const ticker = setInterval(() => ticks++, 0);
  const t0 = performance.now();
  await assert.rejects(decompressBoundedAsync(CompressionType.Lz4, bomb, 32 << 20), DecompressionLimitError);
  const ms = performance.now() - t0;
  clearInterval(ticker);
  assert.ok(ticks > 0, 'the event loop ran while the bomb was decoded');
  assert.ok(ms < 2000, `decoding up to the cap took ${ms.toFixed(0)} ms`);
});

test('zstd: concurrent async streams do not share a decoder context', async () => {
  // Declared sizes over 1 MiB take the sliced stream path, which yields between slices.
  const inputs = [0, 1, 2].map((n) => Buffer.from(Array.from({ length: 120_000 }, (_, i) => `stream ${n} record ${i};`).join('')));
  const frames = inputs.map((b) => compress(CompressionType.Zstd, b));
  const outs = await Promise.all(frames.map((f) => decompressBoundedAsync(CompressionType.Zstd, f, 64 << 20)));
  outs.forEach((out, n) => assert.ok(out.equals(inputs[n]!), `stream ${n} decoded intact`));
});
