/**
 * KIP-368 re-authentication under long polls (issue 21). The client: a connection kept busy by back-to-back
 * fetches that each wait almost a whole session (as a replica fetcher's replica.fetch.wait.max.ms
 * against a short connections.max.reauth.ms) must re-authenticate before its session expires.
 * Fjord's client used to wait at 85-95% of the session for the requests in flight, so its
 * SaslHandshake reached the broker after expiry and the broker closed the connection
 * ("authenticated session expired and was not re-authenticated"). The broker: as Kafka's, it
 * takes a re-authentication that starts after the session ended.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestBroker } from '../helpers/broker.js';
import { Admin } from '../../src/client/index.js';
import { Connection } from '../../src/client/connection.js';
import { Api } from '../../src/client/apis.js';
import { ErrorCode } from '../../src/protocol/errors.js';
import { RawClient } from '../helpers/raw-client.js';
import {
  ApiVersionsRequestCodec,
  ApiVersionsResponseCodec,
  SaslAuthenticateRequestCodec,
  SaslAuthenticateResponseCodec,
  SaslHandshakeRequestCodec,
  SaslHandshakeResponseCodec,
} from '../../src/protocol/messages/index.js';

const JAAS = 'org.apache.kafka.common.security.plain.PlainLoginModule required user_broker="broker-secret";';
const SESSION_MS = 3000;
/** Each fetch parks this long on an empty partition: most of a session. */
const LONG_POLL_MS = 2500;
const RUN_MS = 6000;

test('a connection busy with long-poll fetches re-authenticates before its session expires, every session', { timeout: 60_000 }, async (t) => {
  const b = await startTestBroker({
    listeners: 'PLAINTEXT://127.0.0.1:0,SASL_PLAINTEXT://127.0.0.1:0',
    'sasl.enabled.mechanisms': 'PLAIN',
    'listener.name.sasl_plaintext.plain.sasl.jaas.config': JAAS,
    'connections.max.reauth.ms': String(SESSION_MS),
  });
  const admin = new Admin({ bootstrapServers: b.bootstrap });
  let conn: Connection | undefined;
  try {
    assert.equal((await admin.createTopics([{ name: 'idle', numPartitions: 1, replicationFactor: 1 }])).get('idle'), null);
    conn = await Connection.connect('127.0.0.1', b.broker.boundPorts().get('SASL_PLAINTEXT')!, {
      clientId: 'long-poll',
      connectTimeoutMs: 5000,
      requestTimeoutMs: 30_000,
      security: { protocol: 'SASL_PLAINTEXT', sasl: { mechanism: 'PLAIN', username: 'broker', password: 'broker-secret' } },
    });
    // What is left of the session when the broker answers (Kafka's rule): a millisecond may pass
    // between the session's start and the answer.
    const lifetime = Number(conn.sessionLifetimeMs);
    assert.ok(lifetime <= SESSION_MS && lifetime > SESSION_MS - 1000, `session lifetime ${lifetime} ms of ${SESSION_MS}`);
    const c = conn;
    const longPoll = () =>
      c.send(Api.Fetch, {
        replicaId: -1,
        maxWaitMs: LONG_POLL_MS,
        minBytes: 1,
        maxBytes: 1 << 20,
        isolationLevel: 0,
        topics: [{ topic: 'idle', partitions: [{ partition: 0, fetchOffset: 0n, partitionMaxBytes: 1 << 20 }] }],
      });
    const end = Date.now() + RUN_MS;
    let fetches = 0;
    while (Date.now() < end) {
      const started = Date.now();
      let errorCode: number;
      try {
        errorCode = (await longPoll()).errorCode;
      } catch (err) {
        assert.fail(
          `fetch ${fetches + 1} failed after ${Date.now() - started} ms (${c.reauthentications} re-authentications so far): ${(err as Error).message}`,
        );
      }
      assert.equal(errorCode, ErrorCode.NONE);
      fetches++;
    }
    // One more request: it waits for a re-authentication under way, so none is cut by the close below.
    assert.equal((await conn.send(Api.Metadata, { topics: [] })).topics.length, 0);
    assert.equal(conn.isClosed, false, 'the broker never closed the connection');
    // Served for RUN_MS on SESSION_MS sessions: it must have re-authenticated at least this often.
    assert.ok(conn.reauthentications >= Math.floor(RUN_MS / SESSION_MS), `${conn.reauthentications} re-authentications in ${RUN_MS} ms`);
    // Each SaslHandshake went out with time to spare, not behind the long poll.
    assert.ok((conn.minReauthMarginMs ?? -1) > 0, `the least time left in a session at its re-authentication: ${conn.minReauthMarginMs} ms`);
    assert.ok(fetches >= 3, `${fetches} fetches`);
    t.diagnostic(
      `${fetches} fetches, ${conn.reauthentications} re-authentications, least time left in a session at its re-authentication ${conn.minReauthMarginMs} ms`,
    );
  } finally {
    conn?.close();
    await admin.close();
    await b.stop();
  }
});

test("a re-authentication that starts after the session ended is accepted, as Kafka's broker checks SaslHandshake before the expiry", {
  timeout: 30_000,
}, async () => {
  // Kafka's clients wait for their requests in flight before re-authenticating, so behind a long
  // poll their SaslHandshake may arrive after the session ended; Kafka's SocketServer begins the
  // re-authentication before it checks the expiry. Anything else after the end still closes.
  const b = await startTestBroker({
    listeners: 'PLAINTEXT://127.0.0.1:0,SASL_PLAINTEXT://127.0.0.1:0',
    'sasl.enabled.mechanisms': 'PLAIN',
    'listener.name.sasl_plaintext.plain.sasl.jaas.config': JAAS,
    'connections.max.reauth.ms': String(SESSION_MS),
    'connection.failed.authentication.delay.ms': '0',
  });
  const port = b.broker.boundPorts().get('SASL_PLAINTEXT')!;
  const login = async (c: RawClient) => {
    const hs = await c.request(17, SaslHandshakeRequestCodec, SaslHandshakeResponseCodec, 1, { mechanism: 'PLAIN' });
    assert.equal(hs.errorCode, 0);
    return c.request(36, SaslAuthenticateRequestCodec, SaslAuthenticateResponseCodec, 2, { authBytes: Buffer.from('\0broker\0broker-secret') });
  };
  const apiVersions = (c: RawClient) => c.request(18, ApiVersionsRequestCodec, ApiVersionsResponseCodec, 0, {});
  const late = await RawClient.connect(port);
  const other = await RawClient.connect(port);
  try {
    const start = Date.now();
    assert.equal((await login(late)).errorCode, 0);
    assert.equal((await login(other)).errorCode, 0);
    await new Promise((r) => setTimeout(r, Math.max(0, start + SESSION_MS + 300 - Date.now())));
    const again = await login(late);
    assert.equal(again.errorCode, 0, 'the late re-authentication succeeds');
    assert.ok(again.sessionLifetimeMs > 0n && again.sessionLifetimeMs <= BigInt(SESSION_MS), `a new session of ${again.sessionLifetimeMs} ms`);
    assert.equal((await apiVersions(late)).errorCode, 0, 'served after the late re-authentication');
    await assert.rejects(apiVersions(other), /connection closed/, 'any other request after the end closes the connection');
  } finally {
    late.close();
    other.close();
    await b.stop();
  }
});
