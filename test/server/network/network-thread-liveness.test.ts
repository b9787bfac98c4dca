/**
 * Liveness at num.network.threads=3, as at one thread: only the network thread sees a frame's
 * first bytes, so it runs socket.request.receive.timeout.ms and the pre-authentication frame limit
 * (sasl.server.max.receive.size) itself. A trickled frame is closed at the deadline; an
 * unauthenticated size prefix over the limit is refused before any of its body is sent.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { once } from 'node:events';
import { startTestBroker } from '../../helpers/broker.js';
import { waitFor } from '../../helpers/wait-for.js';

const PLAIN_JAAS = 'org.apache.kafka.common.security.plain.PlainLoginModule required user_admin="admin-secret";';

async function connect(port: number): Promise<{ socket: net.Socket; closed: () => boolean }> {
  const socket = net.connect(port, '127.0.0.1');
  await once(socket, 'connect');
  socket.on('error', () => undefined);
  let closed = false;
  socket.on('close', () => (closed = true));
  socket.resume();
  return { socket, closed: () => closed };
}

test('num.network.threads=3: a 100 MB size prefix trickled a byte at a time is closed at socket.request.receive.timeout.ms', async () => {
  const b = await startTestBroker({ 'num.network.threads': '3', 'socket.request.receive.timeout.ms': '500' });
  const { socket, closed } = await connect(b.port);
  const prefix = Buffer.alloc(4);
  prefix.writeInt32BE(100 * 1024 * 1024, 0);
  socket.write(prefix);
  const startedAt = Date.now();
  const trickle = setInterval(() => {
    if (!closed()) socket.write(Buffer.from([0]));
  }, 50);
  try {
    await waitFor('the trickling connection was not closed', 10_000, () => closed());
    const after = Date.now() - startedAt;
    assert.ok(after >= 450, `closed after ${after} ms`);
    assert.ok(after < 5_000, `closed after ${after} ms (the idle timeout, not the receive timeout?)`);
    await waitFor('the close counted as receive-timeout', 5_000, () => b.broker.socketServer!.closedConnections('receive-timeout') === 1);
  } finally {
    clearInterval(trickle);
    socket.destroy();
    await b.stop();
  }
});

test('num.network.threads=3: before authentication a size prefix over sasl.server.max.receive.size closes the connection before its body is sent', async () => {
  const b = await startTestBroker({
    'num.network.threads': '3',
    listeners: 'PLAINTEXT://127.0.0.1:0,SASL_PLAINTEXT://127.0.0.1:0',
    'sasl.enabled.mechanisms': 'PLAIN',
    'listener.name.sasl_plaintext.plain.sasl.jaas.config': PLAIN_JAAS,
  });
  const { socket, closed } = await connect(b.broker.boundPorts().get('SASL_PLAINTEXT')!);
  try {
    const prefix = Buffer.alloc(4);
    prefix.writeInt32BE(10 * 1024 * 1024, 0); // under socket.request.max.bytes, over the 512 KiB pre-auth limit
    socket.write(prefix);
    await waitFor('the oversized unauthenticated frame was not refused at its prefix', 10_000, () => closed());
    assert.equal(b.broker.socketServer!.closedConnections('bad-frame'), 1);
  } finally {
    socket.destroy();
    await b.stop();
  }
});
