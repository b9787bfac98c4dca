import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { checkLogDirs, ensureDirectory, LogDirError } from '../../src/storage/manager/log-dirs.js';

test('ensureDirectory creates missing parents, tolerates a concurrent creator, and names what is wrong', { timeout: 30_000 }, async () => {
  const base = await mkdtemp(path.join(tmpdir(), 'fjord-logdirs-'));
  try {
    const deep = path.join(base, 'a', 'b', 'c');
    await Promise.all([ensureDirectory(deep), ensureDirectory(deep), ensureDirectory(path.join(base, 'a', 'b'))]);
    assert.ok((await stat(deep)).isDirectory());
    await ensureDirectory(deep); // existing: fine

    const file = path.join(base, 'f');
    await writeFile(file, 'x');
    await assert.rejects(ensureDirectory(file), (e: unknown) => e instanceof LogDirError && e.reason === 'it exists and is not a directory');
    await assert.rejects(ensureDirectory(path.join(file, 'x', 'y')), (e: unknown) => e instanceof LogDirError && e.reason === `${file} is not a directory`);
    // Would loop forever with fs.mkdir({ recursive: true }).
    await assert.rejects(
      ensureDirectory('/proc/fjord-no-such/x'),
      (e: unknown) => e instanceof LogDirError && /^cannot create \/proc\/fjord-no-such: /.test(e.reason),
    );

    assert.deepEqual(await checkLogDirs([deep, file]), [`Failed to create or validate log directory ${file} (log.dirs): it exists and is not a directory`]);
  } finally {
    await rm(base, { recursive: true, force: true });
  }
});
