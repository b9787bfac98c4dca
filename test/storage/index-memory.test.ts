import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { OffsetIndex } from '../../src/storage/segment/offset-index.js';
import { TimeIndex } from '../../src/storage/segment/time-index.js';
import { withTempDir } from './helpers.js';

// Every partition has an active segment with an offset and a time index. A broker at
// max.broker.partitions (10,000) whose partitions are mostly empty held ~7 KB of index buffers
// per partition (4 KB + 3 KB allocated up front): 62 MB of the 209 MB a fuzzed broker held after
// a full GC. An index holds memory only once it has entries.

const MAX_INDEX_BYTES = 10 * 1024 * 1024;

test('empty offset and time indexes hold no buffer memory', () => {
  const n = 4000;
  const before = process.memoryUsage().arrayBuffers;
  const kept: unknown[] = [];
  for (let i = 0; i < n; i++) {
    kept.push(new OffsetIndex(`/nonexistent/${i}.index`, i * 100, MAX_INDEX_BYTES), new TimeIndex(`/nonexistent/${i}.timeindex`, i * 100, MAX_INDEX_BYTES));
  }
  const grown = process.memoryUsage().arrayBuffers - before;
  assert.equal(kept.length, 2 * n);
  // 7 KB each before: 28 MB for 4,000 pairs; a few hundred KB of noise is allowed
  assert.ok(grown < 1024 * 1024, `${n} empty index pairs took ${Math.round(grown / 1024)} KB of array buffers`);
});

test('an index allocated lazily still appends, looks up, persists and reloads', async () => {
  await withTempDir(async (dir) => {
    const file = path.join(dir, '00000000000000000100.index');
    const idx = new OffsetIndex(file, 100, MAX_INDEX_BYTES);
    assert.deepEqual(idx.lookup(150), { offset: 100, position: 0 });
    assert.equal(idx.contents().length, 0);
    for (let i = 1; i <= 2000; i++) assert.ok(idx.append(100 + i * 10, i * 100)); // grows past the first allocation
    assert.deepEqual(idx.lookup(100 + 1500 * 10 + 5), { offset: 100 + 1500 * 10, position: 150000 });
    await idx.persist(false);
    const again = new OffsetIndex(file, 100, MAX_INDEX_BYTES);
    assert.equal(await again.load(10_000_000), undefined);
    assert.equal(again.entries, 2000);
    assert.ok(again.append(100 + 2001 * 10, 2001 * 100), 'a loaded index appends');
    assert.deepEqual(again.lookup(1e9), { offset: 100 + 2001 * 10, position: 200100 });

    // an empty file loads as an empty index, and it appends
    const tfile = path.join(dir, '00000000000000000100.timeindex');
    await writeFile(tfile, Buffer.alloc(0));
    const t = new TimeIndex(tfile, 100, MAX_INDEX_BYTES);
    assert.equal(await t.load(1000), undefined);
    assert.equal(t.entries, 0);
    assert.ok(t.maybeAppend(5000, 150));
    assert.equal(t.lookup(4000), 100);
    assert.deepEqual(t.lastEntry(), { timestamp: 5000, offset: 150 });
  });
});

// And once it has a few: every written segment closes with one time-index entry, so after a
// restart each of 10,000 partitions loaded a 12-byte file into a 3 KB buffer (31 MB), and its
// first appends grew 4 KB + 3 KB (70 MB once all were written to). Buffers now grow from 8
// entries, and a loaded index keeps exactly what it read (checked on each index's backing
// store: the process-wide count also holds garbage not yet collected).
test('indexes with a few entries hold about their size, appended or loaded', async () => {
  const o = new OffsetIndex('/nonexistent/0.index', 0, MAX_INDEX_BYTES);
  const t = new TimeIndex('/nonexistent/0.timeindex', 0, MAX_INDEX_BYTES);
  assert.ok(o.append(10, 4096));
  assert.ok(t.maybeAppend(1_700_000_000_000, 10));
  // 4 KB and 3 KB before
  assert.ok(o.contents().buffer.byteLength <= 8 * 8, `an offset index with one entry holds ${o.contents().buffer.byteLength} bytes`);
  assert.ok(t.contents().buffer.byteLength <= 8 * 12, `a time index with one entry holds ${t.contents().buffer.byteLength} bytes`);
  for (let i = 2; i <= 9; i++) assert.ok(o.append(i * 10, i * 4096));
  assert.equal(o.entries, 9);
  assert.ok(o.contents().buffer.byteLength <= 16 * 8, 'it doubles');

  await withTempDir(async (dir) => {
    const file = path.join(dir, '00000000000000000000.timeindex');
    const entry = Buffer.alloc(12);
    entry.writeBigInt64BE(1_700_000_000_000n, 0);
    entry.writeInt32BE(9, 8);
    await writeFile(file, entry);
    const loaded = new TimeIndex(file, 0, MAX_INDEX_BYTES);
    assert.equal(await loaded.load(9), undefined);
    assert.deepEqual(loaded.lastEntry(), { timestamp: 1_700_000_000_000, offset: 9 });
    assert.equal(loaded.contents().buffer.byteLength, 12, 'a loaded one-entry time index holds its 12 bytes (3 KB before)');
    assert.ok(loaded.maybeAppend(1_700_000_000_001, 12), 'and still appends');
    assert.deepEqual(loaded.lastEntry(), { timestamp: 1_700_000_000_001, offset: 12 });
  });
});
