import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { access, mkdir, readFile, readdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { readOffsetCheckpoint } from '../../src/storage/checkpoint/checkpoint-files.js';
import { KafkaStorageError, LogDirLockedError } from '../../src/storage/errors.js';
import { LogManager } from '../../src/storage/manager/log-manager.js';
import { CapturingLogger, makeBatch, readAll, testConfig, withTempDir } from './helpers.js';

const open = (dirs: string[], logger = new CapturingLogger(), clock?: () => number) =>
  LogManager.open({ logDirs: dirs, defaults: testConfig(), logger, retentionCheckIntervalMs: 3600000, cleanerEnabled: false, clock });

test('a second manager on the same directory is refused; a stale lock is taken over', async () => {
  await withTempDir(async (dir) => {
    const first = await open([dir]);
    await assert.rejects(open([dir]), (err: unknown) => err instanceof LogDirLockedError && /Failed to acquire lock on file \.lock/.test(err.message));
    await first.shutdown();
    const dead = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))']).stdout.toString();
    await writeFile(path.join(dir, '.lock'), `${dead}\n`);
    const second = await open([dir]);
    assert.equal((await readFile(path.join(dir, '.lock'), 'utf8')).trim(), String(process.pid));
    await second.shutdown();
    await assert.rejects(access(path.join(dir, '.lock')));
  });
});

test('shutdown writes checkpoints and the clean marker; restart skips recovery and keeps data', async () => {
  await withTempDir(async (dir) => {
    let mgr = await open([dir]);
    const log = await mgr.createLog('orders', 3, { segmentBytes: 300 });
    for (let i = 0; i < 10; i++) await log.append(makeBatch([`m${i}`]), { leaderEpoch: 0 });
    await log.deleteRecordsBefore(4);
    log.updateHighWatermark(10);
    await mgr.shutdown();
    assert.ok((await readdir(dir)).includes('.kafka_cleanshutdown'));
    assert.equal((await readOffsetCheckpoint(path.join(dir, 'recovery-point-offset-checkpoint'))).get('orders-3'), 10);
    assert.equal((await readOffsetCheckpoint(path.join(dir, 'log-start-offset-checkpoint'))).get('orders-3'), 4);
    assert.match(await readFile(path.join(dir, 'replication-offset-checkpoint'), 'utf8'), /^0\n1\norders 3 10\n$/);
    const logger = new CapturingLogger();
    mgr = await open([dir], logger);
    assert.ok(logger.lines.some((l) => l.includes('(clean shutdown)')));
    assert.ok(!(await readdir(dir)).includes('.kafka_cleanshutdown'), 'marker removed once running');
    const again = mgr.getLog('orders', 3)!;
    assert.equal(again.logStartOffset, 4);
    assert.deepEqual(
      (await readAll(again)).map((r) => r.value),
      ['m4', 'm5', 'm6', 'm7', 'm8', 'm9'],
    );
    assert.equal(mgr.checkpointedHighWatermark('orders', 3), 10);
    const state = mgr.logDirsState();
    assert.equal(state[0]!.online, true);
    assert.equal(state[0]!.logs[0]!.topic, 'orders');
    await mgr.deleteLog('orders', 3);
    assert.equal(mgr.getLog('orders', 3), undefined);
    assert.equal(mgr.allLogs().length, 0);
    await mgr.shutdown();
  });
});

test('meta.properties is written once when the broker supplies it', async () => {
  await withTempDir(async (dir) => {
    const mgr = await LogManager.open({ logDirs: [dir], defaults: testConfig(), cleanerEnabled: false, metaProperties: { version: '0', 'broker.id': '7' } });
    await mgr.shutdown();
    assert.match(await readFile(path.join(dir, 'meta.properties'), 'utf8'), /broker\.id=7/);
    const again = await LogManager.open({ logDirs: [dir], defaults: testConfig(), cleanerEnabled: false, metaProperties: { version: '0', 'broker.id': '8' } });
    await again.shutdown();
    assert.match(await readFile(path.join(dir, 'meta.properties'), 'utf8'), /broker\.id=7/, 'existing file kept');
  });
});

test('many logs recover in parallel and pick up per-topic config at start-up', async () => {
  await withTempDir(async (dir) => {
    let mgr = await open([dir]);
    for (let p = 0; p < 12; p++) await (await mgr.createLog(p % 2 ? 'compacted' : 'plain', p)).append(makeBatch([`p${p}`]), { leaderEpoch: 0 });
    await mgr.shutdown();
    mgr = await LogManager.open({
      logDirs: [dir],
      defaults: testConfig(),
      cleanerEnabled: false,
      recoveryThreads: 3,
      topicConfig: (topic) => (topic === 'compacted' ? { cleanupPolicy: ['compact'] } : undefined),
    });
    assert.equal(mgr.allLogs().length, 12);
    assert.deepEqual(mgr.getLog('compacted', 1)!.config.cleanupPolicy, ['compact']);
    assert.deepEqual(mgr.getLog('plain', 2)!.config.cleanupPolicy, ['delete']);
    assert.deepEqual(
      (await readAll(mgr.getLog('plain', 4)!)).map((r) => r.value),
      ['p4'],
    );
    await mgr.shutdown();
  });
});

