import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FrameBufferPool } from '../../../src/server/network/frame-buffers.js';
import { FrameReader } from '../../../src/server/network/frame-reader.js';

const KIB = 1024;

test('a recycled frame backs the next frame of a similar size; a much smaller one gets its own', () => {
  const pool = new FrameBufferPool(16 * KIB * KIB);
  const first = pool.acquire(1000 * KIB);
  assert.equal(first.length, 1000 * KIB);
  pool.recycle(first);
  assert.equal(pool.idleSize, 1024 * KIB); // rounded up to a whole number of 64 KiB steps
  const second = pool.acquire(990 * KIB);
  assert.equal(second.length, 990 * KIB);
  assert.equal(second.buffer, first.buffer);
  assert.equal(pool.idleSize, 0);
  pool.recycle(second);
  const small = pool.acquire(100 * KIB);
  assert.notEqual(small.buffer, first.buffer);
  assert.equal(pool.idleSize, 1024 * KIB);
});

test('buffers the pool did not make, small frames and recycling twice are ignored; idle memory is capped', () => {
  const pool = new FrameBufferPool(2 * 1024 * KIB);
  pool.recycle(Buffer.allocUnsafe(1024 * KIB)); // not the pool's
  const tiny = pool.acquire(100);
  pool.recycle(tiny);
  assert.equal(pool.idleSize, 0);
  const a = pool.acquire(1024 * KIB);
  const b = pool.acquire(1024 * KIB);
  const c = pool.acquire(1024 * KIB);
  assert.notEqual(a.buffer, b.buffer);
  pool.recycle(a);
  pool.recycle(a);
  assert.equal(pool.idleSize, 1024 * KIB);
  pool.recycle(b);
  pool.recycle(c); // over the cap: left to the garbage collector
  assert.equal(pool.idleSize, 2 * 1024 * KIB);
  const again = [pool.acquire(1024 * KIB), pool.acquire(1024 * KIB), pool.acquire(1024 * KIB)];
  assert.deepEqual(new Set(again.slice(0, 2).map((x) => x.buffer)), new Set([a.buffer, b.buffer]));
  assert.notEqual(again[2]!.buffer, c.buffer);
});

test('the frame reader copies a frame spread over chunks into the buffer it is given', () => {
  const pool = new FrameBufferPool(16 * KIB * KIB);
  const reader = new FrameReader(4 * 1024 * KIB, undefined, (n) => pool.acquire(n));
  const payload = Buffer.alloc(200 * KIB, 7);
  const prefix = Buffer.alloc(4);
  prefix.writeInt32BE(payload.length);
  reader.push(prefix);
  for (let at = 0; at < payload.length; at += 64 * KIB) reader.push(payload.subarray(at, at + 64 * KIB));
  const frame = reader.next();
  assert.ok(frame !== null);
  assert.ok(frame.equals(payload));
  pool.recycle(frame);
  assert.equal(pool.idleSize, 256 * KIB);
});
