// SSL listeners of the socket server: the handshake, the principal from the client certificate,
// ssl.client.auth, and clients that speak the wrong protocol (closed cleanly, others still served).
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import tls from 'node:tls';
import { once } from 'node:events';
import { spawn } from 'node:child_process';
import { SocketServer, type RequestDispatcher, type SocketServerOptions } from '../../../src/server/network/index.js';
import { buildListenerTls } from '../../../src/security/tls/index.js';
import { principalToString } from '../../../src/security/principal.js';
import { silentLogger } from '../../../src/server/logger.js';
import { makeTestCerts } from '../../helpers/tls-certs.js';
import { requestFrame, waitFor } from './helpers.js';

const certs = makeTestCerts();
const bob = certs.client('bob', '/C=US/O=Acme/OU=eng/CN=bob');
const mallory = certs.client('mallory', '/CN=mallory', { selfSigned: true });
after(() => certs.cleanup());

/** Answers each frame with its correlation id followed by the connection's principal. */
const echoPrincipal: RequestDispatcher = (frame, ctx) => {
  const text = Buffer.from(`${principalToString(ctx.principal)}|${ctx.securityProtocol}`);
  const out = Buffer.alloc(4 + text.length);
  out.writeInt32BE(frame.readInt32BE(4), 0);
  text.copy(out, 4);
  return out;
};

async function startTlsServer(
  settings: Record<string, string>,
  overrides: Partial<SocketServerOptions> = {},
): Promise<{ server: SocketServer; port: number; plainPort: number }> {
  const get = (k: string): string | null => settings[k] ?? null;
  const server = new SocketServer({
    listeners: [
      { name: 'SSL', host: '127.0.0.1', port: 0, securityProtocol: 'SSL' },
      { name: 'PLAINTEXT', host: '127.0.0.1', port: 0, securityProtocol: 'PLAINTEXT' },
    ],
    listenerTls: new Map([['SSL', buildListenerTls('SSL', get)]]),
    dispatcher: echoPrincipal,
    logger: silentLogger(),
    socketRequestMaxBytes: 104857600,
    connectionsMaxIdleMs: 600000,
    maxConnections: 1000,
    maxConnectionsPerIp: 1000,
    ...overrides,
  });
  await server.start();
  return { server, port: server.boundPorts().get('SSL')!, plainPort: server.boundPorts().get('PLAINTEXT')! };
}

const base = {
  'ssl.keystore.type': 'PEM',
  'ssl.keystore.location': certs.broker.keystore,
  'ssl.truststore.type': 'PEM',
  'ssl.truststore.location': certs.caFile,
};

/** Connects over TLS, sends one frame, returns the principal the broker saw (or throws). */
async function principalSeen(port: number, options: tls.ConnectionOptions = {}): Promise<string> {
  const socket = tls.connect({ port, host: '127.0.0.1', servername: 'localhost', ca: certs.ca, ...options });
  socket.on('error', () => undefined);
  try {
    await Promise.race([
      once(socket, 'secureConnect'),
      once(socket, 'close').then(() => {
        throw new Error('closed during handshake');
      }),
    ]);
    socket.write(requestFrame(7));
    const chunks: Buffer[] = [];
    return await new Promise<string>((resolve, reject) => {
      socket.on('data', (c: Buffer) => {
        chunks.push(c);
        const all = Buffer.concat(chunks);
        if (all.length >= 4 && all.length >= 4 + all.readInt32BE(0)) resolve(all.subarray(8, 4 + all.readInt32BE(0)).toString());
      });
      socket.on('close', () => reject(new Error('closed by the broker')));
    });
  } finally {
    socket.destroy();
  }
}

test('SSL listener: no client certificate gives User:ANONYMOUS', async () => {
  const { server, port } = await startTlsServer(base);
  try {
    assert.equal(await principalSeen(port), 'User:ANONYMOUS|SSL');
  } finally {
    await server.stop();
  }
});