test('missing or garbage checkpoints at start-up are survived', async () => {
  await withTempDir(async (dir) => {
    let mgr = await open([dir]);
    const log = await mgr.createLog('t', 0);
    await log.append(makeBatch(['a', 'b']), { leaderEpoch: 0 });
    await mgr.shutdown();
    await writeFile(path.join(dir, 'recovery-point-offset-checkpoint'), 'garbage\n');
    await writeFile(path.join(dir, 'log-start-offset-checkpoint'), '0\n5\nt 0 1\n');
    await writeFile(path.join(dir, 't-0', 'leader-epoch-checkpoint'), 'zzz');
    const logger = new CapturingLogger();
    mgr = await open([dir], logger);
    assert.deepEqual(
      (await readAll(mgr.getLog('t', 0)!)).map((r) => r.value),
      ['a', 'b'],
    );
    assert.ok(logger.lines.filter((l) => l.startsWith('WARN')).length >= 3, logger.lines.join('\n'));
    await mgr.shutdown();
  });
});

test('an unusable log directory goes offline while the others serve', async () => {
  await withTempDir(async (dir) => {
    const bad = path.join(dir, 'not-a-dir');
    await writeFile(bad, 'x');
    const good = path.join(dir, 'good');
    const logger = new CapturingLogger();
    const mgr = await open([bad, good], logger);
    const state = mgr.logDirsState();
    assert.deepEqual(
      state.map((s) => s.online),
      [false, true],
    );
    assert.equal(logger.lines.filter((l) => l.startsWith('ERROR') && l.includes(bad)).length, 1);
    const log = await mgr.createLog('t', 1);
    assert.ok(log.dir.startsWith(good));
    await log.append(makeBatch(['ok']), { leaderEpoch: 0 });
    await mgr.shutdown();
  });
});

test('ENOSPC during append: typed error, nothing torn, appends resume', async () => {
  await withTempDir(async (dir) => {
    const mgr = await open([dir]);
    const log = await mgr.createLog('t', 0);
    await log.append(makeBatch(['one']), { leaderEpoch: 0 });
    const seg = log.activeSegment;
    const sizeBefore = seg.size;
    const realWrite = seg.writeAt;
    // Simulate a disk that fills mid-write: part of the batch lands, then ENOSPC.
    seg.writeAt = (buf: Buffer, position: number) => {
      realWrite(buf.subarray(0, 10), position);
      throw Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' });
    };
    await assert.rejects(log.append(makeBatch(['two']), { leaderEpoch: 0 }), KafkaStorageError);
    assert.equal((await seg.file.stat()).size, sizeBefore, 'partial write cut back');
    assert.equal(log.logEndOffset, 1);
    assert.equal(mgr.logDirsState()[0]!.online, true, 'a full disk does not take the dir offline');
    seg.writeAt = realWrite;
    const r = await log.append(makeBatch(['three']), { leaderEpoch: 0 });
    assert.equal(r.firstOffset, 1);
    assert.deepEqual(
      (await readAll(log)).map((x) => x.value),
      ['one', 'three'],
    );
    await mgr.shutdown();
  });
});

test('an EIO takes the directory offline and later calls fail with KafkaStorageError', async () => {
  await withTempDir(async (dir) => {
    const logger = new CapturingLogger();
    const mgr = await open([dir], logger);
    const log = await mgr.createLog('t', 0);
    log.activeSegment.writeAt = () => {
      throw Object.assign(new Error('EIO: i/o error, write'), { code: 'EIO' });
    };
    await assert.rejects(log.append(makeBatch(['x']), { leaderEpoch: 0 }), KafkaStorageError);
    assert.equal(mgr.logDirsState()[0]!.online, false);
    await assert.rejects(log.read(0, 100), KafkaStorageError);
    assert.equal(logger.lines.filter((l) => l.startsWith('ERROR')).length, 1);
    await mgr.shutdown();
  });
});

test('retention by time and size deletes whole segments and moves the log start', async () => {
  await withTempDir(async (dir) => {
    let now = 1700000000000;
    const mgr = await open([dir], new CapturingLogger(), () => now);
    const log = await mgr.createLog('t', 0, { segmentBytes: 250, retentionMs: 60000 });
    for (let i = 0; i < 12; i++) await log.append(makeBatch([{ value: `v${i}`, timestamp: now - 120000 + i }]), { leaderEpoch: 0 });
    for (let i = 0; i < 3; i++) await log.append(makeBatch([{ value: `new${i}`, timestamp: now }]), { leaderEpoch: 0 });
    const deleted = await mgr.runRetention();
    assert.ok(deleted > 0);
    assert.ok(log.logStartOffset > 0 && log.logStartOffset <= 12);
    const left = (await readAll(log)).map((r) => r.value);
    assert.ok(left.includes('new0') && left.includes('new2'));
    log.updateConfig({ retentionMs: -1, retentionBytes: 250 });
    await mgr.runRetention();
    assert.ok(log.size <= 250 + log.activeSegment.size);
    now += 1;
    const files = await readdir(log.dir);
    assert.ok(files.filter((f) => f.endsWith('.log')).length === log.segments.length || files.some((f) => f.endsWith('.deleted')));
    await mgr.shutdown();
  });
});

