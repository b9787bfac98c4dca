import { test } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { once } from 'node:events';
import { CloseConnectionError, type RequestDispatcher } from '../../../src/server/network/index.js';
import { FrameClient, requestFrame, startServer, waitFor } from './helpers.js';

/** Echoes the correlation id after a pseudo-random delay (later requests often finish first). */
const delayedEcho: RequestDispatcher = async (frame) => {
  const correlationId = frame.readInt32BE(4);
  await new Promise((resolve) => setTimeout(resolve, (correlationId * 7919) % 13));
  const response = Buffer.alloc(4);
  response.writeInt32BE(correlationId, 0);
  return response;
};

test('pipelined requests are answered in request order despite out-of-order completion', async () => {
  const { server } = await startServer(delayedEcho);
  const port = server.boundPorts().get('PLAINTEXT')!;
  const client = await FrameClient.connect(port);
  const count = 300;
  // Send all frames in one write so they arrive in few chunks (exercises the multi-frame path).
  client.write(Buffer.concat(Array.from({ length: count }, (_, i) => requestFrame(i, i % 5))));
  await client.until(() => client.responses.length === count, `${count} responses`);
  assert.deepEqual(
    client.responses.map((r) => r.readInt32BE(0)),
    Array.from({ length: count }, (_, i) => i),
  );
  client.close();
  await server.stop();
});

test('frames split across chunks byte by byte are reassembled', async () => {
  const { server, port } = await startServer(delayedEcho);
  const client = await FrameClient.connect(port);
  const bytes = Buffer.concat([requestFrame(1, 3), requestFrame(2, 0), requestFrame(3, 100)]);
  for (const byte of bytes) {
    client.write(Buffer.from([byte]));
    await new Promise((resolve) => setImmediate(resolve));
  }
  await client.until(() => client.responses.length === 3, '3 responses');
  assert.deepEqual(
    client.responses.map((r) => r.readInt32BE(0)),
    [1, 2, 3],
  );
  client.close();
  await server.stop();
});

test('null responses (acks=0) take no output slot and keep the order of the others', async () => {
  const dispatcher: RequestDispatcher = async (frame) => {
    const id = frame.readInt32BE(4);
    await new Promise((resolve) => setTimeout(resolve, (id * 31) % 7));
    return id % 3 === 0 ? null : Buffer.from(frame.subarray(4, 8));
  };
  const { server, port } = await startServer(dispatcher);
  const client = await FrameClient.connect(port);
  for (let i = 0; i < 60; i++) client.write(requestFrame(i));
  const expected = Array.from({ length: 60 }, (_, i) => i).filter((i) => i % 3 !== 0);
  await client.until(() => client.responses.length === expected.length, 'responses');
  assert.deepEqual(
    client.responses.map((r) => r.readInt32BE(0)),
    expected,
  );
  client.close();
  await server.stop();
});

test('an oversized frame closes only that connection', async () => {
  const { server, port } = await startServer(delayedEcho, { socketRequestMaxBytes: 1000 });
  const good = await FrameClient.connect(port);
  const bad = await FrameClient.connect(port);
  const header = Buffer.alloc(4);
  header.writeInt32BE(1001, 0);
  bad.write(header); // only the size prefix: the server must not wait for the payload
  await bad.until(() => bad.closed, 'bad connection closed');
  good.write(requestFrame(42, 900));
  await good.until(() => good.responses.length === 1, 'response on the good connection');
  assert.equal(good.responses[0]!.readInt32BE(0), 42);
  assert.equal(good.closed, false);
  good.close();
  await server.stop();
});

test('a negative frame size closes the connection', async () => {
  let dispatched = 0;
  const { server, port } = await startServer(() => {
    dispatched++;
    return Buffer.alloc(4);
  });
  const client = await FrameClient.connect(port);
  const header = Buffer.alloc(4);
  header.writeInt32BE(-5, 0);
  client.write(header);
  await client.until(() => client.closed, 'connection closed');
  assert.equal(dispatched, 0);
  await server.stop();
});

test('a frame too small for a request header closes the connection', async () => {
  let dispatched = 0;
  const { server, port } = await startServer(() => {
    dispatched++;
    return Buffer.alloc(4);
  });
  const client = await FrameClient.connect(port);
  client.write(Buffer.from([0, 0, 0, 4, 0, 3, 0, 0]));
  await client.until(() => client.closed, 'connection closed');
  assert.equal(dispatched, 0);
  await server.stop();
});

