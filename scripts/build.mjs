#!/usr/bin/env node
// Builds src/ into dist/ with the TypeScript compiler, bundles the web console (console/, Preact
// and uPlot) into dist/console/assets/ with esbuild, and records what it built from.
//   node scripts/build.mjs               (npm run build) type-checks (src/ and console/) and emits, always
//   node scripts/build.mjs --if-changed  (npm start, prepack) emits without the type check, and
//                                        only when src/, console/, tsconfig.json or the compiler
//                                        differ from the last build's stamp (dist/.build-stamp)
// The emitted JavaScript is the same with or without the type check (tsc's --noCheck only skips
// the diagnostics), so a start from a fresh clone needs neither the check's time nor @types/node,
// a dev dependency that `npm ci --omit=dev` leaves out. The stamp is a hash of every source's
// path and content: an unchanged tree starts without loading the compiler at all (a few tens of
// ms), a touched-but-unchanged file does not rebuild, and any edit, new or deleted file does.
// It works on the project in the current directory (the repository root under npm).
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { basename, join } from 'node:path';
import { fingerprint, stampPath } from './build-fingerprint.mjs';

const ROOT = process.cwd();
const STAMP = stampPath(ROOT);
const CONFIG = join(ROOT, 'tsconfig.json');
// The console's browser code: not part of the broker's layers, bundled rather than compiled.
const CONSOLE_SRC = join(ROOT, 'console');
const CONSOLE_CONFIG = join(CONSOLE_SRC, 'tsconfig.json');
const CONSOLE_OUT = join(ROOT, 'dist', 'console', 'assets');

function upToDate(print) {
  if (!existsSync(STAMP)) return false;
  return readFileSync(STAMP, 'utf8').trim() === print;
}

/** Type-checks the console's browser code (its own tsconfig: DOM, Preact's JSX); nothing emitted. */
function checkConsole(ts) {
  const host = { ...ts.sys, onUnRecoverableConfigFileDiagnostic: (d) => report(ts, [d]) };
  const parsed = ts.getParsedCommandLineOfConfigFile(CONSOLE_CONFIG, {}, host);
  if (!parsed) return false;
  const program = ts.createProgram({ rootNames: parsed.fileNames, options: parsed.options, configFileParsingDiagnostics: parsed.errors });
  const diagnostics = ts.getPreEmitDiagnostics(program);
  if (diagnostics.length > 0) report(ts, diagnostics);
  return diagnostics.length === 0;
}

/**
 * Bundles console/src/main.tsx and style.css into dist/console/assets/ under hashed
 * names, which the console serves as immutable, and writes index.html naming them.
 */
async function bundleConsole() {
  if (!existsSync(join(CONSOLE_SRC, 'src', 'main.tsx'))) return true; // a tree without the console
  let esbuild;
  try {
    esbuild = await import(createRequire(join(ROOT, 'package.json')).resolve('esbuild'));
  } catch {
    console.error('build: esbuild is not installed (run npm ci first)');
    return false;
  }
  rmSync(CONSOLE_OUT, { recursive: true, force: true });
  mkdirSync(CONSOLE_OUT, { recursive: true });
  const result = await esbuild.build({
    absWorkingDir: ROOT,
    entryPoints: { app: join(CONSOLE_SRC, 'src', 'main.tsx'), style: join(CONSOLE_SRC, 'src', 'style.css') },
    bundle: true,
    format: 'esm',
    target: 'es2022',
    minify: true,
    jsx: 'automatic',
    jsxImportSource: 'preact',
    entryNames: '[name]-[hash]',
    outdir: CONSOLE_OUT,
    metafile: true,
    logLevel: 'error',
  }).catch(() => null);
  if (!result) return false;
  const outputs = Object.keys(result.metafile.outputs).map((f) => basename(f));
  const tags = [
    ...outputs.filter((f) => f.endsWith('.css')).map((f) => `<link rel="stylesheet" href="/assets/${f}">`),
    ...outputs.filter((f) => f.endsWith('.js')).map((f) => `<script type="module" src="/assets/${f}"></script>`),
  ];
  const template = readFileSync(join(CONSOLE_SRC, 'index.html'), 'utf8');
  writeFileSync(join(CONSOLE_OUT, 'index.html'), template.replace('<!-- assets -->', tags.join('\n    ')));
  return true;
}

function compile(typeCheck) {
  let ts;
  try {
    ts = createRequire(join(ROOT, 'package.json'))('typescript');
  } catch {
    console.error('build: the TypeScript compiler is not installed (run npm ci first)');
    return false;
  }
  const host = { ...ts.sys, onUnRecoverableConfigFileDiagnostic: (d) => report(ts, [d]) };
  // Without the check, no type library is needed (@types/node is a dev dependency).
  const extra = typeCheck ? {} : { noCheck: true, types: [] };
  const parsed = ts.getParsedCommandLineOfConfigFile(CONFIG, extra, host);
  if (!parsed) return false;
  const program = ts.createProgram({ rootNames: parsed.fileNames, options: parsed.options, configFileParsingDiagnostics: parsed.errors });
  const before = typeCheck ? ts.getPreEmitDiagnostics(program) : [...program.getConfigFileParsingDiagnostics(), ...program.getOptionsDiagnostics(), ...program.getSyntacticDiagnostics()];
  const emitted = program.emit();
  const diagnostics = [...before, ...emitted.diagnostics];
  if (diagnostics.length > 0) report(ts, diagnostics);
  const consoleChecked = !typeCheck || !existsSync(CONSOLE_CONFIG) || checkConsole(ts);
  return diagnostics.length === 0 && !emitted.emitSkipped && consoleChecked;
}

/** Prints diagnostics as tsc does (with colour and source context on a terminal). */
function report(ts, list) {
  const format = process.stderr.isTTY ? ts.formatDiagnosticsWithColorAndContext : ts.formatDiagnostics;
  process.stderr.write(format(list, { getCanonicalFileName: (f) => f, getCurrentDirectory: () => ROOT, getNewLine: () => '\n' }));
}

const ifChanged = process.argv.includes('--if-changed');
const print = fingerprint(ROOT);
if (ifChanged && upToDate(print)) process.exit(0);
if (ifChanged) console.error(existsSync(STAMP) ? 'build: src/ changed since the last build; building dist/' : 'build: building src/ into dist/');
// dist/ changes from here on: a build that fails (or is interrupted) leaves no stamp, so that
// going back to the sources of the last stamp cannot keep this build's output.
rmSync(STAMP, { force: true });
const started = Date.now();
if (!compile(!ifChanged) || !(await bundleConsole())) {
  console.error('build: failed');
  process.exit(1);
}
// A source edited while this built may be in dist/ or not: no stamp then, so the next build runs.
if (fingerprint(ROOT) === print) writeFileSync(STAMP, `${print}\n`);
else console.error('build: sources changed while building; dist/ is left without a stamp');
if (ifChanged) console.error(`build: dist/ built in ${((Date.now() - started) / 1000).toFixed(1)}s`);
