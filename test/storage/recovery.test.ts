import { test } from 'node:test';
import assert from 'node:assert/strict';
import { appendFile, mkdir, readFile, readdir, stat, truncate, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { CapturingLogger, makeBatch, openLog, readAll, withTempDir } from './helpers.js';
import { flipByte } from '../helpers/corrupt.js';

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
    assert.deepEqual(
      (await readAll(log)).filter((r) => !r.value!.endsWith('-b')).map((r) => r.value),
      values,
    );
    assert.equal((await stat(seg0(dir))).size, goodSize);
    assert.ok(
      logger.lines.some((l) => l.includes(`at position ${goodSize}`) && l.includes('removed 40 bytes')),
      logger.lines.join('\n'),
    );
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
    flipByte(bytes, 250, 0x55); // inside the CRC-covered part of the third batch of the second segment
    await writeFile(second, bytes);
    const logger = new CapturingLogger();
    const log = await openLog(dir, {}, { logger });
    const all = await readAll(log);
    assert.ok(all.length > 0 && all.length < 80);
    assert.deepEqual(
      all.map((r) => r.offset),
      [...Array(all.length).keys()],
    );
    assert.equal(log.logEndOffset, all.length);
    assert.ok(logger.lines.some((l) => l.includes('recovery truncated') && l.includes(files[1]!)));
    assert.ok(logger.lines.some((l) => l.includes('recovery deleted') && l.includes(files[2]!)));
    // One loss, one line: the first lost offset, the truncation and the deleted segments.
    const loss = logger.lines.filter((l) => l.includes('are lost'));
    assert.equal(loss.length, 1, logger.lines.join('\n'));
    assert.ok(loss[0]!.includes(`from offset ${all.length} on`) && loss[0]!.includes(files[1]!) && loss[0]!.includes(files[2]!), loss[0]);
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
    assert.deepEqual(
      (await readAll(log)).map((r) => r.value),
      ['fresh'],
    );
    await log.close();
  });
});

