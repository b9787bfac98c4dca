import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import { ErrorCode } from '../../src/protocol/errors.js';
import { lastSequenceOf, ProducerStateMap, MAX_CACHED_BATCHES } from '../../src/replication/producer-state.js';
import { decodeSnapshot, encodeSnapshot, loadLatestSnapshot, writeSnapshot } from '../../src/replication/producer-state-snapshot.js';

const batch = (firstSeq: number, lastSeq: number, firstOffset: number) => ({ firstSeq, lastSeq, firstOffset, lastOffset: firstOffset + lastSeq - firstSeq, timestamp: 1000 });

test('an unknown producer may start at any sequence (KIP-360)', () => {
  const s = new ProducerStateMap();
  assert.deepEqual(s.check(7n, 0, 42, 45), { kind: 'append' });
});

test('in-sequence batches append, retries of the last five are duplicates with their offsets', () => {
  const s = new ProducerStateMap();
  for (let i = 0; i < 7; i++) {
    assert.equal(s.check(1n, 0, i * 10, i * 10 + 9).kind, 'append');
    s.update(1n, 0, batch(i * 10, i * 10 + 9, 100 + i * 10));
  }
  assert.deepEqual(s.check(1n, 0, 60, 69), { kind: 'duplicate', firstOffset: 160, lastOffset: 169 });
  assert.deepEqual(s.check(1n, 0, 20, 29), { kind: 'duplicate', firstOffset: 120, lastOffset: 129 });
  // Older than the five cached batches: no longer recognisable, so it is out of order.
  const old = s.check(1n, 0, 10, 19);
  assert.equal(old.kind, 'error');
  assert.equal(old.kind === 'error' && old.errorCode, ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER);
  assert.equal(s.producers.get(1n)!.batches.length, MAX_CACHED_BATCHES);
});

test('a gap is OUT_OF_ORDER_SEQUENCE_NUMBER, an older epoch INVALID_PRODUCER_EPOCH, a new epoch restarts at 0', () => {
  const s = new ProducerStateMap();
  s.update(1n, 3, batch(0, 4, 0));
  const gap = s.check(1n, 3, 6, 6);
  assert.equal(gap.kind === 'error' && gap.errorCode, ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER);
  const fenced = s.check(1n, 2, 5, 5);
  assert.equal(fenced.kind === 'error' && fenced.errorCode, ErrorCode.INVALID_PRODUCER_EPOCH);
  assert.equal(s.check(1n, 4, 0, 3).kind, 'append');
  const badNewEpoch = s.check(1n, 4, 5, 5);
  assert.equal(badNewEpoch.kind === 'error' && badNewEpoch.errorCode, ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER);
});

test('sequences wrap from Int32.MAX_VALUE to 0', () => {
  assert.equal(lastSequenceOf(0x7fffffff - 1, 3), 1);
  assert.equal(lastSequenceOf(5, 3), 8);
  const s = new ProducerStateMap();
  s.update(1n, 0, { firstSeq: 0x7ffffff0, lastSeq: 0x7fffffff, firstOffset: 0, lastOffset: 15, timestamp: 0 });
  assert.equal(s.check(1n, 0, 0, 4).kind, 'append');
});

test('property: any in-order stream appends, and replaying any of the last five is a duplicate', () => {
  fc.assert(
    fc.property(fc.array(fc.integer({ min: 1, max: 50 }), { minLength: 1, maxLength: 30 }), (sizes) => {
      const s = new ProducerStateMap();
      let seq = 0;
      let offset = 0;
      const sent: { first: number; last: number; offset: number }[] = [];
      for (const n of sizes) {
        assert.equal(s.check(9n, 1, seq, seq + n - 1).kind, 'append');
        s.update(9n, 1, { firstSeq: seq, lastSeq: seq + n - 1, firstOffset: offset, lastOffset: offset + n - 1, timestamp: 0 });
        sent.push({ first: seq, last: seq + n - 1, offset });
        seq += n;
        offset += n;
      }
      for (const b of sent.slice(-MAX_CACHED_BATCHES)) {
        const c = s.check(9n, 1, b.first, b.last);
        assert.equal(c.kind, 'duplicate');
        assert.equal(c.kind === 'duplicate' && c.firstOffset, b.offset);
      }
    }),
  );
});

test('expire forgets idle producers, truncateFrom drops batches past the new end', () => {
  const s = new ProducerStateMap();
  s.update(1n, 0, { ...batch(0, 0, 0), timestamp: 100 });
  s.update(2n, 0, { ...batch(0, 0, 1), timestamp: 5000 });
  assert.equal(s.expire(6000, 2000), 1);
  assert.deepEqual([...s.producers.keys()], [2n]);
  s.truncateFrom(1);
  assert.equal(s.size, 0);
});

test('snapshots round-trip, detect corruption, and the newest one not beyond the log end is loaded', async () => {
  const dir = await mkdtemp(path.join(tmpdir(), 'fjord-ps-'));
  try {
    const s = new ProducerStateMap();
    s.update(1n, 2, batch(0, 9, 0));
    s.update(1n, 2, batch(10, 19, 10));
    s.update(123456789012n, 0, batch(5, 5, 20));
    const round = decodeSnapshot(encodeSnapshot(s));
    assert.deepEqual([...round.producers.entries()], [...s.producers.entries()]);
    const bad = encodeSnapshot(s);
    bad[10] ^= 0xff;
    assert.throws(() => decodeSnapshot(bad), /CRC/);

    await writeSnapshot(dir, 21, s);
    s.update(1n, 2, batch(20, 29, 21));
    await writeSnapshot(dir, 31, s);
    const loaded = await loadLatestSnapshot(dir, 25, () => undefined);
    assert.equal(loaded!.offset, 21);
    assert.equal(loaded!.state.producers.get(1n)!.batches.length, 2);
    // The snapshot beyond the log end is gone.
    assert.deepEqual((await readdir(dir)).filter((n) => n.endsWith('.snapshot')), ['00000000000000000021.snapshot']);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
