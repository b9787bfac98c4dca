import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mayParkBehind } from '../../tools/fuzz/fuzz.js';
import { apiKeysOf } from '../../tools/fuzz/wire.js';

/** A size-prefixed frame of `apiKey` v0 with `body` bytes after the header's key and version. */
function frame(apiKey: number, body = 8): Buffer {
  const b = Buffer.alloc(4 + 4 + body);
  b.writeInt32BE(4 + body, 0);
  b.writeInt16BE(apiKey, 4);
  return b;
}

test('every frame of a pipelined input is looked at, not only the first', () => {
  const apiVersions = frame(18);
  const createTopics = frame(19);
  const fetch = frame(1);
  assert.deepEqual(apiKeysOf(Buffer.concat([apiVersions, createTopics, fetch]), 1 << 20), [18, 19, 1]);
  assert.equal(mayParkBehind(apiVersions), false);
  // The soak counted these as failed probes: a CreateTopics of thousands of partitions or a
  // long-poll Fetch behind an ApiVersions keeps the probe waiting, legitimately.
  assert.equal(mayParkBehind(Buffer.concat([apiVersions, createTopics])), true);
  assert.equal(mayParkBehind(Buffer.concat([apiVersions, frame(3), fetch])), true);
});

test('a frame cut short still names its key; bytes after a refused size are not frames', () => {
  const cut = frame(20).subarray(0, 7); // DeleteTopics, size and key there, the rest not sent
  assert.deepEqual(apiKeysOf(Buffer.concat([frame(18), cut]), 1 << 20), [18, 20]);
  const huge = Buffer.alloc(8);
  huge.writeInt32BE(0x7fffffff, 0);
  huge.writeInt16BE(19, 4);
  assert.deepEqual(apiKeysOf(Buffer.concat([huge, frame(19)]), 1 << 20), []);
});
