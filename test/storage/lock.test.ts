import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { LogDirLockedError } from '../../src/storage/errors.js';
import { DirLock } from '../../src/storage/manager/lock.js';
import { withTempDir } from './helpers.js';

test('lock file holds the pid; live owners block, dead owners and garbage do not', async () => {
  await withTempDir(async (dir) => {
    const lock = await DirLock.acquire(dir);
    assert.equal((await readFile(path.join(dir, '.lock'), 'utf8')).trim(), String(process.pid));
    await assert.rejects(DirLock.acquire(dir), LogDirLockedError);
    await lock.release();
    // A live foreign process owns it.
    const child = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' });
    await once(child, 'spawn');
    await writeFile(path.join(dir, '.lock'), `${child.pid}\n`);
    await assert.rejects(DirLock.acquire(dir), (e: unknown) => e instanceof LogDirLockedError && e.message.includes(`pid ${child.pid}`));
    child.kill('SIGKILL');
    await once(child, 'exit');
    const taken = await DirLock.acquire(dir);
    await taken.release();
    await writeFile(path.join(dir, '.lock'), 'garbage');
    const fromGarbage = await DirLock.acquire(dir);
    await fromGarbage.release();
  });
});
