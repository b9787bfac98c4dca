import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, readdir } from 'node:fs/promises';
import path from 'node:path';
import { CompressionType } from '../../src/protocol/records/batch-header.js';
import { CorruptRecordError, OffsetOutOfRangeError, RecordTooLargeError } from '../../src/storage/errors.js';
import { decodeAll, makeBatch, openLog, readAll, withTempDir } from './helpers.js';
import { flipByte } from '../helpers/corrupt.js';

test('append assigns offsets and reads back', async () => {
  await withTempDir(async (dir) => {
    await mkdir(path.join(dir, 'topic-0'));
    const log = await openLog(dir);
    const r1 = await log.append(makeBatch(['a', 'b', 'c']), { leaderEpoch: 0 });
    assert.deepEqual([r1.firstOffset, r1.lastOffset, r1.logAppendTime], [0, 2, -1]);
    const r2 = await log.append(makeBatch(['d']), { leaderEpoch: 1 });
    assert.equal(r2.firstOffset, 3);
    assert.equal(log.logEndOffset, 4);
    const all = await readAll(log);
    assert.deepEqual(
      all.map((r) => r.value),
      ['a', 'b', 'c', 'd'],
    );
    assert.deepEqual(
      all.map((r) => r.offset),
      [0, 1, 2, 3],
    );
    // A fetch inside a batch returns the whole batch.
    const mid = await log.read(1, 100000);
    assert.equal(mid.firstBatchOffset, 0);
    assert.equal(decodeAll(mid.records)[0]!.offset, 0);
    await assert.rejects(log.read(5, 100), OffsetOutOfRangeError);
    assert.equal((await log.read(4, 100)).records.length, 0);
    assert.deepEqual(log.epochs.all(), [
      { epoch: 0, startOffset: 0 },
      { epoch: 1, startOffset: 3 },
    ]);
    await log.close();
  });
});

test('read honours the byte limit, minOneBatch and the max offset', async () => {
  await withTempDir(async (dir) => {
    await mkdir(path.join(dir, 'topic-0'));
    const log = await openLog(dir);
    const b = makeBatch(['x'.repeat(100)]);
    for (let i = 0; i < 5; i++) await log.append(Buffer.from(b), { leaderEpoch: 0 });
    const one = await log.read(0, 10);
    assert.equal(one.records.length, b.length, 'first batch whole even above the limit');
    const none = await log.read(0, 10, { minOneBatch: false });
    assert.equal(none.records.length, 0);
    const two = await log.read(0, b.length * 2 + 5);
    assert.equal(two.records.length, b.length * 2);
    const hw = await log.read(0, 1 << 20, { maxOffset: 3 });
    assert.deepEqual(
      decodeAll(hw.records).map((r) => r.offset),
      [0, 1, 2],
    );
    await log.close();
  });
});

test('validation rejects corrupt and oversized batches', async () => {
  await withTempDir(async (dir) => {
    await mkdir(path.join(dir, 'topic-0'));
    const log = await openLog(dir, { maxMessageBytes: 200 });
    const bad = makeBatch(['hello']);
    flipByte(bad, bad.length - 1);
    await assert.rejects(log.append(bad, { leaderEpoch: 0 }), CorruptRecordError);
    await assert.rejects(log.append(makeBatch(['y'.repeat(300)]), { leaderEpoch: 0 }), RecordTooLargeError);
    await assert.rejects(log.append(makeBatch(['ok']).subarray(0, 30), { leaderEpoch: 0 }), CorruptRecordError);
    const wrongMagic = makeBatch(['m']);
    wrongMagic[16] = 1;
    await assert.rejects(log.append(wrongMagic, { leaderEpoch: 0 }), CorruptRecordError);
    assert.equal(log.logEndOffset, 0);
    await log.close();
  });
});

test('LogAppendTime stamps the batch', async () => {
  await withTempDir(async (dir) => {
    await mkdir(path.join(dir, 'topic-0'));
    const log = await openLog(dir, { messageTimestampType: 'LogAppendTime' });
    const res = await log.append(makeBatch(['a', 'b']), { leaderEpoch: 0, now: 1800000000000 });
    assert.equal(res.logAppendTime, 1800000000000);
    const all = await readAll(log);
    assert.deepEqual(
      all.map((r) => r.timestamp),
      [1800000000000, 1800000000000],
    );
    await log.close();
  });
});

