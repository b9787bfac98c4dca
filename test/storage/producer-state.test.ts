import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import { crc32c } from '@node-rs/crc32';
import { ErrorCode } from '../../src/protocol/errors.js';
import { lastSequenceOf, ProducerStateMap, MAX_CACHED_BATCHES, type BatchMetadata } from '../../src/storage/log/producer-state/producer-state.js';
import { decodeSnapshot, encodeSnapshot, loadLatestSnapshot, writeSnapshot } from '../../src/storage/log/producer-state/producer-state-snapshot.js';
import { flipByte } from '../helpers/corrupt.js';

const batch = (firstSeq: number, lastSeq: number, firstOffset: number) => ({
  firstSeq,
  lastSeq,
  firstOffset,
  lastOffset: firstOffset + lastSeq - firstSeq,
  timestamp: 1000,
});

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

test("a coordinator's batches (no sequence) are checked for their epoch only, never refused as out of order nor dropped as duplicates", () => {
  // The group coordinator writes each TxnOffsetCommit as a transactional batch with sequence -1
  // (as Kafka does); two of the same size used to be taken for a retry and dropped, other sizes
  // refused with OUT_OF_ORDER_SEQUENCE_NUMBER (send_offsets_to_transaction failed).
  const s = new ProducerStateMap();
  s.update(4n, 0, { firstSeq: -1, lastSeq: 0, firstOffset: 0, lastOffset: 1, timestamp: 0 }, true);
  assert.deepEqual(s.check(4n, 0, -1, 0, true, false), { kind: 'append' });
  assert.deepEqual(s.check(4n, 0, -1, 2, true, false), { kind: 'append' });
  assert.deepEqual(s.check(4n, 1, -1, 0, true, false), { kind: 'append' });
  const stale = s.check(4n, 0, -1, 0, true, false);
  s.update(4n, 1, { firstSeq: -1, lastSeq: -1, firstOffset: 2, lastOffset: 2, timestamp: 0 }, true);
  assert.equal(stale.kind, 'append');
  const fenced = s.check(4n, 0, -1, 0, true, false);
  assert.equal(fenced.kind === 'error' && fenced.errorCode, ErrorCode.INVALID_PRODUCER_EPOCH);
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
    flipByte(bad, 10);
    assert.throws(() => decodeSnapshot(bad), /CRC/);

    await writeSnapshot(dir, 21, s);
    s.update(1n, 2, batch(20, 29, 21));
    await writeSnapshot(dir, 31, s);
    const loaded = await loadLatestSnapshot(dir, 25, () => undefined);
    assert.equal(loaded!.offset, 21);
    assert.equal(loaded!.state.producers.get(1n)!.batches.length, 2);
    // The snapshot beyond the log end is gone.
    assert.deepEqual(
      (await readdir(dir)).filter((n) => n.endsWith('.snapshot')),
      ['00000000000000000021.snapshot'],
    );
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

// ---- Transactions (issue 14) ----------------------------------------------------------------

const meta = (firstOffset: number, lastOffset: number, firstSeq = firstOffset): BatchMetadata => ({
  firstSeq,
  lastSeq: firstSeq + lastOffset - firstOffset,
  firstOffset,
  lastOffset,
  timestamp: 1,
});

test('transactions: the first transactional batch opens one; markers close it; the LSO waits for the earliest open one and for markers below the HW', () => {
  const s = new ProducerStateMap();
  assert.equal(s.firstUnstableOffset(), undefined);
  s.update(1n, 0, meta(10, 14), true);
  s.update(2n, 0, meta(15, 16), true);
  s.update(1n, 0, meta(17, 18, 5), true);
  assert.equal(s.producers.get(1n)!.currentTxnFirstOffset, 10, 'a later batch of the same transaction does not move its start');
  assert.equal(s.firstUnstableOffset(), 10);
  const aborted = s.completeTxn(1n, 0, 19, true, 3, 2);
  assert.deepEqual(
    aborted,
    { producerId: 1n, firstOffset: 10, lastOffset: 19, aborted: true, lastStableOffset: 15 },
    'LSO at the abort: producer 2 is still open from 15',
  );
  assert.equal(s.firstUnstableOffset(), 10, 'the marker is not below the high watermark yet');
  s.onHighWatermark(20);
  assert.equal(s.firstUnstableOffset(), 15);
  const committed = s.completeTxn(2n, 0, 20, false, 3, 2);
  assert.equal(committed.lastStableOffset, 21, 'nothing else open: the marker + 1');
  s.onHighWatermark(21);
  assert.equal(s.firstUnstableOffset(), undefined);
  assert.equal(s.producers.get(1n)!.coordinatorEpoch, 3);
});

test('transactions: a plain batch during an open transaction is INVALID_TXN_STATE; markers from an old producer epoch or coordinator are fenced', () => {
  const s = new ProducerStateMap();
  s.update(1n, 2, meta(0, 4), true);
  const plain = s.check(1n, 2, 5, 5, false);
  assert.equal(plain.kind === 'error' && plain.errorCode, ErrorCode.INVALID_TXN_STATE);
  assert.equal(s.check(1n, 2, 5, 5, true).kind, 'append');
  assert.equal(s.checkMarker(1n, 1, 0)?.errorCode, ErrorCode.INVALID_PRODUCER_EPOCH);
  s.completeTxn(1n, 2, 5, false, 4, 1);
  assert.equal(s.checkMarker(1n, 2, 3)?.errorCode, ErrorCode.TRANSACTION_COORDINATOR_FENCED);
  assert.equal(s.checkMarker(1n, 3, 4), undefined, 'a bumped epoch (fencing abort) may write');
  assert.equal(s.check(1n, 2, 5, 5, false).kind, 'append', 'closed: plain batches are fine again');
});

test('transactions: truncation reopens a transaction whose marker was cut and forgets one that began beyond the cut', () => {
  const s = new ProducerStateMap();
  s.update(1n, 0, meta(0, 4), true);
  s.completeTxn(1n, 0, 5, false, 0, 1);
  s.update(2n, 0, meta(6, 8), true);
  s.truncateFrom(5);
  assert.equal(s.producers.get(1n)!.currentTxnFirstOffset, 0, 'its data survived, its commit did not: open again');
  assert.equal(s.producers.has(2n), false);
  assert.equal(s.firstUnstableOffset(), 0);
});

test('transactions: an open transaction survives a snapshot (version 2), keeps its producer from expiring, and version 1 snapshots still load', () => {
  const s = new ProducerStateMap();
  s.update(1n, 0, meta(3, 4), true);
  s.completeTxn(1n, 0, 5, true, 7, 1);
  s.update(1n, 0, meta(6, 6, 2), true);
  const back = decodeSnapshot(encodeSnapshot(s));
  assert.equal(back.producers.get(1n)!.currentTxnFirstOffset, 6);
  assert.equal(back.producers.get(1n)!.coordinatorEpoch, 7);
  assert.equal(back.expire(1_000_000, 10), 0, 'open transaction: not expired');
  // A version-1 snapshot, written before transactions existed: one producer, one batch.
  const body = Buffer.alloc(4 + 1 + 4 + 19 + 32);
  body.write('FJPS', 0);
  body.writeUInt8(1, 4);
  body.writeInt32BE(1, 5);
  body.writeBigInt64BE(9n, 9);
  body.writeInt16BE(2, 17);
  body.writeBigInt64BE(5n, 19);
  body.writeUInt8(1, 27);
  body.writeInt32BE(0, 28);
  body.writeInt32BE(3, 32);
  body.writeBigInt64BE(100n, 36);
  body.writeBigInt64BE(103n, 44);
  body.writeBigInt64BE(5n, 52);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32c(body));
  const v1 = decodeSnapshot(Buffer.concat([body, crc]));
  assert.deepEqual(v1.producers.get(9n), {
    producerId: 9n,
    epoch: 2,
    lastTimestamp: 5,
    currentTxnFirstOffset: -1,
    coordinatorEpoch: -1,
    batches: [{ firstSeq: 0, lastSeq: 3, firstOffset: 100, lastOffset: 103, timestamp: 5 }],
  });
});
