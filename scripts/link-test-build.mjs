// Completes the compiled test tree that `tsc -p tsconfig.test.json` writes into .test-build/
// (scripts/test-build.sh runs both): tsc emits only JavaScript, and the tests, tools and benches
// also reach files by paths relative to their own module: fixtures, .mjs helpers, bin/, config/,
// docs/, dist/, and TypeScript sources they spawn under tsx (a fuzz prober, a crash fixture).
// Every file of the repository that tsc did not write (git's files, tracked or new, and dist/)
// gets a hard link at its own path under .test-build/, so a compiled module finds it where its
// source did. Hard links, not symlinks: Node runs a main module under its real path, and a module
// that checks it is the entry point (src/server/main.ts: argv[1] against import.meta.url) must
// see the path it was started by; bin/'s scripts find dist/ from their own real path too.
// What still differs there: a folder's listing (src/ holds .js and .js.map beside the .ts) and
// the repository itself (git, npm pack, the build and its stamp): a test doing those takes its
// path from test/helpers/repo-root.ts.
// Run from the repository root, after tsc and after the build of dist/.
import { execFileSync } from 'node:child_process';
import { existsSync, linkSync, mkdirSync, readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';

const OUT = '.test-build'; // tsconfig.test.json's outDir; test/helpers/repo-root.ts names it too

/** Every file under `dir`, walked (dist/ is ignored by git, and a tree without git is walked whole). */
function walk(dir, skip = new Set()) {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const path = dir === '.' ? e.name : join(dir, e.name);
    if (skip.has(path)) return [];
    return e.isDirectory() ? walk(path, skip) : e.isFile() ? [path] : [];
  });
}

function repositoryFiles() {
  try {
    const listed = execFileSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], { encoding: 'utf8', maxBuffer: 64 << 20 });
    return listed.split('\0').filter((f) => f !== '' && existsSync(f)); // a deleted file is still listed until committed
  } catch {
    return walk('.', new Set(['.git', OUT, 'node_modules', 'dist']));
  }
}

for (const file of [...repositoryFiles(), ...walk('dist')]) {
  const target = join(OUT, file);
  if (existsSync(target)) continue; // tsc wrote it: a JSON module it copies
  mkdirSync(dirname(target), { recursive: true });
  linkSync(file, target);
}
