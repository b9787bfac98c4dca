import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SharedFrameBuffers, copyIntoShared } from '../../../src/server/network/shared-frame-buffers.js';

const KIB = 1024;

test('a shared frame is reused only once its last holder released it (the network layer and each shard reading it)', () => {
  const pool = new SharedFrameBuffers(16 * KIB * KIB);
  const frame = pool.acquire(300 * KIB);
  const memory = frame.buffer as SharedArrayBuffer;
  assert.ok(memory instanceof SharedArrayBuffer);
  assert.equal(frame.length, 300 * KIB);
  assert.equal(pool.holdersOf(memory), 1, 'held by whoever acquired it');
  pool.retain(memory); // shard 1
  pool.retain(memory); // shard 2
  pool.release(memory); // answered: the network layer is done first
  assert.equal(pool.holdersOf(memory), 2);
  assert.notEqual(pool.acquire(300 * KIB).buffer, memory, 'not reused while shards still read it');
  pool.release(memory);
  pool.release(memory);
  assert.equal(pool.holdersOf(memory), 0);
  assert.equal(pool.idleSize, 320 * KIB, 'back for reuse, at its capacity (64 KiB steps)');
  const next = pool.acquire(290 * KIB);
  assert.equal(next.buffer, memory, 'a frame of the same capacity reuses it');
  assert.equal(pool.idleSize, 0);
  pool.release(memory);
  pool.release(memory); // once too often: ignored, never listed twice
  assert.equal(pool.idleSize, 320 * KIB);
  assert.equal(pool.acquire(260 * KIB).buffer, memory, 'a frame up to a quarter smaller than the capacity reuses it too');
  pool.release(memory);
  assert.notEqual(pool.acquire(200 * KIB).buffer, memory, 'a much smaller one does not pin it');
});

test('small frames get power-of-two capacities; memory not from the pool is ignored; idle memory is capped', () => {
  const pool = new SharedFrameBuffers(8 * KIB);
  const tiny = pool.acquire(100);
  assert.equal(tiny.buffer.byteLength, KIB);
  const small = pool.acquire(3 * KIB);
  assert.equal(small.buffer.byteLength, 4 * KIB);
  const foreign = new SharedArrayBuffer(KIB);
  pool.retain(foreign);
  pool.release(foreign);
  assert.equal(pool.holdersOf(foreign), 0);
  assert.equal(pool.idleSize, 0);
  pool.release(tiny.buffer as SharedArrayBuffer);
  pool.release(small.buffer as SharedArrayBuffer);
  assert.equal(pool.idleSize, 5 * KIB);
  const big = pool.acquire(6 * KIB);
  pool.release(big.buffer as SharedArrayBuffer); // 8 KiB more would pass the 8 KiB cap: left to the garbage collector
  assert.equal(pool.idleSize, 5 * KIB);
  assert.equal(pool.acquire(700).buffer, tiny.buffer);
});

test('copyIntoShared copies every byte whatever the source and target alignment, across its staging pieces', () => {
  const source = Buffer.allocUnsafeSlow(200 * KIB + 16);
  for (let i = 0; i < source.length; i++) source[i] = (i * 131 + 7) & 0xff;
  const target = Buffer.from(new SharedArrayBuffer(200 * KIB + 32));
  for (const [from, at, length] of [
    [0, 0, 200 * KIB],
    [3, 0, 200 * KIB],
    [5, 9, 130 * KIB + 3],
    [1, 2, 40],
    [7, 1, 64 * KIB],
  ] as const) {
    target.fill(0);
    copyIntoShared(source.subarray(from, from + length), target, at);
    assert.ok(target.subarray(at, at + length).equals(source.subarray(from, from + length)), `from ${from} at ${at}`);
    assert.equal(target[at + length], 0, 'nothing past the end');
  }
});
