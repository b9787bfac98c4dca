// Memory held by requests being read: the broker-wide cap (queued.max.request.bytes), the deadline
// for receiving a whole frame (socket.request.receive.timeout.ms), the idle timer not re-armed by
// partial frames, and everything given back when connections close.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import v8 from 'node:v8';
import vm from 'node:vm';
import type { RequestDispatcher } from '../../../src/server/network/index.js';
import { FrameClient, requestFrame, startServer, waitFor } from './helpers.js';

v8.setFlagsFromString('--expose-gc');
const gc = vm.runInNewContext('gc') as () => void;

/** External memory held by ArrayBuffers (Buffers) after a full GC. */
function arrayBuffersAfterGc(): number {
  gc();
  gc();
  return process.memoryUsage().arrayBuffers;
}

const MiB = 1024 * 1024;

const echo: RequestDispatcher = (frame) => Buffer.from(frame.subarray(4, 8));

/** A size prefix declaring `declared` payload bytes, then the start of a request header. */
function framePrefix(declared: number, correlationId = 0): Buffer {
  const b = Buffer.alloc(12);
  b.writeInt32BE(declared, 0);
  b.writeInt16BE(3, 4);
  b.writeInt32BE(correlationId, 8);
  return b;
}

test('12 connections holding big partial frames stay under queued.max.request.bytes; others are served; all is given back on close', async () => {
  const cap = 32 * MiB;
  const declared = 10 * MiB;
  const sent = 9 * MiB;
  const baseline = arrayBuffersAfterGc();
  const { server, port } = await startServer(echo, { queuedMaxRequestBytes: cap, socketRequestMaxBytes: declared });
  const good = await FrameClient.connect(port);
  const attackers: FrameClient[] = [];
  let body: Buffer | null = Buffer.alloc(sent - 8, 7); // one buffer written to every socket (not copied)
  for (let i = 0; i < 12; i++) {
    const a = await FrameClient.connect(port);
    a.write(framePrefix(declared));
    a.write(body);
    attackers.push(a);
  }
  // The admitted frames are read in full; the others wait for room with their bytes in the kernel.
  await waitFor(
    () => {
      const stats = server.connectionStats();
      return stats.filter((s) => s.bufferedBytes >= sent).length >= 2 && stats.filter((s) => s.waitingForMemory).length >= 9;
    },
    'admitted partial frames read, the rest waiting',
    20000,
  );
  const held = server.connectionStats().reduce((n, s) => n + s.bufferedBytes, 0);
  assert.ok(held <= cap, `server buffers ${held} bytes, over the cap ${cap}`);
  assert.ok(server.requestMemoryStats().peakReserved <= cap);

  // A well-behaved client keeps getting answers meanwhile.
  for (let i = 0; i < 20; i++) good.write(requestFrame(i, 100));
  await good.until(() => good.responses.length === 20, '20 answers beside the attack', 10000);
  assert.deepEqual(
    good.responses.map((r) => r.readInt32BE(0)),
    Array.from({ length: 20 }, (_, i) => i),
  );

  // Memory measured independently of the accounting: bounded by the cap, not by what was sent.
  const grown = arrayBuffersAfterGc() - baseline - body.length;
  assert.ok(grown < cap + 8 * MiB, `arrayBuffers grew by ${(grown / MiB).toFixed(1)} MiB with a ${cap / MiB} MiB cap`);

  for (const a of attackers) a.close();
  body = null;
  await waitFor(() => server.connectionCount() === 1, 'attackers gone');
  assert.equal(server.requestMemoryStats().reserved, 0);
  assert.equal(server.requestMemoryStats().waiting, 0);
  const after = arrayBuffersAfterGc() - baseline;
  assert.ok(after < 4 * MiB, `arrayBuffers still ${(after / MiB).toFixed(1)} MiB above baseline after the connections closed`);
  good.write(requestFrame(99));
  await good.until(() => good.responses.length === 21, 'answer after the attack');
  good.close();
  await server.stop();
});

test('a frame that declares a big size and sends a few bytes holds a few bytes, and is closed at the receive deadline', async () => {
  const baseline = arrayBuffersAfterGc();
  const { server, port } = await startServer(echo, { queuedMaxRequestBytes: 200 * MiB, socketRequestMaxBytes: 10 * MiB, requestReceiveTimeoutMs: 500 });
  const liars: FrameClient[] = [];
  for (let i = 0; i < 20; i++) {
    const c = await FrameClient.connect(port);
    c.write(Buffer.concat([framePrefix(10 * MiB), Buffer.alloc(10)])); // 22 bytes of 10 MiB
    liars.push(c);
  }
  await waitFor(() => server.connectionStats().filter((s) => s.bufferedBytes > 0 || s.waitingForMemory).length === 20, 'all liars read');
  const grown = arrayBuffersAfterGc() - baseline;
  assert.ok(grown < 2 * MiB, `20 liars cost ${(grown / MiB).toFixed(1)} MiB`);
  // Each is closed once it has been read for 500 ms without completing its frame.
  for (const c of liars) await c.until(() => c.closed, 'liar closed at the receive deadline', 30000);
  assert.equal(server.closedConnections('receive-timeout'), 20);
  await waitFor(() => server.connectionCount() === 0, 'liars forgotten');
  assert.equal(server.requestMemoryStats().reserved, 0);
  await server.stop();
});