const enospc = (): Error => Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC', errno: -28 });

test('every failed append on a full disk is logged, at most one line per directory per interval with the count of the others; reads keep working', async () => {
  await withTempDir(async (dir) => {
    let now = 1700000000000;
    const logger = new CapturingLogger();
    const mgr = await open([dir], logger, () => now);
    const a = await mgr.createLog('a', 0);
    const b = await mgr.createLog('b', 1);
    await a.append(makeBatch(['stored']), { leaderEpoch: 0 });
    const writes = [a.activeSegment.writeAt, b.activeSegment.writeAt];
    a.activeSegment.writeAt = () => {
      throw enospc();
    };
    b.activeSegment.writeAt = a.activeSegment.writeAt;
    const failureLines = () => logger.lines.filter((l) => l.includes('ENOSPC'));
    for (let i = 0; i < 5; i++) {
      await assert.rejects(a.append(makeBatch([`x${i}`]), { leaderEpoch: 0 }), KafkaStorageError);
      await assert.rejects(b.append(makeBatch([`y${i}`]), { leaderEpoch: 0 }), KafkaStorageError);
    }
    assert.equal(failureLines().length, 1, logger.lines.join('\n'));
    const first = failureLines()[0]!;
    assert.match(first, /^ERROR /);
    assert.ok(first.includes(dir) && first.includes('a-0') && first.includes('ENOSPC'), first);
    // Reads of stored data keep working while appends fail.
    assert.deepEqual(
      (await readAll(a)).map((r) => r.value),
      ['stored'],
    );
    now += 10_000;
    await assert.rejects(b.append(makeBatch(['later']), { leaderEpoch: 0 }), KafkaStorageError);
    assert.equal(failureLines().length, 2, logger.lines.join('\n'));
    assert.ok(failureLines()[1]!.includes('b-1') && failureLines()[1]!.includes('9 more failed appends'), failureLines()[1]);
    assert.equal(mgr.logDirsState()[0]!.online, true);
    a.activeSegment.writeAt = writes[0]!;
    b.activeSegment.writeAt = writes[1]!;
    assert.equal((await a.append(makeBatch(['after']), { leaderEpoch: 0 })).firstOffset, 1);
    assert.ok(
      logger.lines.some((l) => l.startsWith('INFO') && l.includes(dir) && l.includes('again')),
      logger.lines.join('\n'),
    );
    await mgr.shutdown();
  });
});

test('the clean shutdown marker is not written when the final flush failed; the next start recovers', async () => {
  await withTempDir(async (dir) => {
    const logger = new CapturingLogger();
    let mgr = await open([dir], logger);
    const log = await mgr.createLog('t', 0);
    await log.append(makeBatch(['kept']), { leaderEpoch: 0 });
    log.activeSegment.flush = () => Promise.reject(enospc());
    await mgr.shutdown();
    assert.ok(!(await readdir(dir)).includes('.kafka_cleanshutdown'), 'no clean marker after a failed final flush');
    assert.ok(
      logger.lines.some((l) => l.includes('not writing the clean shutdown marker') && l.includes('t-0')),
      logger.lines.join('\n'),
    );
    const again = new CapturingLogger();
    mgr = await open([dir], again);
    assert.ok(
      again.lines.some((l) => l.includes('(unclean shutdown)')),
      again.lines.join('\n'),
    );
    assert.deepEqual(
      (await readAll(mgr.getLog('t', 0)!)).map((r) => r.value),
      ['kept'],
    );
    await mgr.shutdown();
  });
});

test('the clean shutdown marker is not written when the final checkpoints failed', async () => {
  await withTempDir(async (dir) => {
    const logger = new CapturingLogger();
    const mgr = await open([dir], logger);
    await (await mgr.createLog('t', 0)).append(makeBatch(['kept']), { leaderEpoch: 0 });
    // The checkpoint's temp file cannot be created: EISDIR, as any write error would be.
    await mkdir(path.join(dir, 'recovery-point-offset-checkpoint.tmp'));
    await mgr.shutdown();
    assert.ok(!(await readdir(dir)).includes('.kafka_cleanshutdown'), 'no clean marker after failed checkpoints');
    assert.ok(
      logger.lines.some((l) => l.includes('not writing the clean shutdown marker') && l.includes('checkpoint')),
      logger.lines.join('\n'),
    );
  });
});
