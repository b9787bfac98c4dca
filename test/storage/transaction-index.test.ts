/**
 * The `.txnindex` of a segment: Kafka's 34-byte entries, the overlap query read_committed
 * fetches make, truncation, and refusal of files that are not whole, ordered entries.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { mkdir, readFile, writeFile, stat } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { TransactionIndex, TransactionIndexError, TXN_INDEX_ENTRY, encodeAbortedTxn } from '../../src/storage/segment/transaction-index.js';
import { makeBatch, openLog, withTempDir } from './helpers.js';
import { collectAbortedTxns, recordAbortedTxn } from '../../src/storage/log/aborted-txns.js';

test("transaction index: Kafka's entry layout, appended in order, read back after reopening", async () => {
  await withTempDir(async (dir) => {
    const file = path.join(dir, '00000000000000000000.txnindex');
    const idx = new TransactionIndex(file, 0);
    await idx.load();
    assert.equal(idx.size, 0);
    assert.equal(existsSync(file), false, 'no file until an abort is recorded');
    await idx.append({ producerId: 7n, firstOffset: 3, lastOffset: 9, lastStableOffset: 3 });
    await idx.append({ producerId: 8n, firstOffset: 5, lastOffset: 12, lastStableOffset: 10 });
    await idx.close();
    const bytes = await readFile(file);
    assert.equal(bytes.length, 2 * TXN_INDEX_ENTRY);
    // version 0, then producer id, first, last and last stable offsets as int64.
    assert.equal(bytes.readInt16BE(0), 0);
    assert.equal(bytes.readBigInt64BE(2), 7n);
    assert.equal(bytes.readBigInt64BE(10), 3n);
    assert.equal(bytes.readBigInt64BE(18), 9n);
    assert.equal(bytes.readBigInt64BE(26), 3n);
    const again = new TransactionIndex(file, 0);
    await again.load();
    assert.deepEqual(again.all(), [
      { producerId: 7n, firstOffset: 3, lastOffset: 9, lastStableOffset: 3 },
      { producerId: 8n, firstOffset: 5, lastOffset: 12, lastStableOffset: 10 },
    ]);
    await assert.rejects(
      again.append({ producerId: 9n, firstOffset: 1, lastOffset: 11, lastStableOffset: 11 }),
      TransactionIndexError,
      'markers come in offset order',
    );
    await again.close();
  });
});

test('transaction index: a fetch range gets the aborts that overlap it; complete once the LSO at an abort passed the bound', async () => {
  await withTempDir(async (dir) => {
    const idx = new TransactionIndex(path.join(dir, 'x.txnindex'), 0);
    await idx.append({ producerId: 1n, firstOffset: 0, lastOffset: 4, lastStableOffset: 0 });
    await idx.append({ producerId: 2n, firstOffset: 2, lastOffset: 20, lastStableOffset: 5 });
    await idx.append({ producerId: 3n, firstOffset: 21, lastOffset: 30, lastStableOffset: 25 });
    const ids = (r: { aborted: { producerId: bigint }[] }): bigint[] => r.aborted.map((t) => t.producerId);
    assert.deepEqual(ids(idx.collectAbortedTxns(5, 10)), [2n], 'ended before 5: not reported; began before 10: reported');
    assert.equal(idx.collectAbortedTxns(5, 10).complete, true, 'a later abort was written with the LSO past 10');
    assert.deepEqual(idx.collectAbortedTxns(5, 30), { aborted: idx.all().slice(1), complete: false }, 'a later segment may still hold aborts below 30');
    assert.deepEqual(ids(idx.collectAbortedTxns(0, 22)), [1n, 2n, 3n]);
    const done = idx.collectAbortedTxns(0, 25);
    assert.equal(done.complete, true, 'the third abort was written with the LSO at 25');
    assert.deepEqual(ids(idx.collectAbortedTxns(31, 40)), []);
    await idx.close();
  });
});

test('transaction index: truncation drops aborts whose marker is cut, and the file with the last one', async () => {
  await withTempDir(async (dir) => {
    const file = path.join(dir, 'y.txnindex');
    const idx = new TransactionIndex(file, 0);
    await idx.append({ producerId: 1n, firstOffset: 0, lastOffset: 4, lastStableOffset: 0 });
    await idx.append({ producerId: 2n, firstOffset: 5, lastOffset: 9, lastStableOffset: 5 });
    await idx.truncateTo(9);
    assert.equal(idx.size, 1);
    assert.equal((await stat(file)).size, TXN_INDEX_ENTRY);
    await idx.append({ producerId: 3n, firstOffset: 6, lastOffset: 8, lastStableOffset: 5 });
    assert.equal((await stat(file)).size, 2 * TXN_INDEX_ENTRY, 'appends go on after a rewrite');
    await idx.truncateTo(4);
    assert.equal(idx.size, 0);
    assert.equal(existsSync(file), false);
    await idx.close();
  });
});

test('transaction index: a torn entry, an unknown version or entries out of order are refused (rebuild it)', async () => {
  await withTempDir(async (dir) => {
    const file = path.join(dir, 'z.txnindex');
    const a = encodeAbortedTxn({ producerId: 1n, firstOffset: 10, lastOffset: 14, lastStableOffset: 10 });
    const b = encodeAbortedTxn({ producerId: 2n, firstOffset: 0, lastOffset: 3, lastStableOffset: 0 });
    for (const [what, data] of [
      ['torn', a.subarray(0, 20)],
      ['version', Buffer.concat([Buffer.from([0, 9]), a.subarray(2)])],
      ['order', Buffer.concat([a, b])],
    ] as const) {
      await writeFile(file, data);
      await assert.rejects(new TransactionIndex(file, 0).load(), TransactionIndexError, what);
    }
  });
});

test('segments: an abort is recorded in the segment of its marker, found across segments, cut by truncation, dropped with its segment, and reloaded on reopen', async () => {
  await withTempDir(async (dir) => {
    await mkdir(path.join(dir, 'topic-0'));
    const log = await openLog(dir, { segmentBytes: 1024 });
    for (let i = 0; i < 40; i++) await log.append(makeBatch([`r${i}`.padEnd(40, '.')]), { leaderEpoch: 0 });
    assert.ok(log.segments.length >= 3, `several segments (${log.segments.length})`);
    const second = log.segments[1]!;
    const marker = second.baseOffset + 1;
    await recordAbortedTxn(log.segments, { producerId: 5n, firstOffset: 2, lastOffset: marker, lastStableOffset: 2 }, false);
    const last = log.logEndOffset - 1;
    await recordAbortedTxn(log.segments, { producerId: 6n, firstOffset: last - 3, lastOffset: last, lastStableOffset: last - 3 }, false);
    await recordAbortedTxn(log.segments, { producerId: 6n, firstOffset: last - 3, lastOffset: last, lastStableOffset: last - 3 }, true);
    assert.equal(second.txnIndex.size, 1, 'in the segment holding the marker');
    assert.equal(log.activeSegment.txnIndex.size, 1, 'a replayed abort already there is not added twice');
    assert.deepEqual(
      collectAbortedTxns(log.segments, 0, log.logEndOffset).map((t) => t.producerId),
      [5n, 6n],
    );
    assert.deepEqual(
      collectAbortedTxns(log.segments, marker + 1, log.logEndOffset).map((t) => t.producerId),
      [6n],
    );
    await log.close();
    const again = await openLog(dir, { segmentBytes: 1024 });
    assert.deepEqual(
      collectAbortedTxns(again.segments, 0, again.logEndOffset).map((t) => t.producerId),
      [5n, 6n],
      'reloaded from the .txnindex files',
    );
    await again.truncateTo(last);
    assert.deepEqual(
      collectAbortedTxns(again.segments, 0, again.logEndOffset).map((t) => t.producerId),
      [5n],
      "the cut marker's abort is gone",
    );
    const txnFile = again.segments[1]!.txnIndex.file;
    assert.ok(existsSync(txnFile));
    await again.deleteOldSegments((seg) => seg.baseOffset <= again.segments[1]!.baseOffset, 'test');
    assert.deepEqual(collectAbortedTxns(again.segments, 0, again.logEndOffset), []);
    await again.close();
  });
});
