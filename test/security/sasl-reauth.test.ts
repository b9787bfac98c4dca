// KIP-368 re-authentication: connections.max.reauth.ms bounds a SASL session; SaslAuthenticate
// v1+ tells its lifetime; a request after expiry closes the connection unless the client
// re-authenticated on the live connection (same principal, same mechanism).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestBroker } from '../helpers/broker.js';
import { RawClient } from '../helpers/raw-client.js';
import {
  ApiVersionsRequestCodec,
  ApiVersionsResponseCodec,
  SaslAuthenticateRequestCodec,
  SaslAuthenticateResponseCodec,
  SaslHandshakeRequestCodec,
  SaslHandshakeResponseCodec,
} from '../../src/protocol/messages/index.js';

const PLAIN_JAAS = 'org.apache.kafka.common.security.plain.PlainLoginModule required user_alice="alice-secret" user_bob="bob-secret";';
const LIFETIME = 3000;

async function broker(reauth: Record<string, string>) {
  const b = await startTestBroker({
    listeners: 'PLAINTEXT://127.0.0.1:0,SASL_PLAINTEXT://127.0.0.1:0',
    'sasl.enabled.mechanisms': 'PLAIN',
    'listener.name.sasl_plaintext.plain.sasl.jaas.config': PLAIN_JAAS,
    'connection.failed.authentication.delay.ms': '0',
    ...reauth,
  });
  return { b, port: b.broker.boundPorts().get('SASL_PLAINTEXT')! };
}

async function login(c: RawClient, user: string, password: string, authVersion = 2) {
  const hs = await c.request(17, SaslHandshakeRequestCodec, SaslHandshakeResponseCodec, 1, { mechanism: 'PLAIN' });
  assert.equal(hs.errorCode, 0);
  return c.request(36, SaslAuthenticateRequestCodec, SaslAuthenticateResponseCodec, authVersion, { authBytes: Buffer.from(`\0${user}\0${password}`) });
}

const apiVersions = (c: RawClient) => c.request(18, ApiVersionsRequestCodec, ApiVersionsResponseCodec, 0, {});
const until = (t: number) => new Promise((r) => setTimeout(r, Math.max(0, t - Date.now())));

test('session lifetime is answered (listener/mechanism prefix), an expired session is closed on its next request, a re-authenticated one lives on', {
  timeout: 60_000,
}, async () => {
  const { b, port } = await broker({ 'listener.name.sasl_plaintext.plain.connections.max.reauth.ms': String(LIFETIME) });
  try {
    // Not re-authenticated: the first request after expiry closes the connection.
    const lazy = await RawClient.connect(port);
    const start = Date.now();
    const auth = await login(lazy, 'alice', 'alice-secret');
    assert.equal(auth.errorCode, 0);
    assert.ok(auth.sessionLifetimeMs > 0n && auth.sessionLifetimeMs <= BigInt(LIFETIME), String(auth.sessionLifetimeMs));
    assert.equal((await apiVersions(lazy)).errorCode, 0);

    // Re-authenticated at half the lifetime (room for a loaded machine): still served after the first expiry.
    const diligent = await RawClient.connect(port);
    const dStart = Date.now();
    assert.equal((await login(diligent, 'alice', 'alice-secret')).errorCode, 0);
    await until(dStart + LIFETIME * 0.5);
    const again = await login(diligent, 'alice', 'alice-secret');
    assert.equal(again.errorCode, 0);
    assert.ok(again.sessionLifetimeMs > 0n);

    await until(Math.max(start, dStart) + LIFETIME + 200);
    await assert.rejects(apiVersions(lazy), /connection closed/);
    assert.equal((await apiVersions(diligent)).errorCode, 0);
    diligent.close();

    // SaslAuthenticate v0 (a client that cannot re-authenticate): closed at expiry all the same.
    const old = await RawClient.connect(port);
    const oStart = Date.now();
    assert.equal((await login(old, 'alice', 'alice-secret', 0)).errorCode, 0);
    await until(oStart + LIFETIME + 200);
    await assert.rejects(apiVersions(old), /connection closed/);
  } finally {
    await b.stop();
  }
});

test('a re-authentication may not change the principal: SASL_AUTHENTICATION_FAILED and the connection closes', { timeout: 30_000 }, async () => {
  const { b, port } = await broker({ 'connections.max.reauth.ms': '60000' });
  try {
    const c = await RawClient.connect(port);
    assert.equal((await login(c, 'alice', 'alice-secret')).errorCode, 0);
    const swap = await login(c, 'bob', 'bob-secret');
    assert.equal(swap.errorCode, 58);
    assert.equal(swap.errorMessage, 'Cannot change principals during re-authentication from User:alice: User:bob');
    await assert.rejects(apiVersions(c), /connection closed/);
  } finally {
    await b.stop();
  }
});

test('without connections.max.reauth.ms sessions do not expire and a second handshake answers ILLEGAL_SASL_STATE', { timeout: 30_000 }, async () => {
  const { b, port } = await broker({});
  try {
    const c = await RawClient.connect(port);
    const auth = await login(c, 'alice', 'alice-secret');
    assert.equal(auth.sessionLifetimeMs, 0n);
    const hs = await c.request(17, SaslHandshakeRequestCodec, SaslHandshakeResponseCodec, 1, { mechanism: 'PLAIN' });
    assert.equal(hs.errorCode, 34);
    const sa = await c.request(36, SaslAuthenticateRequestCodec, SaslAuthenticateResponseCodec, 1, { authBytes: Buffer.from('\0alice\0alice-secret') });
    assert.equal(sa.errorCode, 34);
    assert.equal((await apiVersions(c)).errorCode, 0);
  } finally {
    await b.stop();
  }
});

test("Fjord's client re-authenticates before its session ends (KIP-368) and keeps its connection", { timeout: 60_000 }, async () => {
  const { b, port } = await broker({ 'connections.max.reauth.ms': String(LIFETIME) });
  const { Admin } = await import('../../src/client/index.js');
  const admin = new Admin({
    bootstrapServers: `127.0.0.1:${port}`,
    security: { protocol: 'SASL_PLAINTEXT', sasl: { mechanism: 'PLAIN', username: 'alice', password: 'alice-secret' } },
  });
  try {
    const conn = await admin.cluster.anyConnection();
    // What is left of the session when the broker answers: a millisecond may pass before it does.
    const lifetime = Number(conn.sessionLifetimeMs);
    assert.ok(lifetime <= LIFETIME && lifetime > LIFETIME - 1000, `session lifetime ${lifetime} ms of ${LIFETIME}`);
    const end = Date.now() + LIFETIME * 3;
    while (Date.now() < end) {
      await admin.listTopics();
      await new Promise((r) => setTimeout(r, 100));
    }
    assert.equal(conn.isClosed, false);
    assert.ok(conn.reauthentications >= 2, `re-authenticated ${conn.reauthentications} times`);
    assert.equal(await admin.cluster.anyConnection(), conn);
  } finally {
    await admin.close();
    await b.stop();
  }
});
