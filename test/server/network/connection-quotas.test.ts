// Kafka's connection limits as a client sees them (issue 21, F5): max.connections makes new
// connections wait (the inter-broker listener exempt), listener.name.<l>.max.connections caps one
// listener, max.connections.per.ip and its overrides close at once, max.connection.creation.rate
// spreads new connections out, and the open-file limit leaves headroom, refusing (and logging)
// client connections beyond it. Raw sockets on loopback, a few dozen at most.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { RequestDispatcher, SocketServerOptions } from '../../../src/server/network/index.js';
import { NO_CONNECTION_QUOTAS, type ConnectionQuotaSettings } from '../../../src/server/network/connection-quota-config.js';
import { FrameClient, requestFrame, startServer, waitFor } from './helpers.js';

const echo: RequestDispatcher = (frame) => Buffer.from(frame.subarray(4, 8));

/** A logger that keeps what it is told. */
function recordingLogger(): { logger: SocketServerOptions['logger']; lines: { level: string; fields: Record<string, unknown>; msg: string }[] } {
  const lines: { level: string; fields: Record<string, unknown>; msg: string }[] = [];
  const at = (level: string) => (fields: unknown, msg?: string) => {
    lines.push({ level, fields: typeof fields === 'object' && fields !== null ? (fields as Record<string, unknown>) : {}, msg: msg ?? String(fields) });
  };
  const logger = { debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') } as unknown as SocketServerOptions['logger'];
  return { logger, lines };
}

const TWO_LISTENERS: SocketServerOptions['listeners'] = [
  { name: 'CLIENT', host: '127.0.0.1', port: 0, securityProtocol: 'PLAINTEXT' },
  { name: 'BROKER', host: '127.0.0.1', port: 0, securityProtocol: 'PLAINTEXT' },
];

function quotas(over: Partial<ConnectionQuotaSettings>): ConnectionQuotaSettings {
  return { ...NO_CONNECTION_QUOTAS, ...over };
}

async function answered(c: FrameClient, id: number): Promise<void> {
  const before = c.responses.length;
  c.write(requestFrame(id));
  await c.until(() => c.responses.length > before, `answer ${id}`);
}

test('beyond the wait queue (socket.listen.backlog.size) a connection over max.connections is closed and logged', async () => {
  const { logger, lines } = recordingLogger();
  const { server, port } = await startServer(echo, { maxConnections: 1, listenBacklog: 2, logger });
  const a = await FrameClient.connect(port);
  await waitFor(() => server.connectionCount() === 1, 'a accepted');
  const waiting = [await FrameClient.connect(port), await FrameClient.connect(port)];
  await waitFor(() => server.waitingConnectionCount() === 2, 'two waiting');
  const over = await FrameClient.connect(port);
  await over.until(() => over.closed, 'the connection beyond the queue closed');
  const line = lines.find((l) => l.fields.reason === 'max-connections');
  assert.ok(line, 'the refusal is logged');
  assert.match(line.msg, /max\.connections 1 reached and 2 connections already wait/);
  // Slots free one by one: the waiting connections are served in arrival order.
  a.close();
  await answered(waiting[0]!, 1);
  waiting[0]!.close();
  await answered(waiting[1]!, 2);
  waiting[1]!.close();
  await server.stop();
});

test('the inter-broker listener is exempt from max.connections; the least recently used client connection makes room', async () => {
  const { server } = await startServer(echo, { listeners: TWO_LISTENERS, interBrokerListener: 'BROKER', maxConnections: 2 });
  const ports = server.boundPorts();
  const old = await FrameClient.connect(ports.get('CLIENT')!);
  const recent = await FrameClient.connect(ports.get('CLIENT')!);
  await answered(old, 1);
  await new Promise((resolve) => setTimeout(resolve, 5)); // distinct activity times
  await answered(recent, 2);
  const broker = await FrameClient.connect(ports.get('BROKER')!);
  await answered(broker, 3); // served at once although the broker was full
  await old.until(() => old.closed, 'the least recently used client connection closed');
  assert.equal(recent.closed, false);
  await answered(recent, 4);
  // A client connection now waits: the two slots are taken (one by the inter-broker connection).
  const more = await FrameClient.connect(ports.get('CLIENT')!);
  await waitFor(() => server.waitingConnectionCount() === 1, 'the new client connection waiting');
  broker.close();
  await answered(more, 5);
  for (const c of [recent, more]) c.close();
  await server.stop();
});

test('listener.name.<l>.max.connections caps that listener alone', async () => {
  const settings = quotas({
    listeners: new Map([['CLIENT', { maxConnections: 1, maxConnectionCreationRate: NO_CONNECTION_QUOTAS.maxConnectionCreationRate }]]),
  });
  const { server } = await startServer(echo, { listeners: TWO_LISTENERS, interBrokerListener: 'BROKER', connectionQuotas: settings });
  const ports = server.boundPorts();
  const first = await FrameClient.connect(ports.get('CLIENT')!);
  await answered(first, 1);
  const second = await FrameClient.connect(ports.get('CLIENT')!);
  await waitFor(() => server.waitingConnectionCount() === 1, 'the second CLIENT connection waiting');
  const others = await Promise.all([1, 2, 3].map(() => FrameClient.connect(ports.get('BROKER')!)));
  for (const [i, c] of others.entries()) await answered(c, 10 + i);
  first.close();
  await answered(second, 2);
  for (const c of [second, ...others]) c.close();
  await server.stop();
});

test('max.connections.per.ip.overrides gives one address its own maximum; the rest is closed at once', async () => {
  const { logger, lines } = recordingLogger();
  const settings = quotas({ maxConnectionsPerIp: 100, maxConnectionsPerIpOverrides: new Map([['127.0.0.1', 2]]) });
  const { server, port } = await startServer(echo, { connectionQuotas: settings, logger });
  const a = await FrameClient.connect(port);
  const b = await FrameClient.connect(port);
  await answered(a, 1);
  await answered(b, 2);
  const c = await FrameClient.connect(port);
  await c.until(() => c.closed, 'the third connection from 127.0.0.1 closed');
  assert.ok(lines.some((l) => /Rejected connection from 127\.0\.0\.1, address already has the configured maximum of 2 connections/.test(l.msg)));
  // Raised at run time (a dynamic config): the address gets more.
  server.setConnectionQuotas(quotas({ maxConnectionsPerIp: 100, maxConnectionsPerIpOverrides: new Map([['127.0.0.1', 3]]) }));
  const d = await FrameClient.connect(port);
  await answered(d, 3);
  // A host name, resolved as Kafka's InetAddress.getByName (asynchronously here): localhost is 127.0.0.1.
  server.setConnectionQuotas(quotas({ maxConnectionsPerIp: 100, maxConnectionsPerIpOverrides: new Map([['localhost', 3]]) }));
  let refused = false;
  const until = Date.now() + 5000;
  while (!refused && Date.now() < until) {
    const e = await FrameClient.connect(port);
    e.write(requestFrame(9));
    await e.until(() => e.closed || e.responses.length > 0, 'an answer or a close');
    refused = e.closed;
    e.close();
  }
  assert.ok(refused, 'a fourth connection from localhost (127.0.0.1) is refused under the override localhost:3');
  for (const x of [a, b, d]) x.close();
  await server.stop();
});

test('max.connection.creation.rate spreads new connections out instead of refusing them', async () => {
  // 5 per second over 2 windows of 200 ms: a burst of 6 is let in over several hundred ms.
  const { server, port } = await startServer(echo, { connectionQuotas: quotas({ maxConnectionCreationRate: 5 }), rateWindow: { samples: 2, windowMs: 200 } });
  const t0 = Date.now();
  const clients = await Promise.all(Array.from({ length: 6 }, () => FrameClient.connect(port)));
  const servedAt: number[] = [];
  await Promise.all(
    clients.map(async (c, i) => {
      await answered(c, i);
      servedAt.push(Date.now() - t0);
    }),
  );
  servedAt.sort((x, y) => x - y);
  assert.ok(servedAt[0]! < 150, `the first connection waited ${servedAt[0]} ms`);
  assert.ok(servedAt[5]! >= 400, `six connections served within ${servedAt[5]} ms despite a rate of 5/s`);
  for (const c of clients) assert.equal(c.closed, false);
  for (const c of clients) c.close();
  await server.stop();
});

test('the open-file limit leaves headroom: client connections beyond its ceiling are refused and logged, the inter-broker listener still gets in', async () => {
  const { logger, lines } = recordingLogger();
  // ulimit -n 100, 60 for segment files, 16 headroom: 24 client connections.
  const { server } = await startServer(echo, { listeners: TWO_LISTENERS, interBrokerListener: 'BROKER', openFileLimit: 100, segmentFiles: 60, logger });
  assert.equal(server.fdBudget.clientCeiling, 24);
  const ports = server.boundPorts();
  const clients = await Promise.all(Array.from({ length: 30 }, () => FrameClient.connect(ports.get('CLIENT')!)));
  await waitFor(() => clients.filter((c) => c.closed).length === 6, 'six refused');
  await waitFor(() => server.connectionCount() === 24, '24 served');
  const refusals = lines.filter((l) => l.fields.reason === 'open-files');
  assert.ok(refusals.length >= 1 && refusals.length <= 5, `${refusals.length} log lines for 6 refusals (rate-limited)`);
  assert.equal(refusals[0]!.level, 'warn');
  assert.match(refusals[0]!.msg, /ulimit -n 100, less 60 for segment files and 16 for inter-broker connections and other files, leaves 24/);
  assert.equal(server.closedConnections('open-files'), 6);
  const broker = await FrameClient.connect(ports.get('BROKER')!);
  await answered(broker, 1);
  // Once clients leave, new ones get in again.
  for (const c of clients.slice(0, 3)) c.close();
  await waitFor(() => server.connectionCount() === 22, 'three left');
  const again = await FrameClient.connect(ports.get('CLIENT')!);
  await answered(again, 2);
  for (const c of [...clients, broker, again]) c.close();
  await server.stop();
});
