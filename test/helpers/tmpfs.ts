/**
 * A real full filesystem for tests: a small tmpfs (mounting needs root, as CI on this machine
 * runs) and a filler that writes until ENOSPC. Outside CI a test that cannot mount is skipped;
 * with CI=true it fails, so a green CI run always used a real full disk.
 */
import { spawnSync } from 'node:child_process';
import { open } from 'node:fs/promises';
import type { TestContext } from 'node:test';

export function mountTmpfs(t: TestContext, dir: string, bytes: number): boolean {
  const r = spawnSync('mount', ['-t', 'tmpfs', '-o', `size=${bytes}`, 'tmpfs', dir], { encoding: 'utf8' });
  if (r.status === 0) return true;
  const why = `cannot mount a tmpfs (${(r.stderr || r.error?.message || '').trim()})`;
  if (process.env.CI === 'true') throw new Error(`${why}: required with CI=true`);
  t.skip(why);
  return false;
}

export function unmount(dir: string): void {
  spawnSync('umount', [dir]);
}

/** Writes a filler file until the filesystem refuses with ENOSPC (to the last byte). */
export async function fillDisk(file: string): Promise<number> {
  const fh = await open(file, 'w');
  let written = 0;
  try {
    for (const chunk of [1 << 16, 4096, 1]) {
      const buf = Buffer.alloc(chunk, 0x61);
      for (;;) {
        try {
          const { bytesWritten } = await fh.write(buf, 0, chunk, written);
          written += bytesWritten;
          if (bytesWritten < chunk) break;
        } catch (err) {
          if ((err as NodeJS.ErrnoException).code !== 'ENOSPC') throw err;
          break;
        }
      }
    }
  } finally {
    await fh.close();
  }
  return written;
}
