import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { ProducerBatch, RecordAccumulator, type RecordMetadata } from '../../src/client/accumulator.js';
import { CompressionType, decodeBatch, isCrcValid } from '../../src/protocol/records/index.js';

const bytes = fc.option(
  fc.uint8Array({ maxLength: 300 }).map((a) => Buffer.from(a)),
  { nil: null },
);
const header = fc.record({ key: fc.string({ maxLength: 10 }), value: bytes });
const record = fc.record({
  key: bytes,
  value: bytes,
  headers: fc.option(fc.array(header, { maxLength: 3 }), { nil: null }),
  timestamp: fc.integer({ min: 1_600_000_000_000, max: 1_800_000_000_000 }),
});

test('records encoded on append decode back identically, with a valid CRC, for every codec', () => {
  fc.assert(
    fc.property(
      fc.array(record, { minLength: 1, maxLength: 40 }),
      fc.constantFrom(CompressionType.None, CompressionType.Gzip, CompressionType.Lz4),
      (records, compression) => {
        const batch = new ProducerBatch('t', 0, 64);
        for (const r of records) batch.append(r, batch.bodySizeOf(r), () => undefined);
        batch.baseSequence = 7;
        const wire = batch.encode(compression, 42n, 3);
        assert.ok(isCrcValid(wire, 0));
        const decoded = decodeBatch(wire, 0, { maxBytes: 1 << 30 });
        assert.equal(decoded.compression, compression);
        assert.equal(decoded.records.length, records.length);
        assert.equal(decoded.producerId, 42n);
        assert.equal(decoded.producerEpoch, 3);
        assert.equal(decoded.baseSequence, 7);
        assert.equal(decoded.lastOffsetDelta, records.length - 1);
        assert.equal(decoded.maxTimestamp, BigInt(Math.max(...records.map((r) => r.timestamp))));
        decoded.records.forEach((d, i) => {
          const r = records[i]!;
          assert.equal(d.offsetDelta, i);
          assert.equal(decoded.baseTimestamp + BigInt(d.timestampDelta), BigInt(r.timestamp));
          assert.deepEqual(d.key, r.key);
          assert.deepEqual(d.value, r.value);
          assert.deepEqual(
            d.headers,
            (r.headers ?? []).map((h) => ({ key: h.key, value: h.value })),
          );
        });
      },
    ),
    { numRuns: 200 },
  );
});

test('a batch closes before the record that would take it past batchSize; callbacks get offsets in order', () => {
  let ready = 0;
  const acc = new RecordAccumulator(
    1000,
    0 /* linger 0: close at once */,
    () => ready++,
    () => undefined,
  );
  const big = new RecordAccumulator(
    1000,
    10_000,
    () => undefined,
    () => undefined,
  );
  const value = Buffer.alloc(100, 1);
  acc.append('t', 0, { key: null, value, headers: null, timestamp: 1 }, () => undefined);
  assert.equal(ready, 1, 'linger 0 sends every record alone');
  const seen: RecordMetadata[] = [];
  for (let i = 0; i < 25; i++) big.append('t', 3, { key: null, value, headers: null, timestamp: 1000 + i }, (_err, m) => seen.push(m!));
  const batches = big.drain(() => true);
  assert.equal(batches.length, 1, 'only the first full batch is ready; one per partition per drain');
  const first = batches[0]!;
  assert.ok(first.sizeInBytes <= 1000 && first.count === 8, `first batch holds ${first.count} records in ${first.sizeInBytes} bytes`);
  first.succeed(100n, -1n);
  assert.deepEqual(
    seen.map((m) => m.offset),
    [100n, 101n, 102n, 103n, 104n, 105n, 106n, 107n],
  );
  assert.equal(seen[7]!.timestamp, 1007n);
  assert.equal(big.failAll(new Error('gone')), 25 - 8);
});
