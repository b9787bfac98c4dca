// The broker process's V8 heap setting (src/server/heap-tuning.ts): the old generation's growing
// factor is fixed at 3 (V8 prints the factor it applies with --trace-gc-verbose), an operator's own
// --heap-growing-percent is kept, and kafka-server-start's entry point applies it and logs which.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { run } from '../helpers/run.js';
import { nodeEntry } from '../helpers/built.js';

const TUNING = path.join(import.meta.dirname, '../../src/server/heap-tuning.ts');

/** Runs node with `nodeFlags`, calls tuneBrokerHeap, then a full GC; returns what it logged and the factor V8 applied in that GC. */
async function tunedGc(nodeFlags: string[]): Promise<{ line: string; factor: string | undefined }> {
  const script = `import { tuneBrokerHeap } from ${JSON.stringify(TUNING)}; console.log('LINE ' + tuneBrokerHeap()); globalThis.gc();`;
  const r = await run(process.execPath, [...nodeFlags, '--expose-gc', '--trace-gc-verbose', '--import', 'tsx', '--input-type=module', '-e', script], {
    timeoutMs: 60_000,
  });
  assert.equal(r.code, 0, r.stderr);
  const line = /^LINE (.*)$/m.exec(r.stdout)?.[1] ?? '';
  // "[HeapController] Limit: old size: 2624 KB, new limit: 11822 KB (3.0)": the factor applied. V8
  // traces in order on its own stream, so the last line is the GC the script asked for.
  const factors = [...r.stdout.matchAll(/\[HeapController\] Limit: .*\((\d+\.\d)\)$/gm)].map((m) => m[1]!);
  return { line, factor: factors.at(-1) };
}

test('tuneBrokerHeap: V8 grows the old generation to 3 times its live size, whatever its dynamic factor says', async () => {
  const { line, factor } = await tunedGc([]);
  assert.equal(line, 'V8 heap: --heap-growing-percent=200 (the old generation grows to 3 times its live size between full collections)');
  assert.equal(factor, '3.0');
});

test("tuneBrokerHeap: an operator's own --heap-growing-percent is kept", async () => {
  const { line, factor } = await tunedGc(['--heap-growing-percent=50']);
  assert.equal(line, "V8 heap: --heap-growing-percent=50 (from node's command line)");
  assert.equal(factor, '1.5');
});

test('kafka-server-start (main): the heap setting is applied and logged once the configuration is loaded', async () => {
  const dir = await mkdtemp(path.join(tmpdir(), 'fjord-heap-tuning-'));
  try {
    // log.dirs names a file: the broker stops after loading its configuration, before starting anything.
    const notADir = path.join(dir, 'file');
    await writeFile(notADir, '');
    const config = path.join(dir, 'server.properties');
    await writeFile(config, `log.dirs=${notADir}\nlisteners=PLAINTEXT://127.0.0.1:0\n`);
    const r = await run(process.execPath, [...nodeEntry('server/main'), config], {
      env: { ...process.env, FJORD_LOG_LEVEL: 'info', FJORD_LOG_FORMAT: 'json' },
      timeoutMs: 60_000,
    });
    assert.equal(r.code, 1, r.stderr);
    const messages = r.stdout
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => (JSON.parse(l) as { msg: string }).msg);
    const loaded = messages.findIndex((m) => m.startsWith('configuration loaded'));
    assert.ok(loaded >= 0, r.stdout);
    assert.equal(messages[loaded + 1], 'V8 heap: --heap-growing-percent=200 (the old generation grows to 3 times its live size between full collections)');
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
