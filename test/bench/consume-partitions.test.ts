/**
 * bench/consume-partitions.ts as a user runs it: without a baseline it prints its usage on one
 * line and exits 1 (a full run builds two brokers and takes minutes: bench/RESULTS.md has one).
 */
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { run } from '../helpers/run.js';

it('bench/consume-partitions.ts without a baseline: one usage line, exit 1', async () => {
  const r = await run(process.execPath, ['--import', 'tsx', 'bench/consume-partitions.ts'], { timeoutMs: 60_000 });
  assert.equal(r.code, 1);
  assert.equal(r.stderr.trim(), 'consume-partitions: usage: bench/consume-partitions.ts BASELINE_DIR_OR_REF [records] [repeats] [--split]');
});
