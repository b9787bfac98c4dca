import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FrameAdmission, RequestMemoryPool } from '../../../src/server/network/request-memory.js';

test('a frame admission reserves, queues, is granted once, and hands its reservation over or back', () => {
  const pool = new RequestMemoryPool(800);
  let grants = 0;
  const a = new FrameAdmission(pool, () => grants++);
  assert.equal(a.admit(500), true);
  assert.equal(a.reservedBytes, 500);
  assert.equal(a.admit(500), true, 'an admitted frame is not reserved twice');
  assert.equal(pool.reserved, 500);

  const b = new FrameAdmission(pool, () => grants++);
  assert.equal(b.admit(300), false); // 800 > 700, the big frames' share
  assert.equal(b.waiting, true);
  assert.equal(a.take(), 500); // dispatched: the request holds the bytes now
  assert.equal(a.reservedBytes, 0);
  pool.release(500); // the request was answered
  assert.equal(grants, 1);
  assert.equal(b.waiting, false);
  assert.equal(b.reservedBytes, 300);
  b.drop(); // the connection closed mid-frame
  assert.equal(pool.reserved, 0);
});

test('a frame admission that leaves the queue gives nothing back twice and takes no late grant', () => {
  const pool = new RequestMemoryPool(800);
  const first = new FrameAdmission(pool, () => undefined);
  assert.equal(first.admit(700), true);
  let grants = 0;
  const queued = new FrameAdmission(pool, () => grants++);
  assert.equal(queued.admit(300), false);
  queued.drop();
  assert.equal(queued.waiting, false);
  first.drop();
  assert.equal(grants, 0);
  assert.equal(pool.reserved, 0);
  assert.equal(pool.waiting, 0);
});