test('a dispatcher error closes that connection and the server keeps serving others', async () => {
  const dispatcher: RequestDispatcher = (frame) => {
    if (frame.readInt32BE(4) === 13) throw new CloseConnectionError('bad request');
    return Buffer.from(frame.subarray(4, 8));
  };
  const { server, port } = await startServer(dispatcher);
  const failing = await FrameClient.connect(port);
  const healthy = await FrameClient.connect(port);
  failing.write(requestFrame(13));
  await failing.until(() => failing.closed, 'failing connection closed');
  healthy.write(requestFrame(14));
  await healthy.until(() => healthy.responses.length === 1, 'healthy response');
  assert.equal(healthy.responses[0]!.readInt32BE(0), 14);
  healthy.close();
  await server.stop();
});

test('a rejected dispatcher promise closes the connection', async () => {
  const { server, port } = await startServer(async () => {
    throw new Error('boom');
  });
  const client = await FrameClient.connect(port);
  client.write(requestFrame(1));
  await client.until(() => client.closed, 'connection closed');
  assert.equal(client.responses.length, 0);
  await server.stop();
});

test('idle connections are closed after connections.max.idle.ms', async () => {
  const { server, port } = await startServer(delayedEcho, { connectionsMaxIdleMs: 150 });
  const client = await FrameClient.connect(port);
  client.write(requestFrame(5));
  await client.until(() => client.responses.length === 1, 'response');
  const answeredAt = Date.now();
  await client.until(() => client.closed, 'idle close', 3000);
  assert.ok(Date.now() - answeredAt >= 100, 'closed too early');
  await waitFor(() => server.connectionCount() === 0, 'server forgets the connection');
  await server.stop();
});

test('connections over max.connections.per.ip are closed at once', async () => {
  const { server, port } = await startServer(delayedEcho, { maxConnectionsPerIp: 2 });
  const a = await FrameClient.connect(port);
  const b = await FrameClient.connect(port);
  await waitFor(() => server.connectionCount() === 2, 'two accepted connections');
  const c = await FrameClient.connect(port);
  await c.until(() => c.closed, 'third connection closed');
  a.write(requestFrame(1));
  b.write(requestFrame(2));
  await a.until(() => a.responses.length === 1, 'a answered');
  await b.until(() => b.responses.length === 1, 'b answered');
  // Once one closes, a new connection from the same IP is accepted again.
  a.close();
  await waitFor(() => server.connectionCount() === 1, 'a forgotten');
  const d = await FrameClient.connect(port);
  d.write(requestFrame(4));
  await d.until(() => d.responses.length === 1, 'd answered');
  b.close();
  d.close();
  await server.stop();
});

test('a connection over max.connections waits, unread, until a slot frees (as Kafka blocks its acceptor)', async () => {
  const { server, port } = await startServer(delayedEcho, { maxConnections: 1 });
  const a = await FrameClient.connect(port);
  await waitFor(() => server.connectionCount() === 1, 'one accepted connection');
  const b = await FrameClient.connect(port);
  b.write(requestFrame(2));
  await waitFor(() => server.waitingConnectionCount() === 1, 'the second connection waiting');
  a.write(requestFrame(1));
  await a.until(() => a.responses.length === 1, 'a answered');
  assert.equal(b.responses.length, 0);
  assert.equal(b.closed, false);
  a.close();
  await b.until(() => b.responses.length === 1, 'b answered once a closed');
  assert.equal(server.connectionCount(), 1);
  b.close();
  await server.stop();
});

test('reading pauses while queued.max.requests requests are unanswered', async () => {
  const release: Array<() => void> = [];
  let dispatched = 0;
  const dispatcher: RequestDispatcher = (frame) => {
    dispatched++;
    return new Promise((resolve) => release.push(() => resolve(Buffer.from(frame.subarray(4, 8)))));
  };
  const { server, port } = await startServer(dispatcher, { maxQueuedRequestsPerConnection: 10 });
  const client = await FrameClient.connect(port);
  const total = 200;
  client.write(Buffer.concat(Array.from({ length: total }, (_, i) => requestFrame(i))));
  await waitFor(() => server.connectionStats()[0]?.paused === true, 'connection paused');
  assert.equal(dispatched, 10);
  // Answer everything as it comes: all requests get through, in order.
  const pump = setInterval(() => release.splice(0).forEach((r) => r()), 1);
  await client.until(() => client.responses.length === total, 'all responses');
  clearInterval(pump);
  assert.deepEqual(
    client.responses.map((r) => r.readInt32BE(0)),
    Array.from({ length: total }, (_, i) => i),
  );
  client.close();
  await server.stop();
});

