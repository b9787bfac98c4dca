import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { RequestDispatcher } from '../../../src/server/network/index.js';
import { FrameClient, requestFrame, startServer } from './helpers.js';

/** Answers with [correlation id, filler of `size` bytes, trailer] as separate buffers. */
function partsOf(correlationId: number, size: number): Buffer[] {
  const head = Buffer.alloc(4);
  head.writeInt32BE(correlationId, 0);
  return [head, Buffer.alloc(size, correlationId & 0xff), Buffer.from('end')];
}

const multipart: RequestDispatcher = async (frame) => {
  const correlationId = frame.readInt32BE(4);
  // Alternate small (coalesced) and large (corked, written by reference) multi-part answers.
  return partsOf(correlationId, correlationId % 2 === 0 ? 10 : 300_000);
};

test('multi-part responses arrive as one frame each, in order, small and large alike', async () => {
  const { server, port } = await startServer(multipart);
  const client = await FrameClient.connect(port);
  const count = 20;
  client.write(Buffer.concat(Array.from({ length: count }, (_, i) => requestFrame(i))));
  await client.until(() => client.responses.length === count, `${count} responses`, 10_000);
  client.responses.forEach((r, i) => assert.deepEqual(r, Buffer.concat(partsOf(i, i % 2 === 0 ? 10 : 300_000)), `response ${i}`));
  client.close();
  await server.stop();
});