test('segments roll on size and reads cross them', async () => {
  await withTempDir(async (dir) => {
    await mkdir(path.join(dir, 'topic-0'));
    const log = await openLog(dir, { segmentBytes: 1000, indexIntervalBytes: 100 });
    const values: string[] = [];
    for (let i = 0; i < 50; i++) {
      values.push(`value-${i}-${'z'.repeat(i)}`);
      await log.append(makeBatch([values[i]!], { compression: i % 3 === 0 ? CompressionType.Gzip : CompressionType.None }), { leaderEpoch: 0 });
    }
    assert.ok(log.segments.length > 3, `rolled into ${log.segments.length} segments`);
    const files = await readdir(path.join(dir, 'topic-0'));
    assert.ok(files.includes('00000000000000000000.log'));
    assert.deepEqual(
      (await readAll(log)).map((r) => r.value),
      values,
    );
    for (let i = 0; i < 50; i++) {
      const { records } = await log.read(i, 1);
      assert.equal(decodeAll(records)[0]!.offset, i);
    }
    await log.close();
  });
});

test('offsetForTimestamp and maxTimestampOffset', async () => {
  await withTempDir(async (dir) => {
    await mkdir(path.join(dir, 'topic-0'));
    const log = await openLog(dir, { segmentBytes: 500, indexIntervalBytes: 50 });
    for (let i = 0; i < 30; i++) {
      await log.append(
        makeBatch([
          { value: `v${i}`, timestamp: 1000 + i * 10 },
          { value: `w${i}`, timestamp: 1005 + i * 10 },
        ]),
        { leaderEpoch: 0 },
      );
    }
    assert.deepEqual(await log.offsetForTimestamp(0), { offset: 0, timestamp: 1000 });
    assert.deepEqual(await log.offsetForTimestamp(1003), { offset: 1, timestamp: 1005 });
    assert.deepEqual(await log.offsetForTimestamp(1100), { offset: 20, timestamp: 1100 });
    assert.deepEqual(await log.offsetForTimestamp(1101), { offset: 21, timestamp: 1105 });
    assert.equal(await log.offsetForTimestamp(99999), null);
    assert.deepEqual(await log.maxTimestampOffset(), { offset: 59, timestamp: 1295 });
    await log.close();
  });
});

test('deleteRecordsBefore, truncateTo and reopen', async () => {
  await withTempDir(async (dir) => {
    await mkdir(path.join(dir, 'topic-0'));
    let log = await openLog(dir, { segmentBytes: 400 });
    for (let i = 0; i < 20; i++) await log.append(makeBatch([`r${i}`]), { leaderEpoch: 0 });
    const segsBefore = log.segments.length;
    assert.equal(await log.deleteRecordsBefore(10), 10);
    assert.ok(log.segments.length < segsBefore);
    await assert.rejects(log.read(9, 100), OffsetOutOfRangeError);
    assert.equal((await readAll(log, 10))[0]!.value, 'r10');
    await log.truncateTo(15);
    assert.equal(log.logEndOffset, 15);
    const r = await log.append(makeBatch(['new']), { leaderEpoch: 2 });
    assert.equal(r.firstOffset, 15);
    await log.close();
    log = await openLog(dir, { segmentBytes: 400 }, { hadCleanShutdown: true, logStartOffset: 10 });
    assert.equal(log.logStartOffset, 10);
    assert.equal(log.logEndOffset, 16);
    assert.deepEqual(
      (await readAll(log)).map((x) => x.value),
      ['r10', 'r11', 'r12', 'r13', 'r14', 'new'],
    );
    await log.close();
  });
});

test('append event fires for long polls', async () => {
  await withTempDir(async (dir) => {
    await mkdir(path.join(dir, 'topic-0'));
    const log = await openLog(dir);
    const seen = new Promise<{ firstOffset: number; lastOffset: number }>((resolve) => log.once('append', resolve));
    await log.append(makeBatch(['a', 'b']), { leaderEpoch: 0 });
    assert.deepEqual(await seen, { firstOffset: 0, lastOffset: 1 });
    await log.close();
  });
});

test('a large append with a bad CRC is rejected after the overlapped write and leaves nothing behind', async () => {
  await withTempDir(async (dir) => {
    await mkdir(path.join(dir, 'topic-0'));
    const log = await openLog(dir, { maxMessageBytes: 4 << 20 });
    await log.append(makeBatch(['first']), { leaderEpoch: 0 });
    const sizeBefore = log.activeSegment.size;
    const big = makeBatch(Array.from({ length: 300 }, (_, i) => `${i}`.padEnd(1000, 'x')));
    assert.ok(big.length >= 128 * 1024);
    const bad = Buffer.from(big);
    flipByte(bad, bad.length - 10, 1);
    await assert.rejects(log.append(bad, { leaderEpoch: 0 }), CorruptRecordError);
    assert.equal((await log.activeSegment.file.stat()).size, sizeBefore);
    assert.equal(log.logEndOffset, 1);
    const ok = await log.append(big, { leaderEpoch: 0 });
    assert.deepEqual([ok.firstOffset, ok.lastOffset], [1, 300]);
    assert.equal((await readAll(log)).length, 301);
    await log.close();
  });
});
