// What dist/ is built from, as one hash: the compiler's version, tsconfig.json and every file
// under src/ and console/. scripts/build.mjs writes it to dist/.build-stamp after a build that
// succeeded; the tests' helpers (test/helpers/built.ts) compare it to decide whether child
// processes can run dist/ (as users do, and without tsx's per-module cost) or must run src/.
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join, relative, sep } from 'node:path';

function sourceFiles(dir) {
  const out = [];
  if (!existsSync(dir)) return out;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const full = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...sourceFiles(full));
    else if (/\.(ts|tsx|json|css|html)$/.test(entry.name)) out.push(full);
  }
  return out;
}

function compilerVersion(root) {
  try {
    return createRequire(join(root, 'package.json'))('typescript/package.json').version;
  } catch {
    return 'none';
  }
}

/** The hash of what a build of the project at `root` is made from. */
export function fingerprint(root) {
  const hash = createHash('sha256');
  hash.update(`typescript ${compilerVersion(root)}\0`);
  for (const file of [join(root, 'tsconfig.json'), ...sourceFiles(join(root, 'src')).sort(), ...sourceFiles(join(root, 'console')).sort()]) {
    hash.update(`${relative(root, file).split(sep).join('/')}\0`);
    hash.update(readFileSync(file));
    hash.update('\0');
  }
  return hash.digest('hex');
}

/** Where a build records the fingerprint it was made from. */
export function stampPath(root) {
  return join(root, 'dist', '.build-stamp');
}

/** Whether dist/ at `root` was built, successfully, from exactly today's sources. */
export function distIsCurrent(root) {
  const stamp = stampPath(root);
  return existsSync(stamp) && readFileSync(stamp, 'utf8').trim() === fingerprint(root);
}