test('a client that never reads makes the server stop reading its requests', async () => {
  let dispatched = 0;
  const bigResponse = Buffer.alloc(256 * 1024);
  const { server, port } = await startServer(() => {
    dispatched++;
    return bigResponse;
  });
  const socket = net.connect({ host: '127.0.0.1', port });
  await once(socket, 'connect');
  socket.pause(); // never read: responses pile up in the kernel, then in the server's write buffer
  const total = 2000;
  socket.write(Buffer.concat(Array.from({ length: total }, (_, i) => requestFrame(i))));
  await waitFor(() => server.connectionStats()[0]?.writeBlocked === true, 'server write blocked');
  const atPause = dispatched;
  assert.ok(atPause < total / 2, `dispatched ${atPause} of ${total} although the client reads nothing`);
  // Reading resumes once the client drains its socket: every request is answered.
  let received = 0;
  socket.on('data', (chunk: Buffer) => {
    received += chunk.length;
  });
  socket.resume();
  await waitFor(() => received === total * (4 + bigResponse.length), 'all responses', 20000);
  assert.equal(dispatched, total);
  socket.destroy();
  await server.stop();
});

test('stop() lets in-flight requests finish, then closes connections and stops accepting', async () => {
  const release: Array<() => void> = [];
  const { server, port } = await startServer((frame) => new Promise((resolve) => release.push(() => resolve(Buffer.from(frame.subarray(4, 8))))));
  const client = await FrameClient.connect(port);
  client.write(Buffer.concat([requestFrame(1), requestFrame(2)]));
  await waitFor(() => release.length === 2, 'both requests dispatched');
  const stopped = server.stop(5000);
  release.splice(0).forEach((r) => r());
  await stopped;
  assert.deepEqual(
    client.responses.map((r) => r.readInt32BE(0)),
    [1, 2],
  );
  await client.until(() => client.closed, 'client sees the close');
  const refused = net.connect({ host: '127.0.0.1', port });
  const [err] = (await once(refused, 'error')) as [NodeJS.ErrnoException];
  assert.equal(err.code, 'ECONNREFUSED');
});

test('stop() closes connections whose requests never finish at the deadline', async () => {
  const { server, port } = await startServer(() => new Promise<Buffer>(() => undefined));
  const client = await FrameClient.connect(port);
  client.write(requestFrame(1));
  await waitFor(() => server.connectionStats()[0]?.queuedRequests === 1, 'request dispatched');
  const started = Date.now();
  await server.stop(200);
  assert.ok(Date.now() - started < 2000);
  await client.until(() => client.closed, 'client closed');
  assert.equal(server.connectionCount(), 0);
});

test('a peer that half-closes after sending still gets its responses', async () => {
  const { server, port } = await startServer(delayedEcho);
  const client = await FrameClient.connect(port);
  client.socket.end(Buffer.concat([requestFrame(7), requestFrame(8), requestFrame(9)]));
  await client.until(() => client.closed, 'server closes after answering');
  assert.deepEqual(
    client.responses.map((r) => r.readInt32BE(0)),
    [7, 8, 9],
  );
  await server.stop();
});

test('boundPorts reports each listener and start fails clearly on a busy port', async () => {
  const { server, port } = await startServer(delayedEcho);
  const { SocketServer } = await import('../../../src/server/network/index.js');
  const { silentLogger } = await import('../../../src/server/logger.js');
  const clash = new SocketServer({
    listeners: [{ name: 'PLAINTEXT', host: '127.0.0.1', port, securityProtocol: 'PLAINTEXT' }],
    dispatcher: delayedEcho,
    logger: silentLogger(),
    socketRequestMaxBytes: 1000,
    connectionsMaxIdleMs: 0,
    maxConnections: 10,
    maxConnectionsPerIp: 10,
  });
  await assert.rejects(clash.start(), /Cannot bind listener PLAINTEXT on 127\.0\.0\.1:\d+: EADDRINUSE/);
  await server.stop();
});