test('ssl.client.auth=required: the certificate subject (RFC 2253) through ssl.principal.mapping.rules is the principal', async () => {
  const { server, port } = await startTlsServer({ ...base, 'ssl.client.auth': 'required' });
  const mapped = await startTlsServer({ ...base, 'ssl.client.auth': 'required', 'ssl.principal.mapping.rules': 'RULE:^CN=(.*?),OU=(.*?),.*$/$1@$2/U,DEFAULT' });
  try {
    assert.equal(await principalSeen(port, { cert: bob.cert, key: bob.key }), 'User:CN=bob,OU=eng,O=Acme,C=US|SSL');
    assert.equal(await principalSeen(mapped.port, { cert: bob.cert, key: bob.key }), 'User:BOB@ENG|SSL');
    // Without a certificate, or with one the trust store does not vouch for: refused, logged, others go on.
    await assert.rejects(principalSeen(port), /closed/);
    await assert.rejects(principalSeen(port, { cert: mallory.cert, key: mallory.key }), /closed|certificate|alert/);
    await waitFor(() => server.closedConnections('tls-handshake-failed') >= 1, 'the refusals counted');
    assert.equal(await principalSeen(port, { cert: bob.cert, key: bob.key }), 'User:CN=bob,OU=eng,O=Acme,C=US|SSL');
  } finally {
    await server.stop();
    await mapped.server.stop();
  }
});

test('ssl.client.auth=requested: no certificate is ANONYMOUS, a valid one maps, an untrusted one is refused', async () => {
  const { server, port } = await startTlsServer({ ...base, 'ssl.client.auth': 'requested' });
  try {
    assert.equal(await principalSeen(port), 'User:ANONYMOUS|SSL');
    assert.equal(await principalSeen(port, { cert: bob.cert, key: bob.key }), 'User:CN=bob,OU=eng,O=Acme,C=US|SSL');
    await assert.rejects(principalSeen(port, { cert: mallory.cert, key: mallory.key }), /closed/);
    await waitFor(() => server.closedConnections('tls-handshake-failed') === 1, 'the untrusted certificate refused');
  } finally {
    await server.stop();
  }
});

test('a subject no mapping rule matches is refused (Kafka: no principal, no connection)', async () => {
  const { server, port } = await startTlsServer({ ...base, 'ssl.client.auth': 'required', 'ssl.principal.mapping.rules': 'RULE:^CN=(.*?),OU=ops,.*$/$1/' });
  try {
    await assert.rejects(principalSeen(port, { cert: bob.cert, key: bob.key }), /closed/);
    await waitFor(() => server.closedConnections('tls-handshake-failed') === 1, 'the unmapped subject refused');
  } finally {
    await server.stop();
  }
});

test('a plaintext Kafka client on the TLS port is closed cleanly; TLS clients are still served', async () => {
  const { server, port } = await startTlsServer(base);
  try {
    const plain = net.connect(port, '127.0.0.1');
    plain.on('error', () => undefined);
    await once(plain, 'connect');
    plain.write(requestFrame(1, 64));
    await once(plain, 'close');
    assert.equal(server.closedConnections('tls-handshake-failed'), 1);
    assert.equal(server.connectionCount(), 0);
    assert.equal(await principalSeen(port), 'User:ANONYMOUS|SSL');
  } finally {
    await server.stop();
  }
});

test('a TLS client on the PLAINTEXT port is closed cleanly; plaintext clients are still served', async () => {
  const { server, plainPort } = await startTlsServer(base);
  try {
    await assert.rejects(principalSeen(plainPort), /closed|socket disconnected|ECONNRESET/);
    await waitFor(() => server.closedConnections('tls-on-plaintext') === 1, 'the TLS hello on the plaintext port recognised');
    const plain = net.connect(plainPort, '127.0.0.1');
    await once(plain, 'connect');
    plain.write(requestFrame(3));
    const [answer] = (await once(plain, 'data')) as [Buffer];
    assert.equal(answer.subarray(8).toString(), 'User:ANONYMOUS|PLAINTEXT');
    plain.destroy();
  } finally {
    await server.stop();
  }
});

test('a TLS handshake that never completes is timed out', async () => {
  const { server, port } = await startTlsServer(base, { tlsHandshakeTimeoutMs: 300, maxConnectionsPerIp: 1 });
  try {
    const silent = net.connect(port, '127.0.0.1');
    silent.on('error', () => undefined);
    await once(silent, 'connect');
    const started = Date.now();
    await once(silent, 'close');
    assert.ok(Date.now() - started >= 250, 'not closed before the deadline');
    assert.equal(server.closedConnections('tls-handshake-timeout'), 1);
    assert.equal(server.connectionCount(), 0);
    assert.equal(await principalSeen(port), 'User:ANONYMOUS|SSL');
  } finally {
    await server.stop();
  }
});

