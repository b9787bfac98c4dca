// Responses waiting to be written to one connection are capped: a peer that pipelines requests
// with big answers and reads none of them makes the broker stop reading its requests, instead
// of building every answer (issue 21, F2: ten DescribeConfigs with unread answers held 1.5 GB).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { once } from 'node:events';
import type { RequestDispatcher } from '../../../src/server/network/index.js';
import { FrameClient, requestFrame, startServer, waitFor } from './helpers.js';

const MiB = 1024 * 1024;

/** Reads every byte the socket gets from now on; resolves once `bytes` arrived. */
function drain(socket: net.Socket, bytes: number, timeoutMs = 20000): Promise<void> {
  let received = 0;
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`only ${received} of ${bytes} response bytes arrived`)), timeoutMs);
    socket.on('data', (chunk: Buffer) => {
      received += chunk.length;
      if (received >= bytes) {
        clearTimeout(timer);
        resolve();
      }
    });
    socket.resume();
  });
}

test('synchronous answers stop being built once the bytes queued for a non-reading peer pass the cap', async (t) => {
  let dispatched = 0;
  const answer = Buffer.alloc(256 * 1024);
  const { server, port } = await startServer(
    () => {
      dispatched++;
      return answer;
    },
    { maxQueuedResponseBytesPerConnection: MiB },
  );
  const socket = net.connect({ host: '127.0.0.1', port });
  await once(socket, 'connect');
  socket.pause(); // reads nothing: answers fill the kernel buffers, then the broker's
  const total = 2000;
  socket.write(Buffer.concat(Array.from({ length: total }, (_, i) => requestFrame(i))));
  await waitFor(() => server.connectionStats()[0]?.paused === true && server.connectionStats()[0]?.writeBlocked === true, 'the connection paused');
  const stats = server.connectionStats()[0]!;
  // The kernel takes a few MB of a loopback connection's answers; what the broker builds beyond
  // that is bounded by the cap (plus the one answer that crossed it), whatever the peer sent.
  t.diagnostic(`built ${dispatched} of ${total} answers; peak queued for the peer ${stats.peakQueuedResponseBytes} bytes`);
  const kernelShare = 24;
  assert.ok(dispatched <= kernelShare + 8, `built ${dispatched} answers of 256 KiB for a peer that reads nothing`);
  assert.ok(stats.peakQueuedResponseBytes <= MiB + answer.length + 4, `queued ${stats.peakQueuedResponseBytes} bytes for the peer`);
  // Once the peer reads, every request is answered, in order.
  await drain(socket, total * (4 + answer.length));
  assert.equal(dispatched, total);
  socket.destroy();
  await server.stop();
});

test('requests whose answers can be large are handled one at a time per connection, others still pipelined', async () => {
  let inFlight = 0;
  let mostInFlight = 0;
  let smallInFlightBeside = 0;
  const LARGE = 1;
  const SMALL = 0;
  const release: Array<() => void> = [];
  const dispatcher: RequestDispatcher = (frame) => {
    const kind = frame.readInt16BE(0);
    const id = frame.readInt32BE(4);
    if (kind === SMALL) {
      if (inFlight > 0) smallInFlightBeside++;
      return Buffer.from([0, 0, 0, id]);
    }
    inFlight++;
    mostInFlight = Math.max(mostInFlight, inFlight);
    return new Promise((resolve) =>
      release.push(() => {
        inFlight--;
        resolve(Buffer.from([0, 0, 0, id]));
      }),
    );
  };
  const { server, port } = await startServer(dispatcher, { largeAnswerRequest: (frame) => frame.readInt16BE(0) === LARGE });
  const client = await FrameClient.connect(port);
  const frameOf = (id: number, apiKey: number): Buffer => {
    const f = requestFrame(id);
    f.writeInt16BE(apiKey, 4);
    return f;
  };
  // large, small, large, small, ...: each large one waits for the one before to be written.
  const total = 40;
  client.write(Buffer.concat(Array.from({ length: total }, (_, i) => frameOf(i, i % 2 === 0 ? LARGE : SMALL))));
  await waitFor(() => release.length >= 1, 'the first large request');
  const answerAll = setInterval(() => release.splice(0).forEach((r) => r()), 2);
  await client.until(() => client.responses.length === total, 'every answer');
  clearInterval(answerAll);
  assert.equal(mostInFlight, 1, `${mostInFlight} large-answer requests were in flight at once`);
  // A small request after a large one is still dispatched while the large one is being answered.
  assert.ok(smallInFlightBeside >= 1, 'small requests were held behind the large one');
  assert.deepEqual(
    client.responses.map((r) => r.readInt32BE(0)),
    Array.from({ length: total }, (_, i) => i),
  );
  client.close();
  await server.stop();
});

test('a large-answer request is not built while the answers before it wait for a slow reader', async (t) => {
  let built = 0;
  const answer = Buffer.alloc(4 * MiB);
  const { server, port } = await startServer(
    async () => {
      built++;
      await new Promise((resolve) => setImmediate(resolve));
      return answer;
    },
    { largeAnswerRequest: () => true },
  );
  const socket = net.connect({ host: '127.0.0.1', port });
  await once(socket, 'connect');
  socket.pause();
  const total = 100;
  socket.write(Buffer.concat(Array.from({ length: total }, (_, i) => requestFrame(i))));
  await waitFor(() => server.connectionStats()[0]?.writeBlocked === true, 'the connection write-blocked');
  // Give the broker every chance to build more (it must not): several turns of its loop.
  for (let i = 0; i < 20; i++) await new Promise((resolve) => setImmediate(resolve));
  t.diagnostic(`built ${built} of ${total} answers of 4 MiB before the peer read`);
  assert.ok(built <= 4, `built ${built} answers of 4 MiB for a peer that reads nothing`);
  await drain(socket, total * (4 + answer.length), 60000);
  assert.equal(built, total);
  socket.destroy();
  await server.stop();
});
