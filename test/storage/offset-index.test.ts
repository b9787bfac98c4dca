import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { OffsetIndex } from '../../src/storage/segment/offset-index.js';
import { withTempDir } from './helpers.js';

test('offset index: append, floor lookup, truncate, persist and reload', async () => {
  await withTempDir(async (dir) => {
    const file = path.join(dir, '00000000000000000100.index');
    const idx = new OffsetIndex(file, 100, 8 * 4);
    assert.deepEqual(idx.lookup(150), { offset: 100, position: 0 });
    assert.ok(idx.append(110, 1000));
    assert.ok(idx.append(120, 2000));
    assert.ok(!idx.append(115, 3000), 'offsets must increase');
    assert.ok(idx.append(130, 3000));
    assert.deepEqual(idx.lookup(109), { offset: 100, position: 0 });
    assert.deepEqual(idx.lookup(125), { offset: 120, position: 2000 });
    assert.deepEqual(idx.lookup(999), { offset: 130, position: 3000 });
    assert.ok(idx.append(140, 4000));
    assert.ok(idx.isFull());
    assert.ok(!idx.append(150, 5000));
    await idx.persist(true);
    const bytes = await readFile(file);
    assert.equal(bytes.length, 32);
    assert.equal(bytes.readInt32BE(0), 10, 'relative offsets on disk');
    assert.equal(bytes.readInt32BE(4), 1000);
    idx.truncateToOffset(125);
    assert.equal(idx.entries, 2);
    await idx.persist(false);
    assert.equal((await readFile(file)).length, 16);
    const again = new OffsetIndex(file, 100, 1024);
    assert.equal(await again.load(10000), undefined);
    assert.deepEqual(again.lookup(1000), { offset: 120, position: 2000 });
  });
});

test('offset index: insane files are reported, not trusted', async () => {
  await withTempDir(async (dir) => {
    const file = path.join(dir, 'x.index');
    const idx = new OffsetIndex(file, 0, 1024);
    assert.match((await idx.load(100))!.reason, /missing/);
    await writeFile(file, Buffer.alloc(12));
    assert.match((await idx.load(100))!.reason, /multiple of 8/);
    const decreasing = Buffer.alloc(16);
    decreasing.writeInt32BE(5, 0);
    decreasing.writeInt32BE(50, 4);
    decreasing.writeInt32BE(3, 8);
    decreasing.writeInt32BE(60, 12);
    await writeFile(file, decreasing);
    assert.match((await idx.load(100))!.reason, /out of order/);
    const beyond = Buffer.alloc(8);
    beyond.writeInt32BE(1, 0);
    beyond.writeInt32BE(500, 4);
    await writeFile(file, beyond);
    assert.match((await idx.load(100))!.reason, /beyond the log/);
  });
});
