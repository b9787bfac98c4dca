import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { RequestDispatcher } from '../../../src/server/network/index.js';
import { FrameClient, requestFrame, startServer } from './helpers.js';

test('muteFor: the response is written at once, the next request is read only after the mute', async () => {
  const dispatchedAt = new Map<number, number>();
  const dispatcher: RequestDispatcher = (frame, ctx) => {
    const id = frame.readInt32BE(4);
    dispatchedAt.set(id, Date.now());
    if (id === 1) ctx.muteFor?.(400);
    return Buffer.from(frame.subarray(4, 8));
  };
  const { server, port } = await startServer(dispatcher);
  const client = await FrameClient.connect(port);
  const sent = Date.now();
  client.write(requestFrame(1));
  await client.until(() => client.responses.length === 1, 'the first response');
  const firstAnswered = Date.now() - sent;
  client.write(requestFrame(2));
  client.write(requestFrame(3));
  await client.until(() => client.responses.length === 3, 'the later responses');
  assert.ok(firstAnswered < 350, `the throttled response itself is not delayed (${firstAnswered} ms)`);
  const waited = dispatchedAt.get(2)! - dispatchedAt.get(1)!;
  assert.ok(waited >= 390, `request 2 read ${waited} ms after the mute started`);
  assert.deepEqual(
    client.responses.map((r) => r.readInt32BE(0)),
    [1, 2, 3],
  );
  client.close();
  await server.stop();
});

test('muteFor from an asynchronous answer pauses reading too; the longest overlapping mute wins', async () => {
  const dispatchedAt = new Map<number, number>();
  const dispatcher: RequestDispatcher = async (frame, ctx) => {
    const id = frame.readInt32BE(4);
    dispatchedAt.set(id, Date.now());
    await new Promise((r) => setImmediate(r));
    if (id === 1) {
      ctx.muteFor?.(300);
      ctx.muteFor?.(100); // shorter: no effect
    }
    return Buffer.from(frame.subarray(4, 8));
  };
  const { server, port } = await startServer(dispatcher);
  const client = await FrameClient.connect(port);
  client.write(requestFrame(1));
  await client.until(() => client.responses.length === 1, 'the first response');
  client.write(requestFrame(2));
  await client.until(() => client.responses.length === 2, 'the second response');
  const waited = dispatchedAt.get(2)! - dispatchedAt.get(1)!;
  assert.ok(waited >= 290, `request 2 read ${waited} ms after request 1`);
  client.close();
  await server.stop();
});
