/**
 * Creating and validating log directories. `fs.mkdir(..., { recursive: true })` never returns for
 * a path under /proc (the kernel answers ENOENT for the missing component, which the recursive
 * walk takes as "create the parent first", forever), and its EEXIST/ENOTDIR say little to an
 * operator. `ensureDirectory` creates one component at a time and says what is wrong in a
 * sentence; `checkLogDirs` gives one line per unusable directory of `log.dirs`.
 */
import { constants } from 'node:fs';
import { access, mkdir, stat } from 'node:fs/promises';
import path from 'node:path';
import { errnoOf } from '../errors.js';

/** A directory that does not exist and cannot be created, or exists but is no usable directory. */
export class LogDirError extends Error {
  override name = 'LogDirError';
  constructor(
    readonly dir: string,
    readonly reason: string,
  ) {
    super(`${dir}: ${reason}`);
  }
}

function why(code: string | undefined): string {
  switch (code) {
    case 'EACCES':
    case 'EPERM':
      return 'permission denied';
    case 'EROFS':
      return 'the file system is read-only';
    case 'ENOSPC':
      return 'no space left on the device';
    case 'ENOENT':
      return 'the file system does not allow creating it';
    case 'ENOTDIR':
      return 'a part of the path is not a directory';
    case 'ENAMETOOLONG':
      return 'the name is too long';
    default:
      return code ?? 'unknown error';
  }
}

async function kindOf(p: string): Promise<'dir' | 'other' | 'missing'> {
  try {
    return (await stat(p)).isDirectory() ? 'dir' : 'other';
  } catch (err) {
    const code = errnoOf(err);
    // ENOTDIR: an ancestor is a file; the walk up finds and names it.
    if (code === 'ENOENT' || code === 'ENOTDIR') return 'missing';
    throw err;
  }
}

/** Creates `dir` and its missing parents (like mkdir -p, but always returning); throws LogDirError. */
export async function ensureDirectory(dir: string): Promise<void> {
  const target = path.resolve(dir);
  // The nearest existing ancestor, then each missing component below it, one mkdir each.
  const missing: string[] = [];
  let p = target;
  for (;;) {
    let kind: 'dir' | 'other' | 'missing';
    try {
      kind = await kindOf(p);
    } catch (err) {
      throw new LogDirError(target, `cannot inspect ${p}: ${why(errnoOf(err))}`);
    }
    if (kind === 'dir') break;
    if (kind === 'other') {
      throw new LogDirError(target, p === target ? 'it exists and is not a directory' : `${p} is not a directory`);
    }
    missing.unshift(p);
    const parent = path.dirname(p);
    if (parent === p) break;
    p = parent;
  }
  for (const m of missing) {
    try {
      await mkdir(m);
    } catch (err) {
      const code = errnoOf(err);
      if (code === 'EEXIST' && (await kindOf(m).catch(() => 'other')) === 'dir') continue; // made meanwhile
      throw new LogDirError(target, `cannot create ${m === target ? 'it' : m}: ${why(code)}`);
    }
  }
  try {
    await access(target, constants.R_OK | constants.W_OK | constants.X_OK);
  } catch (err) {
    throw new LogDirError(target, `it is not readable and writable (${why(errnoOf(err))})`);
  }
}

/** One line per log directory that cannot be used, in Kafka's words; empty when all are fine. */
export async function checkLogDirs(dirs: readonly string[]): Promise<string[]> {
  const problems: string[] = [];
  for (const dir of dirs) {
    try {
      await ensureDirectory(dir);
    } catch (err) {
      const reason = err instanceof LogDirError ? err.reason : (err as Error).message;
      problems.push(`Failed to create or validate log directory ${path.resolve(dir)} (log.dirs): ${reason}`);
    }
  }
  return problems;
}
