import { test } from 'node:test';
import assert from 'node:assert/strict';
import { RequestMemoryPool, type MemoryWaiter, type NetworkLogger } from '../../../src/server/network/index.js';
import { CloseLog } from '../../../src/server/network/close-log.js';

function waiter(size: number, granted: number[]): MemoryWaiter {
  return { size, grant: () => granted.push(size) };
}

test('big frames stop short of the small reserve and are granted in arrival order', () => {
  const pool = new RequestMemoryPool(800); // small reserve: 100
  assert.equal(pool.smallReserve, 100);
  assert.equal(pool.tryReserve(500), true);
  assert.equal(pool.tryReserve(300), false); // 800 > 700 for a big frame
  const granted: number[] = [];
  pool.wait(waiter(300, granted));
  assert.equal(pool.tryReserve(150), false); // a later big frame does not overtake the waiting one
  assert.equal(pool.tryReserve(100), true); // small frames use the reserve
  assert.equal(pool.tryReserve(100), true);
  assert.equal(pool.tryReserve(100), true);
  assert.equal(pool.reserved, 800);
  assert.equal(pool.tryReserve(1), false); // full
  pool.wait(waiter(250, granted));
  pool.release(300); // 500 reserved: the waiting 300 would reach 800, over the big frames' 700
  assert.deepEqual(granted, []);
  pool.release(500); // 0 left: 300 then 250 are granted, in order
  assert.deepEqual(granted, [300, 250]);
  assert.equal(pool.reserved, 550);
  assert.equal(pool.waiting, 0);
  assert.equal(pool.peakReserved, 800);
});

test('with nothing reserved any frame is admitted, even one over the cap', () => {
  const pool = new RequestMemoryPool(100);
  assert.equal(pool.tryReserve(1000), true);
  assert.equal(pool.tryReserve(8), false);
  pool.release(1000);
  assert.equal(pool.reserved, 0);
});

test('a cancelled waiter is never granted; -1 is unbounded', () => {
  const pool = new RequestMemoryPool(100);
  assert.equal(pool.tryReserve(80), true);
  const granted: number[] = [];
  const w = waiter(80, granted);
  pool.wait(w);
  pool.cancel(w);
  pool.release(80);
  assert.deepEqual(granted, []);
  const unbounded = new RequestMemoryPool(-1);
  for (let i = 0; i < 10; i++) assert.equal(unbounded.tryReserve(1e9), true);
});

test('close reasons are logged at most 5 times per window, then with the number left out', () => {
  const lines: Array<{ level: string; fields: Record<string, unknown>; msg: string }> = [];
  const sink = (level: string) => (fields: Record<string, unknown>, msg: string) => lines.push({ level, fields, msg });
  const logger = { debug: sink('debug'), info: sink('info'), warn: sink('warn'), error: sink('error') };
  let clock = 1000;
  const log = new CloseLog(logger as unknown as NetworkLogger, 50, 5, () => clock);
  for (let i = 0; i < 20; i++) log.closed('receive-timeout', { connectionId: `c${i}` }, 'closing connection: frame not received in full');
  assert.equal(lines.length, 5);
  assert.equal(lines[0]!.level, 'info');
  assert.equal(lines[0]!.fields.reason, 'receive-timeout');
  assert.match(lines[0]!.msg, /^closing connection: frame not received/);
  assert.equal(log.count('receive-timeout'), 20);
  clock += 50; // the next window
  log.closed('receive-timeout', { connectionId: 'late' }, 'closing connection: frame not received in full');
  assert.equal(lines.length, 6);
  assert.equal(lines[5]!.fields.suppressedSinceLastLine, 15);
});

test('close log: a flood that stops still gets one line with the count left out, at the end of its window', async () => {
  const lines: { level: string; fields: Record<string, unknown>; msg: string }[] = [];
  const sink = (level: string) => (fields: Record<string, unknown>, msg: string) => lines.push({ level, fields, msg });
  const logger = { debug: sink('debug'), info: sink('info'), warn: sink('warn'), error: sink('error') };
  const log = new CloseLog(logger as unknown as NetworkLogger, 40, 2);
  for (let i = 0; i < 7; i++) log.closed('open-files', { clientPort: i }, 'refusing connection: the open-file limit has no room');
  assert.equal(lines.length, 2);
  const deadline = Date.now() + 2000;
  while (lines.length < 3 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10));
  assert.equal(lines.length, 3);
  assert.equal(lines[2]!.level, 'warn');
  assert.equal(lines[2]!.fields.suppressed, 5);
  assert.match(lines[2]!.msg, /5 more connections closed or refused \(open-files\)/);
});