test('a frame trickled one byte at a time is closed at socket.request.receive.timeout.ms', async () => {
  const { server, port } = await startServer(echo, { requestReceiveTimeoutMs: 400, connectionsMaxIdleMs: 600000 });
  const client = await FrameClient.connect(port);
  const frame = requestFrame(1, 1000);
  const startedAt = Date.now();
  let sent = 0;
  const trickle = setInterval(() => {
    if (sent < frame.length && !client.closed) client.write(frame.subarray(sent, ++sent));
  }, 20);
  try {
    await client.until(() => client.closed, 'trickling connection closed', 10000);
  } finally {
    clearInterval(trickle);
  }
  assert.ok(Date.now() - startedAt >= 350, `closed after ${Date.now() - startedAt} ms, before the deadline`);
  assert.ok(sent < frame.length, 'the frame was never completed');
  assert.equal(client.responses.length, 0);
  assert.equal(server.closedConnections('receive-timeout'), 1);
  await server.stop();
});

test('bytes of an unfinished frame do not re-arm connections.max.idle.ms', async () => {
  const { server, port } = await startServer(echo, { requestReceiveTimeoutMs: 0, connectionsMaxIdleMs: 300 });
  const client = await FrameClient.connect(port);
  const frame = requestFrame(1, 1000);
  let sent = 0;
  const trickle = setInterval(() => {
    if (sent < frame.length && !client.closed) client.write(frame.subarray(sent, ++sent));
  }, 20);
  try {
    await client.until(() => client.closed, 'idle close despite trickled bytes', 10000);
  } finally {
    clearInterval(trickle);
  }
  assert.ok(sent < frame.length);
  assert.equal(server.closedConnections('idle'), 1);
  await server.stop();
});

test('whole frames arriving slowly are not cut by the receive deadline', async () => {
  const { server, port } = await startServer(echo, { requestReceiveTimeoutMs: 300, connectionsMaxIdleMs: 600000 });
  const client = await FrameClient.connect(port);
  // Ten frames, each sent in two halves 100 ms apart: every frame completes within the deadline,
  // though the connection as a whole is busy for far longer.
  for (let i = 0; i < 10; i++) {
    const frame = requestFrame(i, 50);
    client.write(frame.subarray(0, 20));
    await new Promise((resolve) => setTimeout(resolve, 100));
    client.write(frame.subarray(20));
    await client.until(() => client.responses.length === i + 1, `answer ${i}`);
  }
  assert.equal(client.closed, false);
  assert.equal(server.closedConnections('receive-timeout'), 0);
  client.close();
  await server.stop();
});

/** Big answers, so a peer that reads none of them soon fills the socket's write buffer. */
const bigAnswer: RequestDispatcher = () => Buffer.alloc(256 * 1024);

test('a peer that reads no responses cannot keep a started frame (and its reservation) past the receive deadline', async () => {
  const { server, port } = await startServer(bigAnswer, { requestReceiveTimeoutMs: 400, connectionsMaxIdleMs: 600000 });
  const client = await FrameClient.connect(port);
  client.socket.pause();
  // Requests whose answers will not be read, then the start of a frame declaring 50000 bytes.
  client.write(Buffer.concat([...Array.from({ length: 64 }, (_, i) => requestFrame(i)), framePrefix(50000)]));
  await waitFor(() => server.connectionStats()[0]?.writeBlocked === true, 'server blocked on writing');
  await waitFor(() => server.closedConnections('receive-timeout') === 1, 'closed at the receive deadline', 10000);
  await waitFor(() => server.connectionCount() === 0, 'connection forgotten');
  assert.equal(server.requestMemoryStats().reserved, 0);
  client.close();
  await server.stop();
});

test('a peer that reads none of its responses is idle', async () => {
  const { server, port } = await startServer(bigAnswer, { requestReceiveTimeoutMs: 0, connectionsMaxIdleMs: 300 });
  const client = await FrameClient.connect(port);
  client.socket.pause();
  client.write(Buffer.concat(Array.from({ length: 64 }, (_, i) => requestFrame(i))));
  await waitFor(() => server.connectionStats()[0]?.writeBlocked === true, 'server blocked on writing');
  await waitFor(() => server.closedConnections('idle') === 1, 'closed as idle', 10000);
  await waitFor(() => server.connectionCount() === 0, 'connection forgotten');
  client.close();
  await server.stop();
});

