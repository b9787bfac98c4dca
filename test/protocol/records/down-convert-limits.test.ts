import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  CompressionType,
  RECORDS_COUNT,
  RecordsError,
  computeCrc,
  CRC,
  decodeBatch,
  decodeBatchAsync,
  downConvert,
  downConvertAsync,
  encodeBatch,
  readDecompressionCap,
  readLegacyMessageSet,
  encodeLegacyMessageSet,
  type KafkaRecord,
} from '../../../src/protocol/records/index.js';

const rec = (i: number, value: Buffer | null): KafkaRecord => ({
  attributes: 0,
  timestampDelta: i,
  offsetDelta: i,
  key: Buffer.from(`k${i}`),
  value,
  headers: [],
});
const batchOf = (n: number, valueSize: number, baseOffset: bigint, compression = CompressionType.Gzip): Buffer =>
  encodeBatch({
    records: Array.from({ length: n }, (_, i) => rec(i, Buffer.alloc(valueSize, 0x61 + (i % 26)))),
    baseOffset,
    baseTimestamp: 1000n,
    compression,
  });
/** One record whose value is `size` zeros: a small gzip batch that inflates to `size` bytes. */
const bomb = (size: number, baseOffset: bigint): Buffer => batchOf(1, size, baseOffset, CompressionType.Gzip);
const offsets = (legacy: Buffer): bigint[] => readLegacyMessageSet(legacy).messages.map((m) => m.offset);

test('the read cap follows max.message.bytes: 32x, within [16 MiB, 1 GiB]', () => {
  assert.equal(readDecompressionCap(), 1048588 * 32);
  assert.equal(readDecompressionCap(1000), 16 << 20);
  assert.equal(readDecompressionCap(100 << 20), 1 << 30);
});

test('decodeBatch refuses a batch inflating past maxBytes, and a record count the cap cannot hold', async () => {
  const b = bomb(4 << 20, 0n);
  assert.ok(b.length < 64 << 10);
  for (const decode of [decodeBatch, decodeBatchAsync]) {
    await assert.rejects(
      async () => decode(b, 0, { maxBytes: 1 << 20 }),
      (err: unknown) => err instanceof RecordsError && err.reason === 'decompressed_too_large' && err.kafkaError === 'MESSAGE_TOO_LARGE',
    );
    assert.equal((await decode(b, 0, { maxBytes: 8 << 20 })).records[0]!.value!.length, 4 << 20);
  }
  // A header claiming 100 million records in a compressed batch is refused before inflating.
  const liar = Buffer.from(batchOf(2, 10, 0n));
  liar.writeInt32BE(100_000_000, RECORDS_COUNT);
  liar.writeUInt32BE(computeCrc(liar, 0), CRC);
  assert.throws(
    () => decodeBatch(liar, 0, { maxBytes: 1 << 20 }),
    (err: unknown) => err instanceof RecordsError && err.reason === 'decompressed_too_large',
  );
  // Uncompressed batches are not inflated: the cap does not apply to them.
  const plain = batchOf(10, 1000, 0n, CompressionType.None);
  assert.equal(decodeBatch(plain, 0, { maxBytes: 100 }).records.length, 10);
});

for (const variant of ['sync', 'async'] as const) {
  const convert = variant === 'sync' ? async (...a: Parameters<typeof downConvert>) => downConvert(...a) : downConvertAsync;

  test(`downConvert (${variant}): output stays within maxOutputBytes, whole messages in offset order`, async () => {
    const input = Buffer.concat([batchOf(50, 1000, 0n), batchOf(50, 1000, 50n)]);
    for (const toMagic of [0, 1] as const) {
      const out = await convert(input, toMagic, { maxOutputBytes: 10_000, maxDecompressedBytes: 1 << 20 });
      assert.equal(out.error, undefined);
      assert.ok(out.records.length <= 10_000);
      const got = offsets(out.records);
      assert.deepEqual(
        got,
        got.map((_, i) => BigInt(i)),
      );
      const entry = out.records.length / got.length;
      assert.ok(out.records.length + entry > 10_000, 'as many messages as fit');
      const all = await convert(input, toMagic, { maxOutputBytes: 1 << 30, maxDecompressedBytes: 1 << 20 });
      assert.equal(offsets(all.records).length, 100);
    }
  });

  test(`downConvert (${variant}): the first message is sent whole over the budget only when allowed`, async () => {
    const input = batchOf(5, 5000, 7n);
    const whole = await convert(input, 1, { maxOutputBytes: 100, maxDecompressedBytes: 1 << 20 });
    assert.deepEqual(offsets(whole.records), [7n]);
    const none = await convert(input, 1, { maxOutputBytes: 100, firstMessageWhole: false, maxDecompressedBytes: 1 << 20 });
    assert.equal(none.records.length, 0);
    assert.equal(none.error, undefined);
  });

  test(`downConvert (${variant}): records below the fetch offset are left out and use no budget`, async () => {
    const input = Buffer.concat([batchOf(50, 100, 0n), batchOf(50, 100, 50n)]);
    const out = await convert(input, 1, { maxOutputBytes: 2000, maxDecompressedBytes: 1 << 20, fromOffset: 30n });
    const got = offsets(out.records);
    assert.equal(got[0], 30n);
    assert.deepEqual(
      got,
      got.map((_, i) => 30n + BigInt(i)),
    );
    assert.ok(got.length >= 2000 / 200, `${got.length} messages`);
  });

  test(`downConvert (${variant}): a batch inflating past the cap ends the data before it, or is the error`, async () => {
    const small = batchOf(3, 10, 0n);
    const b = bomb(8 << 20, 3n);
    const after = batchOf(2, 10, 4n);
    const limits = { maxOutputBytes: 1 << 20, maxDecompressedBytes: 1 << 20 };
    const cut = await convert(Buffer.concat([small, b, after]), 1, limits);
    assert.deepEqual(offsets(cut.records), [0n, 1n, 2n]);
    assert.equal(cut.error?.reason, 'decompressed_too_large');
    assert.equal(cut.errorOffset, 3n);
    const first = await convert(Buffer.concat([b, after]), 0, limits);
    assert.equal(first.records.length, 0);
    assert.equal(first.error?.kafkaError, 'MESSAGE_TOO_LARGE');
    // Corrupt compressed bytes: CORRUPT_MESSAGE, the same way.
    const junk = Buffer.from(small);
    junk.fill(0x55, 61 + 10);
    const bad = await convert(junk, 1, limits);
    assert.equal(bad.records.length, 0);
    assert.equal(bad.error?.kafkaError, 'CORRUPT_MESSAGE');
  });
}

