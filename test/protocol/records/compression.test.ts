import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fc from 'fast-check';
import { compressSync as rawSnappy } from 'snappy';
import { CompressionType } from '../../../src/protocol/records/batch-header.js';
import {
  compress,
  decompress,
  isXerialFramed,
  lz4BreakChecksumForMagic0,
  lz4Decompress,
  lz4DecompressLegacy,
  snappyCompress,
  snappyDecompress,
  XERIAL_MAGIC,
} from '../../../src/protocol/records/compression/index.js';

/** Half random, half repetitive: compressible but not trivially so. */
function sample(size: number): Buffer {
  const out = Buffer.alloc(size);
  const noise = randomBytes(size);
  for (let i = 0; i < size; i++) out[i] = i % 64 < 32 ? noise.readUInt8(i) : i & 0xff;
  return out;
}

const payload = fc.uint8Array({ maxLength: 5000 }).map((u) => Buffer.from(u));

test('every codec round-trips', () => {
  for (const type of [CompressionType.None, CompressionType.Gzip, CompressionType.Snappy, CompressionType.Lz4, CompressionType.Zstd]) {
    fc.assert(
      fc.property(payload, (p) => {
        assert.deepEqual(decompress(type, compress(type, p)), p);
      }),
      { numRuns: 30 },
    );
    const big = sample(200_000);
    assert.deepEqual(decompress(type, compress(type, big)), big, CompressionType[type]);
  }
});

test('snappy: we write xerial framing with 32 KB blocks, and read raw and xerial', () => {
  const data = sample(100_000);
  const framed = snappyCompress(data);
  assert.equal(isXerialFramed(framed), true);
  assert.deepEqual(framed.subarray(0, 8), XERIAL_MAGIC);
  assert.equal(framed.readInt32BE(8), 1);
  assert.equal(framed.readInt32BE(12), 1);
  let blocks = 0;
  for (let pos = 16; pos < framed.length; pos += 4 + framed.readInt32BE(pos)) blocks++;
  assert.equal(blocks, 4); // 100 000 bytes in 32 KiB blocks
  assert.deepEqual(snappyDecompress(framed), data);
  assert.deepEqual(snappyDecompress(rawSnappy(data)), data);
  assert.throws(() => snappyDecompress(framed.subarray(0, framed.length - 5)));
});

/** The lz4 and zstd command-line tools are independent implementations to check against; CI installs them. */
function haveCli(name: string): boolean {
  const ok = spawnSync(name, ['--version']).status === 0;
  assert.ok(ok || process.env.CI !== 'true', `the ${name} CLI is required under CI`);
  return ok;
}

test('lz4: frames from the lz4 CLI decode (independent 64 KB blocks, with and without checksums)', (t) => {
  if (!haveCli('lz4')) return t.skip('lz4 CLI not installed');
  const data = sample(300_000);
  for (const args of [
    ['-c', '-B4', '--no-frame-crc'],
    ['-c', '-B4', '-BX'],
    ['-c', '-B7'],
    ['-c', '-BD'],
  ]) {
    const run = spawnSync('lz4', args, { input: data });
    assert.equal(run.status, 0, run.stderr.toString());
    assert.deepEqual(lz4Decompress(run.stdout), data, args.join(' '));
  }
  const ours = compress(CompressionType.Lz4, data);
  const back = spawnSync('lz4', ['-d', '-c'], { input: ours });
  assert.equal(back.status, 0, back.stderr.toString());
  assert.deepEqual(back.stdout, data);
});

test('lz4: magic-0 frames with Kafka’s broken header checksum are repaired', () => {
  const data = sample(10_000);
  const broken = lz4BreakChecksumForMagic0(compress(CompressionType.Lz4, data));
  assert.throws(() => lz4Decompress(broken));
  assert.deepEqual(lz4DecompressLegacy(broken), data);
  assert.deepEqual(lz4DecompressLegacy(compress(CompressionType.Lz4, data)), data);
});

test('zstd: interoperates with the zstd CLI, including streamed frames without content size', (t) => {
  if (!haveCli('zstd')) return t.skip('zstd CLI not installed');
  const data = sample(300_000);
  // Reading stdin makes the CLI stream, so the frame has no content size (like zstd-jni output).
  const run = spawnSync('zstd', ['-c', '-q', '-'], { input: data });
  assert.equal(run.status, 0, run.stderr.toString());
  assert.deepEqual(decompress(CompressionType.Zstd, run.stdout), data);
  const back = spawnSync('zstd', ['-d', '-c', '-q', '-'], { input: compress(CompressionType.Zstd, data) });
  assert.equal(back.status, 0, back.stderr.toString());
  assert.deepEqual(back.stdout, data);
});

test('gzip: multi-member streams decode (some producers concatenate members)', () => {
  const a = sample(1000);
  const b = sample(2000);
  const joined = Buffer.concat([compress(CompressionType.Gzip, a), compress(CompressionType.Gzip, b)]);
  assert.deepEqual(decompress(CompressionType.Gzip, joined), Buffer.concat([a, b]));
});

test('unknown compression ids throw', () => {
  assert.throws(() => compress(7 as CompressionType, Buffer.alloc(1)), RangeError);
  assert.throws(() => decompress(5 as CompressionType, Buffer.alloc(1)), RangeError);
});
