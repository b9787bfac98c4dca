import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, readdir } from 'node:fs/promises';
import path from 'node:path';
import { LogSegment } from '../../src/storage/segment/log-segment.js';
import { baseOffsetOfFileName, segmentFileName } from '../../src/storage/segment/segment-names.js';
import { UnexpectedAppendOffsetError } from '../../src/storage/errors.js';
import { LogManager } from '../../src/storage/manager/log-manager.js';
import { decodeAll, makeBatch, openLog, readAll, testConfig, withTempDir } from './helpers.js';

test('segment file names are 20-digit base offsets', () => {
  assert.equal(segmentFileName(42, '.log'), '00000000000000000042.log');
  assert.equal(baseOffsetOfFileName('00000000000000000042.timeindex'), 42);
  assert.equal(baseOffsetOfFileName('leader-epoch-checkpoint'), undefined);
});

test('segment append indexes every index.interval.bytes and reads at batch boundaries', async () => {
  await withTempDir(async (dir) => {
    const seg = await LogSegment.open(dir, 100, { indexIntervalBytes: 150, segmentIndexBytes: 1024 }, Date.now());
    const batches: Buffer[] = [];
    for (let i = 0; i < 10; i++) {
      const b = makeBatch([`v${i}`.padEnd(80, '.')], { baseOffset: 100 + i, timestamp: 1000 + i });
      batches.push(b);
      seg.append(b, Date.now());
    }
    assert.equal(seg.nextOffset, 110);
    assert.equal(seg.maxTimestampSoFar, 1009);
    assert.ok(seg.offsetIndex.entries >= 3, `${seg.offsetIndex.entries} entries`);
    const hit = await seg.read(105, 1, seg.size, undefined, true);
    assert.equal(hit!.firstBatchOffset, 105);
    assert.equal(hit!.records.length, batches[5]!.length);
    assert.equal(await seg.read(110, 100, seg.size, undefined, true), undefined);
    const removed = await seg.truncateTo(107);
    assert.equal(removed, batches[7]!.length * 3);
    assert.equal(seg.nextOffset, 107);
    assert.equal(seg.maxTimestampSoFar, 1006);
    await seg.close();
  });
});

test('segment.ms and full indexes roll segments', async () => {
  await withTempDir(async (dir) => {
    await mkdir(path.join(dir, 'topic-0'));
    const log = await openLog(dir, { segmentMs: 1000 });
    await log.append(makeBatch([{ value: 'a', timestamp: 10000 }]), { leaderEpoch: 0 });
    await log.append(makeBatch([{ value: 'b', timestamp: 10500 }]), { leaderEpoch: 0 });
    assert.equal(log.segments.length, 1);
    await log.append(makeBatch([{ value: 'c', timestamp: 11001 }]), { leaderEpoch: 0 });
    assert.equal(log.segments.length, 2, 'rolled on age');
    assert.equal(log.activeSegment.baseOffset, 2);
    await log.close();
    await mkdir(path.join(dir, 'x', 'topic-0'), { recursive: true });
    const small = await openLog(path.join(dir, 'x'), { segmentIndexBytes: 16, indexIntervalBytes: 0 });
    for (let i = 0; i < 8; i++) await small.append(makeBatch([`v${i}`]), { leaderEpoch: 0 });
    assert.ok(small.segments.length >= 3, `rolled on full index: ${small.segments.length}`);
    assert.deepEqual(
      (await readAll(small)).map((r) => r.value),
      ['v0', 'v1', 'v2', 'v3', 'v4', 'v5', 'v6', 'v7'],
    );
    await small.close();
  });
});

test('replica appends keep their offsets and must move forward', async () => {
  await withTempDir(async (dir) => {
    await mkdir(path.join(dir, 'topic-0'));
    const log = await openLog(dir);
    const b = makeBatch(['x', 'y'], { baseOffset: 0 });
    b.writeInt32BE(4, 12); // partition leader epoch stamped by the leader
    const r = await log.append(b, { leaderEpoch: -1, assignOffsets: false });
    assert.deepEqual([r.firstOffset, r.lastOffset], [0, 1]);
    await assert.rejects(log.append(makeBatch(['z'], { baseOffset: 1 }), { leaderEpoch: -1, assignOffsets: false }), UnexpectedAppendOffsetError);
    await log.append(makeBatch(['z'], { baseOffset: 5 }), { leaderEpoch: -1, assignOffsets: false });
    assert.equal(log.logEndOffset, 6);
    assert.deepEqual(log.epochs.all()[0], { epoch: 4, startOffset: 0 });
    assert.deepEqual(
      decodeAll((await log.read(2, 1000)).records).map((x) => x.offset),
      [5],
    );
    await log.close();
  });
});

test('flush.messages advances the recovery point; flush.ms is applied by the manager', async () => {
  await withTempDir(async (dir) => {
    await mkdir(path.join(dir, 'topic-0'));
    const log = await openLog(dir, { flushMessages: 3 });
    await log.append(makeBatch(['a', 'b']), { leaderEpoch: 0 });
    assert.equal(log.recoveryPoint, 0);
    await log.append(makeBatch(['c']), { leaderEpoch: 0 });
    assert.equal(log.recoveryPoint, 3);
    await log.close();
    const mgr = await LogManager.open({
      logDirs: [path.join(dir, 'm')],
      defaults: testConfig({ flushMs: 10 }),
      cleanerEnabled: false,
      flushCheckIntervalMs: 5,
    });
    const timed = await mgr.createLog('t', 0);
    await timed.append(makeBatch(['x']), { leaderEpoch: 0 });
    const deadline = Date.now() + 15_000;
    while (timed.recoveryPoint < 1 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 5));
    assert.equal(timed.recoveryPoint, 1);
    await mgr.shutdown();
  });
});

test('deleted segments are renamed .deleted and removed after file.delete.delay.ms', async () => {
  await withTempDir(async (dir) => {
    await mkdir(path.join(dir, 'topic-0'));
    // The delay must outlast the read below even on a loaded machine (50 ms did not, under load).
    const log = await openLog(dir, { segmentBytes: 200, fileDeleteDelayMs: 1500 });
    for (let i = 0; i < 6; i++) await log.append(makeBatch([`r${i}`.padEnd(60, '-')]), { leaderEpoch: 0 });
    const reader = log.segments[0]!;
    await log.deleteRecordsBefore(log.activeSegment.baseOffset);
    const names = await readdir(log.dir);
    assert.ok(
      names.some((n) => n.endsWith('.log.deleted')),
      names.join(','),
    );
    // A read that started before the deletion can still use the old segment.
    assert.ok((await reader.read(0, 1000, reader.size, undefined, true))!.records.length > 0);
    const deadline = Date.now() + 15_000;
    while ((await readdir(log.dir)).some((n) => n.endsWith('.deleted')) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
    assert.ok(!(await readdir(log.dir)).some((n) => n.endsWith('.deleted')));
    await log.close();
  });
});