test('downConvertAsync yields to the event loop while converting a large batch', async () => {
  // 100k small records (about 2.5 MB once converted), uncompressed: all the work is per record.
  const input = encodeBatch({ records: Array.from({ length: 100_000 }, (_, i) => rec(i, Buffer.from('v'))), baseTimestamp: 0n });
  let ticks = 0;
  let worst = 0;
  let last = performance.now();
  const timer = setInterval(() => {
    const now = performance.now();
    worst = Math.max(worst, now - last);
    last = now;
    ticks++;
  }, 1);
  last = performance.now();
  const t0 = performance.now();
  const out = await downConvertAsync(input, 1, { maxOutputBytes: 1 << 30, maxDecompressedBytes: 1 << 30 });
  const total = performance.now() - t0;
  clearInterval(timer);
  assert.equal(readLegacyMessageSet(out.records).messages.length, 100_000);
  console.log(`converted 100k records in ${total.toFixed(0)} ms; timer ticks ${ticks}, worst gap ${worst.toFixed(1)} ms`);
  assert.ok(ticks >= 2, 'the loop ran during the conversion');
  // Slices are ~4 ms of CPU; a loaded machine stretches them, so the bound only catches a
  // conversion that does not yield (its gap would be the whole conversion).
  assert.ok(worst < Math.max(250, total / 3), `worst event-loop gap ${worst.toFixed(1)} ms of ${total.toFixed(0)} ms`);
});

test('downConvert to magic 0: a compressed magic-1 wrapper past the cap is the error, not inflated by the legacy reader', () => {
  const big = encodeLegacyMessageSet({
    magic: 1,
    baseOffset: 10n,
    compression: CompressionType.Gzip,
    messages: [{ timestamp: 1n, key: null, value: Buffer.alloc(4 << 20) }],
  });
  const ok = encodeLegacyMessageSet({
    magic: 1,
    baseOffset: 9n,
    compression: CompressionType.Gzip,
    messages: [{ timestamp: 1n, key: null, value: Buffer.from('fine') }],
  });
  const out = downConvert(Buffer.concat([ok, big]), 0, { maxOutputBytes: 1 << 30, maxDecompressedBytes: 1 << 20 });
  assert.deepEqual(offsets(out.records), [9n]);
  assert.equal(out.error?.reason, 'decompressed_too_large');
  const roomy = downConvert(big, 0, { maxOutputBytes: 1 << 30, maxDecompressedBytes: 8 << 20 });
  assert.equal(readLegacyMessageSet(roomy.records).messages[0]!.value!.length, 4 << 20);
});

test('downConvert: framing damage after good data ends the data there, with the error', async () => {
  const good = batchOf(3, 10, 0n);
  const damaged = Buffer.from(batchOf(2, 10, 3n));
  damaged.writeInt8(7, 16); // magic 7
  for (const out of [
    downConvert(Buffer.concat([good, damaged]), 1, { maxOutputBytes: 1 << 20, maxDecompressedBytes: 1 << 20 }),
    await downConvertAsync(Buffer.concat([good, damaged]), 1, { maxOutputBytes: 1 << 20, maxDecompressedBytes: 1 << 20 }),
  ]) {
    assert.deepEqual(offsets(out.records), [0n, 1n, 2n]);
    assert.equal(out.error?.kafkaError, 'CORRUPT_MESSAGE');
  }
});
