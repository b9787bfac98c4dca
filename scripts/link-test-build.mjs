// Completes the compiled test tree that `tsc -p tsconfig.test.json` writes into .test-build/
// (scripts/test.sh runs both): tsc emits only JavaScript, and the tests, tools and benches also
// reach files by paths relative to their own module: fixtures, .mjs helpers, bin/, config/,
// docs/, dist/, and TypeScript sources they spawn under tsx (a fuzz prober, a crash fixture).
// Each file of the repository that tsc did not write gets a symlink at its own path under
// .test-build/, so a compiled module finds it where its source did.
// What still differs there: a folder's listing (src/ holds .js and .js.map beside the .ts links)
// and the repository itself (git, npm pack, the build and its stamp): a test doing those takes
// its path from test/helpers/repo-root.ts.
// Run from the repository root, after tsc.
import { existsSync, mkdirSync, readdirSync, symlinkSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';

const OUT = '.test-build'; // tsconfig.test.json's outDir; test/helpers/repo-root.ts names it too
/** The folders tsconfig.test.json compiles: mirrored file by file, the others linked whole. */
const COMPILED = new Set(['src', 'test', 'tools', 'bench']);
/** Never mirrored: git's metadata, the output itself, and the modules (Node finds them by walking up). */
const SKIPPED = new Set(['.git', OUT, 'node_modules']);

function link(source) {
  const target = join(OUT, source);
  if (existsSync(target)) return; // tsc wrote it: a JSON module it copies
  mkdirSync(dirname(target), { recursive: true });
  symlinkSync(relative(dirname(target), source), target);
}

/** Links every file under `dir` that tsc did not write; folders are made, so that tsc's output and the links share them. */
function mirror(dir) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) mirror(path);
    else link(path);
  }
}

for (const entry of readdirSync('.', { withFileTypes: true })) {
  if (SKIPPED.has(entry.name)) continue;
  if (entry.isDirectory() && COMPILED.has(entry.name)) mirror(entry.name);
  else link(entry.name);
}
