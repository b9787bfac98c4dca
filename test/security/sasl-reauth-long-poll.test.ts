/**
 * KIP-368 re-authentication under long polls (issue 21): a connection kept busy by back-to-back
 * fetches that each wait almost a whole session (as a replica fetcher's replica.fetch.wait.max.ms
 * against a short connections.max.reauth.ms) must re-authenticate before its session expires.
 * Fjord's client used to wait at 85-95% of the session for the requests in flight, so its
 * SaslHandshake reached the broker after expiry and the broker closed the connection
 * ("authenticated session expired and was not re-authenticated").
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestBroker } from '../helpers/broker.js';
import { Admin } from '../../src/client/index.js';
import { Connection } from '../../src/client/connection.js';
import { Api } from '../../src/client/apis.js';
import { ErrorCode } from '../../src/protocol/errors.js';

const JAAS = 'org.apache.kafka.common.security.plain.PlainLoginModule required user_broker="broker-secret";';
const SESSION_MS = 3000;
/** Each fetch parks this long on an empty partition: most of a session. */
const LONG_POLL_MS = 2500;
const RUN_MS = 8000;

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
      clientId: 'long-poll', connectTimeoutMs: 5000, requestTimeoutMs: 30_000,
      security: { protocol: 'SASL_PLAINTEXT', sasl: { mechanism: 'PLAIN', username: 'broker', password: 'broker-secret' } },
    });
    assert.equal(conn.sessionLifetimeMs, BigInt(SESSION_MS));
    const c = conn;
    const longPoll = () => c.send(Api.Fetch, {
      replicaId: -1, maxWaitMs: LONG_POLL_MS, minBytes: 1, maxBytes: 1 << 20, isolationLevel: 0,
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
        assert.fail(`fetch ${fetches + 1} failed after ${Date.now() - started} ms (${c.reauthentications} re-authentications so far): ${(err as Error).message}`);
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
    t.diagnostic(`${fetches} fetches, ${conn.reauthentications} re-authentications, least time left in a session at its re-authentication ${conn.minReauthMarginMs} ms`);
  } finally {
    conn?.close();
    await admin.close();
    await b.stop();
  }
});
