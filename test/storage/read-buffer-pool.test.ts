import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ReadBufferPool, sizeClassOf } from '../../src/storage/segment/read-buffer-pool.js';

test('a released buffer is lent again for a read of the same size class', () => {
  const pool = new ReadBufferPool(1024, 1 << 20);
  const a = pool.acquire(3000);
  assert.equal(a.length, 3000);
  assert.equal(a.buffer.byteLength, 3072);
  pool.release(a.subarray(10, 20)); // any view of it will do
  assert.equal(pool.freeBytes, 3072);
  const b = pool.acquire(2600);
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

test('size classes are quarter steps between powers of two', () => {
  const MiB = 1024 * 1024;
  assert.deepEqual([65536, 65537, 81920, 100_000, 10 * MiB, 10 * MiB + 1, 12 * MiB + 1, 15 * MiB, 16 * MiB].map(sizeClassOf), [
    65536,
    81920,
    81920,
    114688,
    10 * MiB,
    12 * MiB,
    14 * MiB,
    16 * MiB,
    16 * MiB,
  ]);
});

test('a Fetch of five 10 MiB partition reads is lent again from a 64 MiB pool', () => {
  const MiB = 1024 * 1024;
  const pool = new ReadBufferPool(64 * 1024, 64 * MiB);
  const first = Array.from({ length: 5 }, () => pool.acquire(10 * MiB));
  pool.releaseAll(first);
  assert.equal(pool.freeBytes, 50 * MiB);
  const again = Array.from({ length: 5 }, () => pool.acquire(10 * MiB - 100));
  assert.deepEqual(
    again.map((b) => first.some((f) => f.buffer === b.buffer)),
    [true, true, true, true, true],
  );
  assert.equal(pool.freeBytes, 0);
});
