import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ReadBufferPool } from '../../src/storage/segment/read-buffer-pool.js';

test('a released buffer is lent again for a read of the same size class', () => {
  const pool = new ReadBufferPool(1024, 1 << 20);
  const a = pool.acquire(3000);
  assert.equal(a.length, 3000);
  assert.equal(a.buffer.byteLength, 4096);
  pool.release(a.subarray(10, 20)); // any view of it will do
  assert.equal(pool.freeBytes, 4096);
  const b = pool.acquire(2500);
  assert.equal(b.buffer, a.buffer);
  assert.equal(pool.freeBytes, 0);
});

test('double releases, foreign buffers and small reads are ignored', () => {
  const pool = new ReadBufferPool(1024, 1 << 20);
  const a = pool.acquire(2000);
  pool.release(a);
  pool.release(a);
  assert.equal(pool.freeBytes, 2048);
  pool.release(Buffer.alloc(5000));
  pool.release(pool.acquire(100)); // below minBytes: a plain allocation
  assert.equal(pool.freeBytes, 2048);
  const b = pool.acquire(2000);
  const c = pool.acquire(2000);
  assert.notEqual(b.buffer, c.buffer, 'one free buffer is never lent twice');
});

test('free memory is capped; releases beyond the cap are left to the GC', () => {
  const pool = new ReadBufferPool(1024, 8192);
  const bufs = [pool.acquire(4096), pool.acquire(4096), pool.acquire(4096)];
  pool.releaseAll(bufs);
  assert.equal(pool.freeBytes, 8192);
});
