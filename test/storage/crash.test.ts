/**
 * kill -9 at random points while appending: every acknowledged append must read back intact
 * after recovery, and the log must accept appends again.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { LogManager } from '../../src/storage/manager/log-manager.js';
import { CapturingLogger, readAll, testConfig, withTempDir } from './helpers.js';

const fixture = fileURLToPath(new URL('./fixtures/appender.ts', import.meta.url));

interface Ack {
  values: Map<number, string>;
  ready: number;
}

function runAndKill(dir: string, round: number, killAfterAcks: number): Promise<Ack> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', fixture, dir, String(round), '65536'], { stdio: ['ignore', 'pipe', 'pipe'] });
    const values = new Map<number, string>();
    let ready = -1;
    let acks = 0;
    let pending = '';
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.stdout.on('data', (d: Buffer) => {
      pending += d.toString();
      const lines = pending.split('\n');
      pending = lines.pop()!;
      for (const line of lines) {
        const parts = line.split(' ');
        if (parts[0] === 'ready') ready = Number(parts[1]);
        if (parts[0] !== 'ack') continue;
        const [, r, seq, first, , count] = parts;
        for (let i = 0; i < Number(count); i++) values.set(Number(first) + i, `${r}-${seq}-${i}-`);
        if (++acks === killAfterAcks) child.kill('SIGKILL');
      }
    });
    child.on('exit', (code, signal) => {
      if (signal !== 'SIGKILL') reject(new Error(`appender exited with ${code}: ${stderr}`));
      else resolve({ values, ready });
    });
  });
}

test('every acknowledged append survives SIGKILL at random points', { timeout: 180000 }, async () => {
  await withTempDir(async (dir) => {
    const expected = new Map<number, string>();
    let seed = 12345;
    const rand = (n: number): number => {
      seed = (seed * 1103515245 + 12345) & 0x7fffffff;
      return seed % n;
    };
    for (let round = 0; round < 6; round++) {
      const { values, ready } = await runAndKill(dir, round, 50 + rand(1500));
      assert.ok(ready >= 0, 'child started');
      for (const [o, v] of values) expected.set(o, v);
    }
    const logger = new CapturingLogger();
    const mgr = await LogManager.open({ logDirs: [dir], defaults: testConfig({ segmentBytes: 65536 }), logger, cleanerEnabled: false });
    const log = mgr.getLog('crash', 0)!;
    const all = await readAll(log);
    const byOffset = new Map(all.map((r) => [r.offset, r.value!]));
    assert.ok(expected.size > 300);
    for (const [offset, prefix] of expected) {
      const got = byOffset.get(offset);
      assert.ok(got !== undefined && got.startsWith(prefix), `offset ${offset}: expected ${prefix}…, got ${got}`);
    }
    assert.deepEqual(
      all.map((r) => r.offset),
      [...Array(all.length).keys()],
      'offsets are dense from 0',
    );
    await mgr.shutdown();
  });
});
