/**
 * scripts/build.mjs as `npm start` and `npm pack` run it (`--if-changed`) and as `npm run build`
 * does: on a small project in a temp dir (its own src/, tsconfig.json and the repository's
 * compiler), so that rebuilding never touches the repository's dist/ that other tests run; then
 * the no-change check on the repository's own tree, timed.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { copyFile, mkdir, mkdtemp, readFile, rm, stat, symlink, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { run, type RunResult } from '../helpers/run.js';
import { REPO_ROOT } from '../helpers/repo-root.js';

const ROOT = REPO_ROOT;
const BUILD = join(ROOT, 'scripts', 'build.mjs');

/** The environment without npm's own variables (an outer `npm test` sets them). */
function cleanEnv(): NodeJS.ProcessEnv {
  return Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('npm_')));
}

async function build(dir: string, ...args: string[]): Promise<RunResult & { ms: number }> {
  const started = Date.now();
  const r = await runIn(dir, process.execPath, [join(dir, 'scripts', 'build.mjs'), ...args]);
  return { ...r, ms: Date.now() - started };
}

/** run() in a working directory: through sh, so the script sees the project as its cwd. */
function runIn(dir: string, cmd: string, args: string[]): Promise<RunResult> {
  const quoted = [cmd, ...args].map((a) => `'${a.replace(/'/g, `'\\''`)}'`).join(' ');
  return run('sh', ['-c', `cd '${dir}' && exec ${quoted}`], { env: cleanEnv(), timeoutMs: 120_000 });
}

/**
 * A two-file TypeScript project with the repository's tsconfig settings and compiler, no @types;
 * `noLib` (no standard library to parse) makes each of its builds take a fraction of a second.
 */
async function smallProject(opts: { noLib: boolean }): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'fjord-build-check-'));
  await mkdir(join(dir, 'scripts'));
  await mkdir(join(dir, 'src', 'lib'), { recursive: true });
  await mkdir(join(dir, 'node_modules'));
  await copyFile(BUILD, join(dir, 'scripts', 'build.mjs'));
  await copyFile(join(ROOT, 'scripts', 'build-fingerprint.mjs'), join(dir, 'scripts', 'build-fingerprint.mjs'));
  const tsconfig = await readFile(join(ROOT, 'tsconfig.json'), 'utf8');
  // Not even @types/node for the type-checked builds: its declarations take seconds to check.
  const own = tsconfig.replace('"types": ["node"]', '"types": []');
  assert.notEqual(own, tsconfig);
  await writeFile(join(dir, 'tsconfig.json'), opts.noLib ? own.replace('"strict": true,', '"strict": true, "noLib": true,') : own);
  await writeFile(join(dir, 'package.json'), '{ "name": "small", "type": "module" }\n');
  // Only the compiler: npm ci --omit=dev leaves out @types/node, which tsconfig.json names.
  await symlink(join(ROOT, 'node_modules', 'typescript'), join(dir, 'node_modules', 'typescript'));
  const main = "import { greet } from './lib/greet.js';\ndeclare const console: { log(line: string): void };\nconsole.log(greet('one'));\n";
  await writeFile(join(dir, 'src', 'main.ts'), main);
  await writeFile(join(dir, 'src', 'lib', 'greet.ts'), "export function greet(name: string): string {\n  return 'hello ' + name;\n}\n");
  return dir;
}

const mtimeMs = async (file: string): Promise<number> => (await stat(file)).mtimeMs;

test('build.mjs --if-changed builds a fresh tree, then skips until a source, tsconfig.json or the file set changes', async () => {
  const dir = await smallProject({ noLib: true });
  try {
    const main = join(dir, 'dist', 'main.js');
    const first = await build(dir, '--if-changed');
    assert.equal(first.code, 0, first.stderr);
    assert.match(first.stderr, /building src\/ into dist\//);
    assert.equal((await runIn(dir, process.execPath, [main])).stdout, 'hello one\n');
    const stamp = (await readFile(join(dir, 'dist', '.build-stamp'), 'utf8')).trim();
    assert.match(stamp, /^[0-9a-f]{64}$/);

    // Nothing changed: silent, and dist/ is not rewritten.
    const before = await mtimeMs(main);
    const again = await build(dir, '--if-changed');
    assert.equal(again.code, 0, again.stderr);
    assert.equal(again.stderr + again.stdout, '');
    assert.equal(await mtimeMs(main), before);

    // A touched but unchanged file is no change (the stamp hashes contents, not times).
    const greet = join(dir, 'src', 'lib', 'greet.ts');
    const later = new Date(Date.now() + 5000);
    await utimes(greet, later, later);
    const touched = await build(dir, '--if-changed');
    assert.equal(touched.stderr, '');
    assert.equal(await mtimeMs(main), before);

    // An edited source rebuilds, and the new code runs.
    await writeFile(greet, "export function greet(name: string): string {\n  return 'hi ' + name;\n}\n");
    const edited = await build(dir, '--if-changed');
    assert.equal(edited.code, 0, edited.stderr);
    assert.match(edited.stderr, /src\/ changed since the last build/);
    assert.equal((await runIn(dir, process.execPath, [main])).stdout, 'hi one\n');
    assert.notEqual((await readFile(join(dir, 'dist', '.build-stamp'), 'utf8')).trim(), stamp);
    assert.equal((await build(dir, '--if-changed')).stderr, '');

    // A new file under src/ rebuilds.
    await writeFile(join(dir, 'src', 'extra.ts'), 'export const extra = 1;\n');
    const added = await build(dir, '--if-changed');
    assert.match(added.stderr, /changed since the last build/);
    assert.equal((await stat(join(dir, 'dist', 'extra.js'))).isFile(), true);

    // tsconfig.json is part of what dist/ is built from.
    await writeFile(join(dir, 'tsconfig.json'), (await readFile(join(dir, 'tsconfig.json'), 'utf8')).replace('"sourceMap": true', '"sourceMap": false'));
    const reconfigured = await build(dir, '--if-changed');
    assert.match(reconfigured.stderr, /changed since the last build/);

    // A removed dist/ (its stamp with it) builds again.
    await rm(join(dir, 'dist'), { recursive: true });
    const rebuilt = await build(dir, '--if-changed');
    assert.match(rebuilt.stderr, /building src\/ into dist\//);
    assert.equal((await runIn(dir, process.execPath, [main])).stdout, 'hi one\n');
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test('build.mjs: a type error fails the checked build (npm run build) and leaves no stamp; --if-changed emits it anyway', async () => {
  const dir = await smallProject({ noLib: false });
  try {
    const greet = join(dir, 'src', 'lib', 'greet.ts');
    const good = await readFile(greet, 'utf8');
    const main = join(dir, 'dist', 'main.js');
    const clean = await build(dir);
    assert.equal(clean.code, 0, clean.stderr);
    assert.equal(clean.stderr + clean.stdout, '');
    assert.match(await readFile(join(dir, 'dist', '.build-stamp'), 'utf8'), /^[0-9a-f]{64}\n$/);
    await writeFile(greet, 'export function greet(name: string): string {\n  return 42;\n}\n');
    const checked = await build(dir);
    assert.equal(checked.code, 1);
    assert.match(checked.stderr, /TS2322/);
    assert.match(checked.stderr, /build: failed/);
    await assert.rejects(stat(join(dir, 'dist', '.build-stamp')), 'the failed build removed the stamp');
    // tsc emitted the failing sources: going back to the last stamped ones must build again.
    assert.equal((await runIn(dir, process.execPath, [main])).stdout, '42\n');
    await writeFile(greet, good);
    const back = await build(dir, '--if-changed');
    assert.match(back.stderr, /building src\/ into dist\//);
    assert.equal((await runIn(dir, process.execPath, [main])).stdout, 'hello one\n');
    // Starting needs runnable JavaScript, not a clean type check: the emit is the same either way.
    await writeFile(greet, 'export function greet(name: string): string {\n  return 42;\n}\n');
    const start = await build(dir, '--if-changed');
    assert.equal(start.code, 0, start.stderr);
    assert.equal((await runIn(dir, process.execPath, [main])).stdout, '42\n');
    // A syntax error fails both.
    await writeFile(greet, 'export function greet(name: string: string {\n');
    const broken = await build(dir, '--if-changed');
    assert.equal(broken.code, 1);
    assert.match(broken.stderr, /TS1005/);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test('build.mjs bundles console/ into dist/console/assets/ under hashed names, and --if-changed rebuilds when a console source changes', async () => {
  const dir = await smallProject({ noLib: true });
  try {
    await symlink(join(ROOT, 'node_modules', 'esbuild'), join(dir, 'node_modules', 'esbuild'));
    await mkdir(join(dir, 'console', 'src'), { recursive: true });
    await writeFile(join(dir, 'console', 'index.html'), '<!doctype html>\n<head>\n<!-- assets -->\n</head>\n');
    await writeFile(join(dir, 'console', 'src', 'main.tsx'), "document.title = 'one';\n");
    await writeFile(join(dir, 'console', 'src', 'style.css'), 'body { margin: 0; }\n');
    const assets = join(dir, 'dist', 'console', 'assets');
    const first = await build(dir, '--if-changed');
    assert.equal(first.code, 0, first.stderr);
    const html = await readFile(join(assets, 'index.html'), 'utf8');
    const script = /src="\/assets\/(app-[A-Z0-9]+\.js)"/.exec(html)?.[1];
    assert.ok(script && /href="\/assets\/style-[A-Z0-9]+\.css"/.test(html), html);
    assert.match(await readFile(join(assets, script), 'utf8'), /one/);
    assert.equal((await build(dir, '--if-changed')).stderr, '');
    // An edited console source is a change: a new bundle under a new name, the old one gone.
    await writeFile(join(dir, 'console', 'src', 'main.tsx'), "document.title = 'two';\n");
    const edited = await build(dir, '--if-changed');
    assert.equal(edited.code, 0, edited.stderr);
    assert.match(edited.stderr, /changed since the last build/);
    const next = /src="\/assets\/(app-[A-Z0-9]+\.js)"/.exec(await readFile(join(assets, 'index.html'), 'utf8'))?.[1];
    assert.ok(next && next !== script);
    assert.match(await readFile(join(assets, next), 'utf8'), /two/);
    await assert.rejects(stat(join(assets, script)));
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test("build.mjs --if-changed on the repository's own tree: a no-op well under a second when src/ did not change", async () => {
  // The first call builds if the stamp is stale (after a bare `npx tsc`); the suite's own build
  // (npm run build in scripts/test.sh) leaves it fresh, and the emit is identical either way.
  const first = await runIn(ROOT, process.execPath, [BUILD, '--if-changed']);
  assert.equal(first.code, 0, first.stderr);
  const main = join(ROOT, 'dist', 'server', 'main.js');
  const before = await mtimeMs(main);
  const started = Date.now();
  const noop = await runIn(ROOT, process.execPath, [BUILD, '--if-changed']);
  const ms = Date.now() - started;
  assert.equal(noop.code, 0, noop.stderr);
  assert.equal(noop.stderr + noop.stdout, '');
  assert.equal(await mtimeMs(main), before);
  assert.ok(ms < 1500, `the no-change check took ${ms} ms`);
});