/** A dispatcher whose answers wait until the test releases them. */
function heldDispatcher(): { dispatcher: RequestDispatcher; ids: number[]; releaseAll: () => void; releaseOne: () => void } {
  const pending: Array<() => void> = [];
  const ids: number[] = [];
  return {
    ids,
    dispatcher: (frame) => {
      ids.push(frame.readInt32BE(4));
      return new Promise((resolve) => pending.push(() => resolve(Buffer.from(frame.subarray(4, 8)))));
    },
    releaseAll: () => pending.splice(0).forEach((r) => r()),
    releaseOne: () => pending.shift()?.(),
  };
}

test('reading pauses at queued.max.request.bytes and resumes as requests are answered', async () => {
  const held = heldDispatcher();
  // Cap 1000: big frames (over 125 bytes) may use 875, small ones the rest.
  const { server, port } = await startServer(held.dispatcher, { queuedMaxRequestBytes: 1000, socketRequestMaxBytes: 400 });
  const a = await FrameClient.connect(port);
  const b = await FrameClient.connect(port);
  const small = await FrameClient.connect(port);
  a.write(Buffer.concat([requestFrame(1, 292), requestFrame(2, 292), requestFrame(3, 292)])); // 300-byte frames
  await waitFor(() => server.connectionStats().some((s) => s.waitingForMemory), 'a waiting for memory');
  assert.deepEqual(held.ids, [1, 2]);
  assert.equal(server.requestMemoryStats().reserved, 600);
  b.write(requestFrame(10, 292));
  await waitFor(() => server.requestMemoryStats().waiting === 2, 'b waiting too');
  // Small requests still get through the reserve kept for them.
  small.write(Buffer.concat([requestFrame(20), requestFrame(21)]));
  await waitFor(() => held.ids.includes(21), 'small requests dispatched');
  assert.ok(server.requestMemoryStats().peakReserved <= 1000);

  held.releaseOne(); // answers 1: room for a's third frame (first in line), not yet for b's
  await a.until(() => a.responses.length === 1, 'a answered once');
  await waitFor(() => held.ids.includes(3), "a's third frame read");
  assert.equal(held.ids.includes(10), false);
  const pump = setInterval(held.releaseAll, 5);
  try {
    await a.until(() => a.responses.length === 3, 'a answered');
    await b.until(() => b.responses.length === 1, 'b answered');
    await small.until(() => small.responses.length === 2, 'small answered');
  } finally {
    clearInterval(pump);
  }
  assert.deepEqual(
    a.responses.map((r) => r.readInt32BE(0)),
    [1, 2, 3],
  );
  assert.equal(server.requestMemoryStats().reserved, 0);
  for (const c of [a, b, small]) c.close();
  await server.stop();
});

test('a frame larger than the cap is read alone instead of deadlocking', async () => {
  const held = heldDispatcher();
  const { server, port } = await startServer(held.dispatcher, { queuedMaxRequestBytes: 1000, socketRequestMaxBytes: 5000 });
  const a = await FrameClient.connect(port);
  const b = await FrameClient.connect(port);
  a.write(requestFrame(1, 200));
  await waitFor(() => held.ids.length === 1, 'first frame dispatched');
  b.write(requestFrame(2, 3000));
  await waitFor(() => server.requestMemoryStats().waiting === 1, 'big frame waits while something is held');
  held.releaseAll();
  await waitFor(() => held.ids.includes(2), 'big frame read once nothing else is held');
  held.releaseAll();
  await b.until(() => b.responses.length === 1, 'big frame answered');
  assert.equal(server.requestMemoryStats().reserved, 0);
  a.close();
  b.close();
  await server.stop();
});

test('closing connections mid-frame and mid-request returns the accounting to zero', async () => {
  const held = heldDispatcher();
  const { server, port } = await startServer(held.dispatcher, { queuedMaxRequestBytes: 100000, socketRequestMaxBytes: 5000 });
  const clients: FrameClient[] = [];
  for (let i = 0; i < 5; i++) {
    const c = await FrameClient.connect(port);
    c.write(Buffer.concat([requestFrame(i, 500), framePrefix(4000), Buffer.alloc(100)])); // one whole, one partial
    clients.push(c);
  }
  await waitFor(() => held.ids.length === 5 && server.requestMemoryStats().reserved === 5 * (508 + 4000), 'frames read');
  for (const c of clients) c.close();
  // The partial frames are dropped at once; requests still being handled keep their bytes until answered.
  await waitFor(() => server.requestMemoryStats().reserved === 5 * 508, 'partial frames given back');
  held.releaseAll();
  await waitFor(() => server.connectionCount() === 0, 'connections gone');
  assert.equal(server.requestMemoryStats().reserved, 0);
  assert.equal(server.connectionStats().length, 0);
  await server.stop();
});
