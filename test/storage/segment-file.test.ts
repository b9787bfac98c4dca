/**
 * Segment files open lazily under a budget: more logs than the budget keep working (appends,
 * reads, rolls, truncation, flush, restart) while no more than the budget is ever open, a read in
 * flight keeps its descriptor, and a file replaced on disk is never reopened in its place.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync, readlinkSync } from 'node:fs';
import { rename, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { UnifiedLog } from '../../src/storage/log/unified-log.js';
import { LogManager } from '../../src/storage/manager/log-manager.js';
import { defaultOpenFileBudget, OpenFileBudget, SegmentFile, segmentFiles } from '../../src/storage/segment/segment-file.js';
import { CapturingLogger, makeBatch, readAll, testConfig, withTempDir } from './helpers.js';

/** Descriptors of this process that point at a `.log` file under `dir`. */
function openLogFiles(dir: string): number {
  let n = 0;
  for (const fd of readdirSync('/proc/self/fd')) {
    try {
      const target = readlinkSync(`/proc/self/fd/${fd}`);
      if (target.startsWith(dir) && /\.log( \(deleted\))?$/.test(target)) n++;
    } catch {
      // closed meanwhile
    }
  }
  return n;
}

test('the default budget is half the open-file limit', () => {
  const budget = defaultOpenFileBudget();
  assert.ok(budget >= 16);
  const m = /^Max open files\s+(\d+)/m.exec(readFileSync('/proc/self/limits', 'utf8'));
  if (m) assert.equal(budget, Math.max(16, Math.floor(Number(m[1]) / 2)));
});

test('60 logs under a budget of 5 files: appends and reads everywhere, never more than 5 (+1) open, and a restart reads them all', async () => {
  await withTempDir(async (dir) => {
    const logger = new CapturingLogger();
    const opts = {
      logDirs: [dir],
      defaults: testConfig({ segmentBytes: 400 }),
      logger,
      retentionCheckIntervalMs: 3600000,
      cleanerEnabled: false,
      maxOpenSegmentFiles: 5,
    };
    let mgr = await LogManager.open(opts);
    try {
      assert.equal(segmentFiles.limit, 5);
      const logs: UnifiedLog[] = [];
      for (let p = 0; p < 60; p++) logs.push(await mgr.createLog('many', p));
      assert.ok(openLogFiles(dir) <= 5, `${openLogFiles(dir)} .log files open after creating 60 logs`);
      const opensBefore = segmentFiles.opens;
      // Round-robin over every log, several rounds: each append or read may need a reopen.
      for (let round = 0; round < 6; round++) {
        for (const log of logs) {
          await log.append(makeBatch([`${log.partition}:${round}`]), { leaderEpoch: 0 });
          const back = await log.read(round, 1 << 20);
          assert.ok(back.records.length > 0, `read ${log.name} at ${round}`);
        }
        // The budget, plus one an append may reopen synchronously while the others are busy.
        assert.ok(openLogFiles(dir) <= 6, `round ${round}: ${openLogFiles(dir)} .log files open`);
        assert.ok(segmentFiles.openCount <= 6);
      }
      assert.ok(segmentFiles.opens - opensBefore > 60, 'files were closed and reopened on demand');
      // Segments rolled (segment.bytes 400) and are all readable; truncation and flush reopen too.
      assert.ok(logs[7]!.segments.length > 1, 'rolled');
      await logs[7]!.truncateTo(3);
      await Promise.all(logs.slice(0, 20).map((l) => l.flush()));
      for (const log of logs) {
        const want = log === logs[7] ? [0, 1, 2] : [0, 1, 2, 3, 4, 5];
        assert.deepEqual(
          (await readAll(log)).map((r) => r.value),
          want.map((r) => `${log.partition}:${r}`),
        );
      }
      await mgr.shutdown();
      assert.equal(openLogFiles(dir), 0, 'shutdown closes every segment file');
      mgr = await LogManager.open(opts);
      assert.ok(openLogFiles(dir) <= 5, `${openLogFiles(dir)} .log files open after a restart with 60 logs`);
      for (let p = 0; p < 60; p++) {
        const values = (await readAll(mgr.getLog('many', p)!)).map((r) => r.value);
        assert.equal(values.length, p === 7 ? 3 : 6, `many-${p} after restart`);
      }
    } finally {
      await mgr.shutdown();
      segmentFiles.limit = defaultOpenFileBudget();
    }
  });
});

test('a read in flight keeps its descriptor; a replaced file is not reopened; a renamed one is', async () => {
  await withTempDir(async (dir) => {
    const budget = new OpenFileBudget();
    budget.limit = 1;
    const a = SegmentFile.openNow(path.join(dir, 'a.log'), budget).file;
    await writeFile(path.join(dir, 'a.log'), 'aaaa');
    const buf = Buffer.alloc(4);
    const reading = a.read(buf, 0, 4, 0); // pinned until it settles
    const b = SegmentFile.openNow(path.join(dir, 'b.log'), budget).file;
    assert.equal(a.isOpen, true, 'the pinned file stays open past the budget');
    assert.equal((await reading).bytesRead, 4);
    assert.equal(buf.toString(), 'aaaa');
    const c = SegmentFile.openNow(path.join(dir, 'c.log'), budget).file;
    assert.equal(budget.openCount, 1, 'idle files closed down to the budget');
    assert.equal(c.isOpen, true);
    assert.equal(a.isOpen, false);

    // a.log replaced in place (as a cleaner swap does): the old segment must not read the new file.
    await writeFile(path.join(dir, 'a.new'), 'NEWNEW');
    await rename(path.join(dir, 'a.new'), path.join(dir, 'a.log'));
    await assert.rejects(a.read(Buffer.alloc(4), 0, 4, 0), (err: NodeJS.ErrnoException) => err.code === 'EBADF' && /replaced on disk/.test(err.message));

    // b.log renamed through its path: reopens under the new name.
    await writeFile(path.join(dir, 'b.log'), 'bbbb');
    await rename(path.join(dir, 'b.log'), path.join(dir, 'b.log.deleted'));
    b.path = path.join(dir, 'b.log.deleted');
    const bb = Buffer.alloc(4);
    assert.equal((await b.read(bb, 0, 4, 0)).bytesRead, 4);
    assert.equal(bb.toString(), 'bbbb');

    await b.close();
    await c.close();
    await assert.rejects(b.stat(), (err: NodeJS.ErrnoException) => err.code === 'EBADF');
    assert.equal(budget.openCount, 0);
  });
});
