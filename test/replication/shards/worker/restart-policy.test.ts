/**
 * When a shard worker that ended is started again (restart-policy.ts): at once after a worker that
 * ran a while, 1 s doubling after quick crashes in a row, never after the crash limit within the
 * window; old crashes leave the window.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { RestartPolicy } from '../../../../src/replication/shards/worker/restart-policy.js';

const MIN = 60_000;

test("the broker's first worker's first crash restarts at once, however soon after the start", () => {
  const p = new RestartPolicy();
  assert.deepEqual(p.crashed(1000, 0, false), { restartInMs: 0 });
});

test('a replacement that dies within a minute backs off 1 s, doubling with each quick crash in a row, capped', () => {
  const p = new RestartPolicy({ crashLimit: 10, maxBackoffMs: 5000 });
  let now = 0;
  assert.deepEqual(p.crashed((now += 10), 0, false), { restartInMs: 0 });
  const delays: number[] = [];
  for (let i = 0; i < 5; i++) {
    const started = now;
    const d = p.crashed((now += 500), started, true);
    assert.ok('restartInMs' in d);
    delays.push(d.restartInMs);
  }
  assert.deepEqual(delays, [1000, 2000, 4000, 5000, 5000]);
});

test('a replacement that ran longer than a minute restarts at once, and the backoff starts over', () => {
  const p = new RestartPolicy({ crashLimit: 10 });
  assert.deepEqual(p.crashed(0, 0, false), { restartInMs: 0 });
  assert.deepEqual(p.crashed(100, 0, true), { restartInMs: 1000 });
  assert.deepEqual(p.crashed(100 + 2 * MIN, 1100, true), { restartInMs: 0 });
  assert.deepEqual(p.crashed(100 + 2 * MIN + 10, 100 + 2 * MIN, true), { restartInMs: 1000 });
});

test('the third crash within 10 minutes leaves the shard offline, and says why', () => {
  const p = new RestartPolicy();
  assert.deepEqual(p.crashed(0, 0, false), { restartInMs: 0 });
  assert.deepEqual(p.crashed(2 * MIN, 0, true), { restartInMs: 0 });
  const third = p.crashed(9 * MIN, 2 * MIN, true);
  assert.ok('giveUp' in third, JSON.stringify(third));
  assert.match(third.giveUp, /3 crashes within 10 min \(the limit is 3\)/);
});

test('crashes older than the window are forgotten: three spread over more than 10 minutes all restart', () => {
  const p = new RestartPolicy();
  assert.deepEqual(p.crashed(0, 0, false), { restartInMs: 0 });
  assert.deepEqual(p.crashed(6 * MIN, 0, true), { restartInMs: 0 });
  assert.deepEqual(p.crashed(12 * MIN, 6 * MIN, true), { restartInMs: 0 });
  assert.ok('giveUp' in p.crashed(13 * MIN, 12 * MIN, true), 'the 2nd and 3rd and this one are within 10 minutes');
});

test('a crash limit of 1 never restarts (the timings are the constructor options)', () => {
  const p = new RestartPolicy({ crashLimit: 1, crashWindowMs: 1000 });
  const d = p.crashed(5, 0, false);
  assert.ok('giveUp' in d);
  assert.match(d.giveUp, /1 crash within 1 s \(the limit is 1\)/);
});
