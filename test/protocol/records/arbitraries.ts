/** fast-check generators shared by the records tests. */
import fc from 'fast-check';
import type { KafkaRecord, RecordHeader } from '../../../src/protocol/records/record.js';

export const bytesOrNull: fc.Arbitrary<Buffer | null> = fc.option(
  fc.uint8Array({ maxLength: 300 }).map((u) => Buffer.from(u)),
  { nil: null, freq: 5 },
);

export const header: fc.Arbitrary<RecordHeader> = fc.record({
  key: fc.string({ maxLength: 20, unit: 'grapheme' }),
  value: bytesOrNull,
});

/** Records with offset deltas 0..n-1 (as every real producer writes them). */
export const records: fc.Arbitrary<KafkaRecord[]> = fc
  .array(
    fc.record({
      timestampDelta: fc.integer({ min: -1_000_000, max: 10_000_000 }),
      key: bytesOrNull,
      value: bytesOrNull,
      headers: fc.array(header, { maxLength: 4 }),
    }),
    { minLength: 1, maxLength: 30 },
  )
  .map((rs) => rs.map((r, i) => ({ attributes: 0, offsetDelta: i, ...r })));

/** Compare buffers-or-null as plain data (deepStrictEqual on Buffer subarrays is fine too). */
export function normalise(rs: readonly KafkaRecord[]): unknown[] {
  return rs.map((r) => ({
    ...r,
    key: r.key === null ? null : r.key.toString('hex'),
    value: r.value === null ? null : r.value.toString('hex'),
    headers: r.headers.map((h) => ({ key: h.key, value: h.value === null ? null : h.value.toString('hex') })),
  }));
}