function opensslClient(args: string[]): Promise<{ code: number | null; out: string }> {
  const child = spawn('openssl', ['s_client', ...args], { stdio: ['pipe', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.on('data', (c: Buffer) => (out += c.toString()));
  child.stderr.on('data', (c: Buffer) => (out += c.toString()));
  child.stdin.end();
  return new Promise((resolve) => child.on('close', (code) => resolve({ code, out })));
}

test('openssl s_client: verifies the broker certificate on the TLS port; fails cleanly on the plaintext port', async () => {
  const { server, port, plainPort } = await startTlsServer(base);
  try {
    const ok = await opensslClient(['-connect', `127.0.0.1:${port}`, '-CAfile', certs.caFile, '-verify_hostname', 'localhost', '-verify_return_error']);
    assert.equal(ok.code, 0, ok.out);
    assert.match(ok.out, /Verify return code: 0 \(ok\)/);
    const tls12 = await opensslClient(['-connect', `127.0.0.1:${port}`, '-CAfile', certs.caFile, '-tls1_1']);
    assert.notEqual(tls12.code, 0, 'TLS 1.1 is not in ssl.enabled.protocols');
    const wrong = await opensslClient(['-connect', `127.0.0.1:${plainPort}`, '-CAfile', certs.caFile]);
    assert.notEqual(wrong.code, 0);
    await waitFor(() => server.closedConnections('tls-on-plaintext') === 1, 'the TLS hello on the plaintext port recognised');
    assert.equal(await principalSeen(port), 'User:ANONYMOUS|SSL');
  } finally {
    await server.stop();
  }
});

test('max.connections.per.ip counts TLS connections from accept, and frees the place when they close', async () => {
  const { server, port } = await startTlsServer(base, { maxConnectionsPerIp: 1 });
  try {
    const first = tls.connect({ port, host: '127.0.0.1', servername: 'localhost', ca: certs.ca });
    first.on('error', () => undefined);
    await once(first, 'secureConnect');
    await assert.rejects(principalSeen(port), /closed|disconnected|ECONNRESET/);
    assert.equal(server.closedConnections('max-connections-per-ip'), 1);
    first.destroy();
    await waitFor(() => server.connectionCount() === 0, 'the first connection gone');
    assert.equal(await principalSeen(port), 'User:ANONYMOUS|SSL');
    // Failed handshakes give their place back too.
    await waitFor(() => server.connectionCount() === 0, 'the probe connection gone');
    for (let i = 0; i < 3; i++) {
      if (i > 0) await waitFor(() => server.closedConnections('tls-handshake-failed') === i, `failed handshake ${i}`);
      const plain = net.connect(port, '127.0.0.1');
      plain.on('error', () => undefined);
      await once(plain, 'connect');
      plain.write(requestFrame(1, 64));
      await once(plain, 'close');
    }
    await waitFor(() => server.closedConnections('tls-handshake-failed') === 3, 'three failed handshakes');
    assert.equal(await principalSeen(port), 'User:ANONYMOUS|SSL');
    // The one refusal at accept was logged as that, not also as a failed handshake.
    assert.equal(server.closedConnections('max-connections-per-ip'), 1);
  } finally {
    await server.stop();
  }
});

test('over max.connections a TLS connection completes its handshake, then waits unserved until a slot frees', async () => {
  const { server, port } = await startTlsServer(base, { maxConnections: 1 });
  try {
    const first = tls.connect({ port, host: '127.0.0.1', servername: 'localhost', ca: certs.ca });
    first.on('error', () => undefined);
    await once(first, 'secureConnect');
    await waitFor(() => server.connectionCount() === 1, 'the first connection served');
    const second = principalSeen(port);
    await waitFor(() => server.waitingConnectionCount() === 1, 'the second connection waiting');
    assert.equal(server.connectionCount(), 1);
    first.destroy();
    assert.equal(await second, 'User:ANONYMOUS|SSL');
  } finally {
    await server.stop();
  }
});

test('SASL_SSL listener: the TLS layer is the same; the principal stays ANONYMOUS for SASL to decide', async () => {
  const get = (k: string): string | null => (({ ...base, 'ssl.client.auth': 'requested' }) as Record<string, string>)[k] ?? null;
  const server = new SocketServer({
    listeners: [{ name: 'SASL_SSL', host: '127.0.0.1', port: 0, securityProtocol: 'SASL_SSL' }],
    listenerTls: new Map([['SASL_SSL', buildListenerTls('SASL_SSL', get)]]),
    dispatcher: echoPrincipal,
    logger: silentLogger(),
    socketRequestMaxBytes: 104857600,
    connectionsMaxIdleMs: 600000,
    maxConnections: 1000,
    maxConnectionsPerIp: 1000,
  });
  await server.start();
  try {
    assert.equal(await principalSeen(server.boundPorts().get('SASL_SSL')!, { cert: bob.cert, key: bob.key }), 'User:ANONYMOUS|SASL_SSL');
  } finally {
    await server.stop();
  }
});
