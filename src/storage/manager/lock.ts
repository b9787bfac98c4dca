/**
 * The `.lock` file of a log directory: created exclusively and holding the owner's PID. A lock
 * whose PID is no longer alive is stale (the previous broker was killed) and is taken over.
 */
import { open, readFile, unlink } from 'node:fs/promises';
import path from 'node:path';
import { LogDirLockedError, errnoOf } from '../errors.js';

export const LOCK_FILE = '.lock';

/** Directories locked by this process, so a second LogManager in the same process is refused too. */
const heldByThisProcess = new Set<string>();

function isProcessAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return errnoOf(err) === 'EPERM'; // exists but belongs to someone else
  }
}

export class DirLock {
  private constructor(
    readonly dir: string,
    private readonly file: string,
    /** False when the disk was full: the lock file exists but is empty (looks stale to others). */
    readonly pidWritten = true,
  ) {}

  static async acquire(dir: string): Promise<DirLock> {
    const resolved = path.resolve(dir);
    const file = path.join(resolved, LOCK_FILE);
    const refuse = (owner: string): LogDirLockedError =>
      new LogDirLockedError(
        `Failed to acquire lock on file .lock in ${resolved}. A Kafka instance in another process or thread (${owner}) is using this directory.`,
      );
    if (heldByThisProcess.has(resolved)) throw refuse(`this process, pid ${process.pid}`);
    for (let attempt = 0; attempt < 3; attempt++) {
      try {
        const fh = await open(file, 'wx');
        let pidWritten = true;
        try {
          await fh.writeFile(`${process.pid}\n`);
        } catch (err) {
          // A full disk has room for the (exclusively created) file but not for its content:
          // keep the lock rather than refuse to start; the caller warns.
          const code = errnoOf(err);
          if (code !== 'ENOSPC' && code !== 'EDQUOT') {
            await unlink(file).catch(() => undefined);
            throw err;
          }
          pidWritten = false;
        } finally {
          await fh.close();
        }
        heldByThisProcess.add(resolved);
        return new DirLock(resolved, file, pidWritten);
      } catch (err) {
        if (errnoOf(err) !== 'EEXIST') throw err;
      }
      const content = await readFile(file, 'utf8').catch(() => '');
      const pid = Number.parseInt(content.trim(), 10);
      if (Number.isInteger(pid) && pid > 0 && pid !== process.pid && isProcessAlive(pid)) throw refuse(`pid ${pid}`);
      // Stale: its owner died (or the file is empty/garbled from a crash during creation).
      await unlink(file).catch(() => undefined);
    }
    throw refuse('unknown');
  }

  async release(): Promise<void> {
    heldByThisProcess.delete(this.dir);
    await unlink(this.file).catch(() => undefined);
  }
}
