import { test } from 'node:test';
import assert from 'node:assert/strict';
import { appendFile, mkdir, readFile, readdir, stat, truncate, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { CapturingLogger, makeBatch, openLog, readAll, withTempDir } from './helpers.js';

async function fillLog(dir: string, n: number, segmentBytes = 1 << 20): Promise<string[]> {
  await mkdir(path.join(dir, 'topic-0'), { recursive: true });
  const log = await openLog(dir, { segmentBytes, indexIntervalBytes: 64 });
  const values: string[] = [];
  for (let i = 0; i < n; i++) {
    values.push(`value-${i}`);
    await log.append(makeBatch([values[i]!, `${values[i]!}-b`]), { leaderEpoch: 0 });
  }
  await log.close();
  return values;
}

const seg0 = (dir: string, suffix = '.log'): string => path.join(dir, 'topic-0', `00000000000000000000${suffix}`);

test('a torn tail is truncated and logged; acknowledged data survives', async () => {
  await withTempDir(async (dir) => {
    const values = await fillLog(dir, 20);
    const goodSize = (await stat(seg0(dir))).size;
    const partial = makeBatch(['torn']).subarray(0, 40);
    await appendFile(seg0(dir), partial);
    const logger = new CapturingLogger();
    const log = await openLog(dir, {}, { logger });
    assert.equal(log.logEndOffset, 40);
    assert.deepEqual((await readAll(log)).filter((r) => !r.value!.endsWith('-b')).map((r) => r.value), values);
    assert.equal((await stat(seg0(dir))).size, goodSize);
    assert.ok(logger.lines.some((l) => l.includes(`at position ${goodSize}`) && l.includes('removed 40 bytes')), logger.lines.join('\n'));
    await log.close();
  });
});

test('a corrupt batch in the middle truncates there and drops later segments with a log line', async () => {
  await withTempDir(async (dir) => {
    await fillLog(dir, 40, 1200);
    const files = (await readdir(path.join(dir, 'topic-0'))).filter((f) => f.endsWith('.log')).sort();
    assert.ok(files.length >= 3);
    const second = path.join(dir, 'topic-0', files[1]!);
    const bytes = await readFile(second);
    bytes[250] ^= 0x55; // inside the CRC-covered part of the third batch of the second segment
    await writeFile(second, bytes);
    const logger = new CapturingLogger();
    const log = await openLog(dir, {}, { logger });
    const all = await readAll(log);
    assert.ok(all.length > 0 && all.length < 80);
    assert.deepEqual(all.map((r) => r.offset), [...Array(all.length).keys()]);
    assert.equal(log.logEndOffset, all.length);
    assert.ok(logger.lines.some((l) => l.includes('recovery truncated') && l.includes(files[1]!)));
    assert.ok(logger.lines.some((l) => l.includes('recovery deleted') && l.includes(files[2]!)));
    // Appends continue at the new end.
    const r = await log.append(makeBatch(['after']), { leaderEpoch: 0 });
    assert.equal(r.firstOffset, all.length);
    await log.close();
  });
});

test('random bytes as a segment are recovered from without crashing', async () => {
  await withTempDir(async (dir) => {
    await mkdir(path.join(dir, 'topic-0'));
    const junk = Buffer.alloc(10000);
    for (let i = 0; i < junk.length; i++) junk[i] = (i * 7919 + 13) & 0xff;
    await writeFile(seg0(dir), junk);
    const log = await openLog(dir);
    assert.equal(log.logEndOffset, 0);
    assert.equal((await log.append(makeBatch(['fresh']), { leaderEpoch: 0 })).firstOffset, 0);
    assert.deepEqual((await readAll(log)).map((r) => r.value), ['fresh']);
    await log.close();
  });
});

for (const [kind, suffix] of [['offset index', '.index'], ['time index', '.timeindex']] as const) {
  test(`a half-written or garbage ${kind} is rebuilt even after a clean shutdown`, async () => {
    await withTempDir(async (dir) => {
      const values = await fillLog(dir, 60);
      const original = await readFile(seg0(dir, suffix));
      assert.ok(original.length > 0);
      for (const damage of ['half', 'garbage', 'missing'] as const) {
        if (damage === 'half') await truncate(seg0(dir, suffix), original.length - 5);
        if (damage === 'garbage') await writeFile(seg0(dir, suffix), Buffer.alloc(original.length, 0x7f));
        if (damage === 'missing') await writeFile(seg0(dir, suffix), Buffer.alloc(0)).then(() => import('node:fs/promises')).then((fs) => fs.unlink(seg0(dir, suffix)));
        const logger = new CapturingLogger();
        const log = await openLog(dir, { indexIntervalBytes: 64 }, { hadCleanShutdown: true, logger });
        assert.equal(log.logEndOffset, 120);
        const firstValues = (await readAll(log)).filter((r) => r.offset % 2 === 0).map((r) => r.value);
        assert.deepEqual(firstValues, values);
        assert.ok(logger.lines.some((l) => l.includes('rebuilt indexes')), `${damage}: ${logger.lines.join('\n')}`);
        assert.deepEqual(await log.offsetForTimestamp(0), { offset: 0, timestamp: 1700000000000 });
        await log.close();
        assert.deepEqual(await readFile(seg0(dir, suffix)), original, `${damage}: rebuilt ${kind} equals the original`);
      }
    });
  });
}

test('interrupted cleaner swaps: committed swaps complete, uncommitted ones are discarded', async () => {
  await withTempDir(async (dir) => {
    await fillLog(dir, 5);
    const replacement = makeBatch(['swapped']);
    await writeFile(seg0(dir, '.log.swap'), replacement);
    await writeFile(seg0(dir, '.log.cleaned'), Buffer.from('partial'));
    let log = await openLog(dir, {}, { hadCleanShutdown: true });
    assert.deepEqual((await readAll(log)).map((r) => r.value), ['swapped']);
    await log.close();
    await writeFile(seg0(dir, '.index.swap'), Buffer.alloc(8, 1));
    log = await openLog(dir, {}, { hadCleanShutdown: true });
    assert.deepEqual((await readAll(log)).map((r) => r.value), ['swapped']);
    const names = await readdir(path.join(dir, 'topic-0'));
    assert.ok(!names.some((n) => n.endsWith('.swap') || n.endsWith('.cleaned')), names.join(','));
    await log.close();
  });
});
