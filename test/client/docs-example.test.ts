import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { startTestBroker } from '../helpers/broker.js';

test('the docs/client.md quick start runs against a real broker', { timeout: 60000 }, async () => {
  const b = await startTestBroker();
  try {
    const { code, stdout, stderr } = await new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
      const child = spawn(process.execPath, ['--import', 'tsx', 'examples/client-quickstart.ts', b.bootstrap]);
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
      child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
      child.on('close', (c) => resolve({ code: c, stdout, stderr }));
    });
    assert.equal(code, 0, stderr);
    assert.equal(stdout.match(/^sent /gm)?.length, 3);
    assert.deepEqual(stdout.match(/received \w+ = \w+/g)?.sort(), ['received fjord = FJORD', 'received hello = HELLO', 'received world = WORLD']);
  } finally {
    await b.stop();
  }
});