for (const [kind, suffix] of [
  ['offset index', '.index'],
  ['time index', '.timeindex'],
] as const) {
  test(`a half-written or garbage ${kind} is rebuilt even after a clean shutdown`, async () => {
    await withTempDir(async (dir) => {
      const values = await fillLog(dir, 60);
      const original = await readFile(seg0(dir, suffix));
      assert.ok(original.length > 0);
      for (const damage of ['half', 'garbage', 'missing'] as const) {
        if (damage === 'half') await truncate(seg0(dir, suffix), original.length - 5);
        if (damage === 'garbage') await writeFile(seg0(dir, suffix), Buffer.alloc(original.length, 0x7f));
        if (damage === 'missing')
          await writeFile(seg0(dir, suffix), Buffer.alloc(0))
            .then(() => import('node:fs/promises'))
            .then((fs) => fs.unlink(seg0(dir, suffix)));
        const logger = new CapturingLogger();
        const log = await openLog(dir, { indexIntervalBytes: 64 }, { hadCleanShutdown: true, logger });
        assert.equal(log.logEndOffset, 120);
        const firstValues = (await readAll(log)).filter((r) => r.offset % 2 === 0).map((r) => r.value);
        assert.deepEqual(firstValues, values);
        assert.ok(
          logger.lines.some((l) => l.includes('rebuilt indexes')),
          `${damage}: ${logger.lines.join('\n')}`,
        );
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
    assert.deepEqual(
      (await readAll(log)).map((r) => r.value),
      ['swapped'],
    );
    await log.close();
    await writeFile(seg0(dir, '.index.swap'), Buffer.alloc(8, 1));
    log = await openLog(dir, {}, { hadCleanShutdown: true });
    assert.deepEqual(
      (await readAll(log)).map((r) => r.value),
      ['swapped'],
    );
    const names = await readdir(path.join(dir, 'topic-0'));
    assert.ok(!names.some((n) => n.endsWith('.swap') || n.endsWith('.cleaned')), names.join(','));
    await log.close();
  });
});

/** Base offsets of the segment files of topic-0, in order. */
async function segmentBases(dir: string): Promise<number[]> {
  return (await readdir(path.join(dir, 'topic-0')))
    .filter((f) => f.endsWith('.log'))
    .map((f) => Number(f.slice(0, 20)))
    .sort((a, b) => a - b);
}
const segFile = (dir: string, base: number, suffix = '.log'): string => path.join(dir, 'topic-0', `${String(base).padStart(20, '0')}${suffix}`);

test('a .swap that does not validate never replaces a segment: it is deleted, the original kept, and logged', async () => {
  const twoBatches = Buffer.concat([makeBatch(['k1'], { baseOffset: 0 }), makeBatch(['k2'], { baseOffset: 4 })]);
  const badCrc = Buffer.from(twoBatches);
  flipByte(badCrc, badCrc.length - 3); // inside the second batch's CRC-covered records
  const swaps: [string, Buffer][] = [
    ['garbage', Buffer.from(Array.from({ length: 5000 }, (_, i) => (i * 7919 + 13) & 0xff))],
    ['a torn last batch', twoBatches.subarray(0, twoBatches.length - 10)],
    ['a CRC mismatch', badCrc],
    ['offsets beyond the replaced segment', makeBatch(['far'], { baseOffset: 100000 })],
    ['offsets below the segment base', makeBatch(['low'], { baseOffset: 0 })],
  ];
  for (const hadCleanShutdown of [false, true]) {
    for (const [what, bytes] of swaps) {
      await withTempDir(async (dir) => {
        await fillLog(dir, 40, 1200);
        const bases = await segmentBases(dir);
        assert.ok(bases.length >= 3);
        // The first segment for most cases; the second (base > 0) for the "below the base" one.
        const target = what === 'offsets below the segment base' ? bases[1]! : bases[0]!;
        const original = await readFile(segFile(dir, target));
        await writeFile(segFile(dir, target, '.log.swap'), bytes);
        await writeFile(segFile(dir, target, '.index.swap'), Buffer.alloc(8));
        const logger = new CapturingLogger();
        const log = await openLog(dir, {}, { logger, hadCleanShutdown });
        const all = await readAll(log);
        assert.equal(all.length, 80, `${what}: every record survives`);
        assert.deepEqual(
          all.map((r) => r.offset),
          [...Array(80).keys()],
        );
        assert.deepEqual(await readFile(segFile(dir, target)), original, `${what}: the original segment is untouched`);
        const names = await readdir(path.join(dir, 'topic-0'));
        assert.ok(!names.some((n) => n.endsWith('.swap')), `${what}: swap files removed: ${names.join(',')}`);
        const lines = logger.lines.filter((l) => l.includes('.log.swap'));
        assert.equal(lines.length, 1, `${what}: one line about the swap:\n${logger.lines.join('\n')}`);
        assert.match(lines[0]!, /^WARN .*discarding .*kept the original/);
        assert.ok(!logger.lines.some((l) => l.includes('completed interrupted cleaner swap')), logger.lines.join('\n'));
        await log.close();
      });
    }
  }
});

test('a valid .swap of a middle segment (compacted output, offsets within its range) still completes', async () => {
  await withTempDir(async (dir) => {
    await fillLog(dir, 40, 1200);
    const bases = await segmentBases(dir);
    const swap = Buffer.concat([makeBatch(['kept-a'], { baseOffset: bases[1]! + 1 }), makeBatch(['kept-b'], { baseOffset: bases[2]! - 1 })]);
    await writeFile(segFile(dir, bases[1]!, '.log.swap'), swap);
    const logger = new CapturingLogger();
    const log = await openLog(dir, { cleanupPolicy: ['compact'] }, { logger });
    const values = (await readAll(log)).map((r) => r.value);
    assert.ok(values.includes('kept-a') && values.includes('kept-b'), values.join(','));
    assert.equal(values.filter((v) => v!.startsWith('kept-')).length, 2);
    assert.ok(
      logger.lines.some((l) => l.includes('completed interrupted cleaner swap')),
      logger.lines.join('\n'),
    );
    await log.close();
  });
});

test('a torn tail after a clean shutdown is reported as lost records, with the offset and bytes, not as rebuilt indexes', async () => {
  await withTempDir(async (dir) => {
    await fillLog(dir, 20);
    const goodSize = (await stat(seg0(dir))).size;
    const torn = makeBatch(['lost-1', 'lost-2', 'lost-3']);
    await appendFile(seg0(dir), torn.subarray(0, torn.length - 7));
    const logger = new CapturingLogger();
    const log = await openLog(dir, { indexIntervalBytes: 64 }, { logger, hadCleanShutdown: true });
    assert.equal(log.logEndOffset, 40);
    assert.equal((await stat(seg0(dir))).size, goodSize);
    const loss = logger.lines.filter((l) => l.includes('lost'));
    assert.equal(loss.length, 1, logger.lines.join('\n'));
    assert.match(loss[0]!, /^(WARN|ERROR) /);
    assert.ok(loss[0]!.includes('topic-0') && loss[0]!.includes('from offset 40'), loss[0]);
    assert.ok(loss[0]!.includes(`removed ${torn.length - 7} bytes`), loss[0]);
    assert.ok(!logger.lines.some((l) => l.includes('rebuilt indexes')), logger.lines.join('\n'));
    assert.equal((await log.append(makeBatch(['next']), { leaderEpoch: 0 })).firstOffset, 40);
    await log.close();
  });
});

test('a segment missing in the middle: the offset gap is logged once with its range, and the rest is served around it', async () => {
  for (const hadCleanShutdown of [true, false]) {
    await withTempDir(async (dir) => {
      await fillLog(dir, 40, 1200);
      const bases = await segmentBases(dir);
      assert.ok(bases.length >= 3);
      const [gapFrom, gapTo] = [bases[1]!, bases[2]! - 1];
      for (const suffix of ['.log', '.index', '.timeindex'])
        await import('node:fs/promises').then((fs) => fs.rm(segFile(dir, bases[1]!, suffix), { force: true }));
      const logger = new CapturingLogger();
      const log = await openLog(dir, {}, { logger, hadCleanShutdown });
      const gap = logger.lines.filter((l) => l.includes(`${gapFrom} to ${gapTo}`));
      assert.equal(gap.length, 1, logger.lines.join('\n'));
      assert.match(gap[0]!, /^(WARN|ERROR) .*topic-0.*missing/);
      assert.equal(log.logEndOffset, 80, 'the log end is unchanged');
      const offsets = (await readAll(log)).map((r) => r.offset);
      assert.deepEqual(
        offsets,
        [...Array(80).keys()].filter((o) => o < gapFrom || o > gapTo),
      );
      // A fetch inside the gap gets the first batch after it, as Kafka serves a log with a hole.
      const inGap = await log.read(gapFrom + 1, 1 << 20);
      assert.equal(inGap.firstBatchOffset, gapTo + 1);
      await log.close();
      // Reported at every start while the hole is there, but only once per start.
      const again = new CapturingLogger();
      const reopened = await openLog(dir, {}, { logger: again, hadCleanShutdown: true });
      assert.equal(again.lines.filter((l) => l.includes(`${gapFrom} to ${gapTo}`)).length, 1);
      await reopened.close();
    });
  }
});

test('batches larger than a since-lowered max.message.bytes are not mistaken for corruption by recovery', async () => {
  await withTempDir(async (dir) => {
    await mkdir(path.join(dir, 'topic-0'), { recursive: true });
    const big = 'x'.repeat(20_000);
    let log = await openLog(dir, { maxMessageBytes: 1 << 20 });
    for (let i = 0; i < 3; i++) await log.append(makeBatch([`${i}${big}`]), { leaderEpoch: 0 });
    await log.close();
    // The limit is lowered afterwards; existing batches stay valid data (Kafka keeps them too).
    const logger = new CapturingLogger();
    log = await openLog(dir, { maxMessageBytes: 1000 }, { logger, hadCleanShutdown: false });
    assert.equal(log.logEndOffset, 3, logger.lines.join('\n'));
    assert.equal((await readAll(log)).length, 3);
    assert.ok(!logger.lines.some((l) => l.includes('lost')), logger.lines.join('\n'));
    await log.close();
  });
});

test('a .swap that does not validate while its original segment is missing too: the lost offsets are named', async () => {
  await withTempDir(async (dir) => {
    await fillLog(dir, 40, 1200);
    const bases = await segmentBases(dir);
    await writeFile(
      segFile(dir, bases[1]!, '.log.swap'),
      Buffer.from('not a batch at all, just some bytes that are long enough to look like a header........'),
    );
    for (const suffix of ['.log', '.index', '.timeindex'])
      await import('node:fs/promises').then((fs) => fs.rm(segFile(dir, bases[1]!, suffix), { force: true }));
    const logger = new CapturingLogger();
    // Compacted: the generic gap check does not apply, the swap line must say it.
    const log = await openLog(dir, { cleanupPolicy: ['compact'] }, { logger });
    const lines = logger.lines.filter((l) => l.includes('.log.swap'));
    assert.equal(lines.length, 1, logger.lines.join('\n'));
    assert.ok(lines[0]!.includes(`offsets ${bases[1]} to ${bases[2]! - 1}`) && lines[0]!.includes('lost'), lines[0]);
    assert.equal((await readAll(log)).length, 80 - (bases[2]! - bases[1]!));
    await log.close();
  });
});
