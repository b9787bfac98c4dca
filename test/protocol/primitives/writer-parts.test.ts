import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { Writer } from '../../../src/protocol/primitives/index.js';

type Op = { kind: 'int32'; v: number } | { kind: 'bytes'; v: Uint8Array } | { kind: 'string'; v: string };

const op: fc.Arbitrary<Op> = fc.oneof(
  fc.integer({ min: -(2 ** 31), max: 2 ** 31 - 1 }).map((v) => ({ kind: 'int32' as const, v })),
  fc.uint8Array({ maxLength: 300 }).map((v) => ({ kind: 'bytes' as const, v })),
  fc.string({ maxLength: 40 }).map((v) => ({ kind: 'string' as const, v })),
);

function apply(w: Writer, ops: Op[]): void {
  for (const o of ops) {
    if (o.kind === 'int32') w.int32(o.v);
    else if (o.kind === 'bytes') w.bytes(o.v, true);
    else w.string(o.v, false);
  }
}

test('a writer keeping large runs by reference encodes the same bytes as a copying one', () => {
  fc.assert(
    fc.property(fc.array(op, { maxLength: 30 }), fc.integer({ min: 1, max: 200 }), (ops, threshold) => {
      const copying = new Writer(8);
      apply(copying, ops);
      const referencing = new Writer(8, { referenceThreshold: threshold });
      apply(referencing, ops);
      assert.deepEqual(Buffer.concat(referencing.parts()), copying.result());
      assert.deepEqual(referencing.result(), copying.result());
    }),
  );
});

test('runs at or over the threshold are the caller buffers themselves (no copy)', () => {
  const big = Buffer.alloc(100, 7);
  const w = new Writer(16, { referenceThreshold: 100 });
  w.int32(1);
  w.bytes(big, false);
  w.int16(2);
  const parts = w.parts();
  assert.equal(parts.length, 3);
  assert.equal(parts[1], big);
  assert.deepEqual(parts[0], Buffer.from([0, 0, 0, 1, 0, 0, 0, 100]));
  assert.deepEqual(parts[2], Buffer.from([0, 2]));
});

test('without a threshold, parts() is the single result buffer', () => {
  const w = new Writer();
  w.bytes(Buffer.alloc(100_000), false);
  assert.equal(w.parts().length, 1);
  assert.equal(w.parts()[0]!.length, 100_004);
});
