import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdir, readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { dirname, join } from 'node:path';
import { runCli } from './helpers.js';

const CLI_DIR = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'src', 'cli');

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
