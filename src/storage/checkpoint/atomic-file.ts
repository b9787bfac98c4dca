/**
 * Writing a small file so that a crash leaves either the old or the new content, never a mix
 * (temp file, fsync, rename, fsync of the directory), one write of a file at a time. Apart from
 * the checkpoint formats because more than checkpoints need it: producer-state snapshots, the
 * embedded metadata store, dynamic broker configs.
 */
import { open, rename, unlink } from 'node:fs/promises';
import path from 'node:path';
import { errnoOf } from '../errors.js';
import { shortLivedFiles } from '../segment/segment-file.js';

export async function fsyncDir(dir: string): Promise<void> {
  let fh;
  try {
    fh = await open(dir, 'r');
    await fh.sync();
  } catch {
    // Some filesystems refuse fsync on directories; the rename is still atomic.
  } finally {
    await fh?.close();
  }
}

/**
 * Writes of one file, in the order they were asked for. Two writers of the same checkpoint (the
 * periodic task and a flush on shutdown, say) would otherwise share one temporary file: one
 * renames it away under the other (ENOENT on rename) or the file gets a mix of both contents.
 */
const writesInFlight = new Map<string, Promise<void>>();

export function writeFileAtomically(file: string, content: string | Buffer): Promise<void> {
  const key = path.resolve(file);
  const before = writesInFlight.get(key) ?? Promise.resolve();
  // Each write also takes one of the short-lived file slots (see open-files budget).
  const write = before.then(() => shortLivedFiles.run(() => writeNow(file, content)));
  const settled = write.then(
    () => undefined,
    () => undefined,
  );
  writesInFlight.set(key, settled);
  void settled.then(() => {
    if (writesInFlight.get(key) === settled) writesInFlight.delete(key);
  });
  return write;
}

async function writeNow(file: string, content: string | Buffer): Promise<void> {
  const tmp = `${file}.tmp`;
  const fh = await open(tmp, 'w');
  try {
    await fh.writeFile(content);
    await fh.sync();
  } catch (err) {
    // A full disk: leave no half-written temp file behind holding space.
    await fh.close().catch(() => undefined);
    await unlink(tmp).catch(() => undefined);
    throw err;
  }
  await fh.close();
  await rename(tmp, file);
  await fsyncDir(path.dirname(file));
}

export async function removeIfExists(file: string): Promise<boolean> {
  try {
    await unlink(file);
    return true;
  } catch (err) {
    if (errnoOf(err) === 'ENOENT') return false;
    throw err;
  }
}
