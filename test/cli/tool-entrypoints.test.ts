import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { readdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { runCli } from './helpers.js';
import { run } from '../helpers/run.js';
import { TOOL_CLASSES } from '../../src/cli/common/tool-classes.js';
import { REPO_ROOT } from '../helpers/repo-root.js';

const CLI_DIR = join(REPO_ROOT, 'src', 'cli');

async function tools(): Promise<string[]> {
  return (await readdir(CLI_DIR)).filter((f) => /^kafka-.*\.ts$/.test(f)).map((f) => f.replace(/\.ts$/, ''));
}

test('every tool starts with a node shebang, so the emitted JS runs as an npm bin', async () => {
  const names = await tools();
  assert.ok(names.length >= 9, `expected the kafka-* tools, found ${names.join(', ')}`);
  for (const name of names) {
    const first = (await readFile(join(CLI_DIR, `${name}.ts`), 'utf8')).split('\n', 1)[0];
    assert.equal(first, '#!/usr/bin/env node', `${name}.ts`);
  }
});

test('every tool answers --help with its usage and exit code 0', { timeout: 200000 }, async () => {
  // Four at a time: each is a tsx process, and twenty at once overran the timeout on a busy machine.
  const names = await tools();
  const results: { name: string; r: Awaited<ReturnType<typeof runCli>> }[] = [];
  for (let i = 0; i < names.length; i += 4) {
    results.push(...(await Promise.all(names.slice(i, i + 4).map(async (name) => ({ name, r: await runCli(name, ['--help'], { timeoutMs: 60000 }) })))));
  }
  for (const { name, r } of results) {
    assert.equal(r.code, 0, `${name} --help exited ${r.code}: ${r.stderr}`);
    assert.match(r.stdout, /^Usage: kafka-[\w-]+(\.sh)? \[options\]/, name);
  }
});

const ROOT = join(CLI_DIR, '..', '..');

test('every script in bin/ is an npm bin of package.json and the reverse, executable, its dist target built', async () => {
  const scripts = (await readdir(join(ROOT, 'bin'), { withFileTypes: true })).filter((e) => e.isFile()).map((e) => e.name);
  const pkg = JSON.parse(await readFile(join(ROOT, 'package.json'), 'utf8')) as { bin: Record<string, string> };
  assert.deepEqual(Object.keys(pkg.bin).sort(), [...scripts].sort(), 'package.json "bin" names = bin/ files');
  for (const [name, path] of Object.entries(pkg.bin)) assert.equal(path, `bin/${name}`, `package.json bin ${name}`);
  for (const name of scripts) {
    const file = join(ROOT, 'bin', name);
    assert.ok(((await stat(file)).mode & 0o111) === 0o111, `bin/${name} is executable by everyone (npm links it as is)`);
    const text = await readFile(file, 'utf8');
    assert.match(text.split('\n', 1)[0]!, /^#!\/usr\/bin\/env bash$/, `bin/${name} shebang`);
    for (const [target] of text.matchAll(/dist\/[\w/-]+\.js/g)) {
      assert.ok(existsSync(join(ROOT, target)), `bin/${name} runs ${target}, which is missing (run npm run build first)`);
    }
  }
});

/** Runs a bin/ script from the repository root, as a user does. */
const bin = (name: string, args: string[]) => run(join(ROOT, 'bin', name), args, { timeoutMs: 60_000 });

test("kafka-run-class.sh runs each classic class name's tool: --help as the tool's own script", { timeout: 120_000 }, async () => {
  const built = Object.entries(TOOL_CLASSES).filter(([, tool]) => existsSync(join(ROOT, 'dist', 'cli', `${tool}.js`)));
  assert.ok(built.length >= 30, `the classes of the tools this build has, found ${built.length}`);
  for (let i = 0; i < built.length; i += 4) {
    const batch = built.slice(i, i + 4);
    const results = await Promise.all(batch.map(([cls]) => bin('kafka-run-class.sh', [cls, '--help'])));
    for (const [j, r] of results.entries()) {
      const [cls, tool] = batch[j]!;
      assert.equal(r.code, 0, `${cls} --help exited ${r.code}: ${r.stderr}`);
      assert.equal(r.stderr, '', cls);
      assert.match(r.stdout, new RegExp(`^Usage: ${tool}\\.sh \\[options\\]`), cls);
    }
  }
});

test('kafka-run-class.sh <class> exits and answers as the tool: a wrong flag, the same line and code as kafka-topics.sh', { timeout: 120_000 }, async () => {
  const [viaClass, viaScript] = await Promise.all([bin('kafka-run-class.sh', ['kafka.admin.TopicCommand', '--bogus']), bin('kafka-topics.sh', ['--bogus'])]);
  assert.equal(viaScript.code, 1);
  assert.match(viaScript.stderr, /^kafka-topics\.sh: .*--bogus/);
  assert.deepEqual(viaClass, viaScript);
  // Run directly (not through bin/), kafka-run-class runs the tool as its child: the same answer.
  const direct = await runCli('kafka-run-class', ['kafka.admin.TopicCommand', '--bogus'], { timeoutMs: 60_000 });
  assert.deepEqual(direct, viaScript);
});

test("kafka-run-class.sh with a class Fjord has no tool for: the JVM's line, exit 1", async () => {
  const missing = Object.entries(TOOL_CLASSES).filter(([, tool]) => !existsSync(join(ROOT, 'dist', 'cli', `${tool}.js`)));
  for (const cls of ['kafka.tools.NoSuchTool', 'org.example.Main', ...missing.map(([c]) => c)]) {
    const r = await bin('kafka-run-class.sh', [cls, '--help']);
    assert.equal(r.code, 1, cls);
    assert.equal(r.stdout, '', cls);
    assert.equal(r.stderr, `Error: Could not find or load main class ${cls}\n`);
  }
  const usage = await bin('kafka-run-class.sh', []);
  assert.equal(usage.code, 1);
  assert.match(usage.stdout, /^Usage: kafka-run-class\.sh .*\n(.*\n)*  kafka\.tools\.GetOffsetShell\n/);
});
