// The client library's TLS: host name verification as Kafka's default (https), and its switch.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestBroker } from '../helpers/broker.js';
import { makeTestCerts } from '../helpers/tls-certs.js';
import { Connection } from '../../src/client/connection.js';

const certs = makeTestCerts();
after(() => certs.cleanup());

test('a broker certificate without the host name is refused unless ssl.endpoint.identification.algorithm is empty', async () => {
  const noSan = certs.client('nosan', '/CN=not-this-host');
  const b = await startTestBroker({ listeners: 'SSL://127.0.0.1:0', 'ssl.keystore.type': 'PEM', 'ssl.keystore.location': noSan.keystore });
  try {
    const opts = { clientId: 't', connectTimeoutMs: 10_000, requestTimeoutMs: 10_000 };
    await assert.rejects(
      Connection.connect('127.0.0.1', b.port, { ...opts, security: { protocol: 'SSL', tls: { ca: certs.ca } } }),
      /TLS connection to 127\.0\.0\.1:\d+ failed: .*(IP|altnames|host).*ssl\.endpoint\.identification\.algorithm=https/,
    );
    const c = await Connection.connect('127.0.0.1', b.port, { ...opts, security: { protocol: 'SSL', tls: { ca: certs.ca, verifyHostname: false } } });
    assert.ok(c.brokerApiVersions.size > 0);
    c.close();
    // Plaintext client settings against the TLS port: a clear failure, not a hang.
    await assert.rejects(Connection.connect('127.0.0.1', b.port, opts), /closed|failed|timed out/);
  } finally {
    await b.stop();
  }
});
