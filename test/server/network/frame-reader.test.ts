import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { FrameReader, FrameSizeError } from '../../../src/server/network/index.js';

function sizePrefixed(payload: Buffer): Buffer {
  const out = Buffer.alloc(4 + payload.length);
  out.writeInt32BE(payload.length, 0);
  payload.copy(out, 4);
  return out;
}

function drain(reader: FrameReader): Buffer[] {
  const frames: Buffer[] = [];
  for (let f = reader.next(); f !== null; f = reader.next()) frames.push(f);
  return frames;
}

test('any chunking of a frame stream yields the same frames (property)', () => {
  const payloadArb = fc.uint8Array({ minLength: 8, maxLength: 300 }).map((a) => Buffer.from(a));
  fc.assert(
    fc.property(fc.array(payloadArb, { maxLength: 20 }), fc.array(fc.integer({ min: 1, max: 64 }), { minLength: 1 }), (payloads, cuts) => {
      const stream = Buffer.concat(payloads.map(sizePrefixed));
      const reader = new FrameReader(1000);
      const frames: Buffer[] = [];
      let offset = 0;
      for (let i = 0; offset < stream.length; i++) {
        const len = cuts[i % cuts.length]!;
        reader.push(stream.subarray(offset, offset + len));
        offset += len;
        frames.push(...drain(reader));
      }
      assert.deepEqual(frames, payloads);
      assert.equal(reader.bufferedBytes, 0);
    }),
  );
});

test('a frame inside one chunk is a zero-copy view of it', () => {
  const chunk = Buffer.concat([sizePrefixed(Buffer.alloc(10, 1)), sizePrefixed(Buffer.alloc(12, 2))]);
  const reader = new FrameReader(100);
  reader.push(chunk);
  const [a, b] = drain(reader);
  assert.equal(a!.buffer, chunk.buffer);
  assert.equal(b!.buffer, chunk.buffer);
  assert.equal(b!.byteOffset, chunk.byteOffset + 18);
});

test('bad sizes throw as soon as the prefix is complete', () => {
  for (const [size, pattern] of [
    [-1, /negative/],
    [101, /larger than socket.request.max.bytes 100/],
    [7, /too small/],
  ] as const) {
    const reader = new FrameReader(100);
    const prefix = Buffer.alloc(4);
    prefix.writeInt32BE(size, 0);
    reader.push(prefix.subarray(0, 2));
    assert.equal(reader.next(), null);
    reader.push(prefix.subarray(2));
    assert.throws(
      () => reader.next(),
      (err: unknown) => err instanceof FrameSizeError && pattern.test(err.message),
    );
  }
});

test('mayHaveFrame: true once the bytes here may complete a frame, false while a known frame is still arriving', () => {
  const reader = new FrameReader(1 << 20);
  const frame = sizePrefixed(Buffer.alloc(100, 7));
  assert.equal(reader.mayHaveFrame, false);
  reader.push(frame.subarray(0, 3));
  assert.equal(reader.mayHaveFrame, false, 'not even a size prefix yet');
  reader.push(frame.subarray(3, 10));
  assert.equal(reader.mayHaveFrame, true, 'a prefix not parsed yet: the frame may be short');
  assert.equal(reader.frameSize(), 100);
  assert.equal(reader.mayHaveFrame, false, 'the size is known and the payload incomplete');
  reader.push(frame.subarray(10, 103));
  assert.equal(reader.mayHaveFrame, false);
  reader.push(frame.subarray(103));
  assert.equal(reader.mayHaveFrame, true);
  assert.equal(reader.next()?.length, 100);
  assert.equal(reader.mayHaveFrame, false);
});

test('frames of the api keys `ownMemory` names are copied into memory of their own, inside one chunk or spread over several (property)', () => {
  const payloadArb = fc
    .tuple(fc.constantFrom(0, 1, 3), fc.uint8Array({ minLength: 6, maxLength: 200 }))
    .map(([apiKey, rest]) => Buffer.concat([Buffer.from([apiKey >> 8, apiKey & 0xff]), Buffer.from(rest)]));
  fc.assert(
    fc.property(fc.array(payloadArb, { maxLength: 12 }), fc.array(fc.integer({ min: 1, max: 300 }), { minLength: 1 }), (payloads, cuts) => {
      const stream = Buffer.concat(payloads.map(sizePrefixed));
      const own = new Set<ArrayBufferLike>();
      const keys: number[] = [];
      const reader = new FrameReader(
        1000,
        undefined,
        (n, apiKey) => {
          keys.push(apiKey);
          const b = Buffer.from(new SharedArrayBuffer(n));
          own.add(b.buffer);
          return b;
        },
        (apiKey) => apiKey === 0,
      );
      const frames: Buffer[] = [];
      let offset = 0;
      for (let i = 0; offset < stream.length; i++) {
        const len = cuts[i % cuts.length]!;
        reader.push(Buffer.from(stream.subarray(offset, offset + len)));
        offset += len;
        frames.push(...drain(reader));
      }
      assert.deepEqual(frames, payloads);
      for (const f of frames) {
        // A Produce (api key 0) frame always sits in allocated memory; others only when spread over chunks.
        if (f.readInt16BE(0) === 0) assert.ok(own.has(f.buffer) && f.byteOffset === 0, 'a produce frame in memory of its own');
      }
      // `allocate` is told the frame's api key, even when its two bytes arrive in two chunks.
      for (const k of keys) assert.ok([0, 1, 3].includes(k));
    }),
  );
});
