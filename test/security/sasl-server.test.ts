// SASL on the broker: listeners and configs, SaslHandshake v0/v1, SaslAuthenticate, PLAIN and
// SCRAM-SHA-256/512, the pre-authentication restrictions, failed authentication.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { once } from 'node:events';
import { startTestBroker, type TestBroker } from '../helpers/broker.js';
import { RawClient, encodeRequest } from '../helpers/raw-client.js';
import { Admin } from '../../src/client/index.js';
import { KafkaError } from '../../src/protocol/errors.js';
import { defaultBrokerConfig } from '../../src/server/config/index.js';
import { ConfigError } from '../../src/config/index.js';
import {
  ApiVersionsRequestCodec,
  ApiVersionsResponseCodec,
  CreateTopicsRequestCodec,
  CreateTopicsResponseCodec,
  SaslAuthenticateRequestCodec,
  SaslAuthenticateResponseCodec,
  SaslHandshakeRequestCodec,
  SaslHandshakeResponseCodec,
} from '../../src/protocol/messages/index.js';
import { entityPath } from '../../src/metadata/client-entity-configs.js';
import { formatCredential, makeCredential } from '../../src/security/sasl/scram.js';
import type { ClientSasl } from '../../src/security/client-security.js';

const PLAIN_JAAS =
  'org.apache.kafka.common.security.plain.PlainLoginModule required username="admin" password="admin-secret" user_admin="admin-secret" user_alice="alice-secret";';

async function saslBroker(extra: Record<string, string> = {}): Promise<{ b: TestBroker; port: number }> {
  const b = await startTestBroker({
    listeners: 'PLAINTEXT://127.0.0.1:0,SASL_PLAINTEXT://127.0.0.1:0',
    'sasl.enabled.mechanisms': 'PLAIN,SCRAM-SHA-256,SCRAM-SHA-512',
    'listener.name.sasl_plaintext.plain.sasl.jaas.config': PLAIN_JAAS,
    'connection.failed.authentication.delay.ms': '10',
    ...extra,
  });
  return { b, port: b.broker.boundPorts().get('SASL_PLAINTEXT')! };
}

const admin = (port: number, sasl?: ClientSasl): Admin =>
  new Admin({ bootstrapServers: `127.0.0.1:${port}`, requestTimeoutMs: 10000, ...(sasl ? { security: { protocol: 'SASL_PLAINTEXT', sasl } } : {}) });

async function closedWithin(socket: net.Socket, ms: number): Promise<boolean> {
  if (socket.destroyed || socket.readableEnded) return true;
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      new Promise<boolean>((r) => socket.once('close', () => r(true))),
      new Promise<boolean>((r) => (timer = setTimeout(() => r(false), ms))),
    ]);
  } finally {
    clearTimeout(timer); // a timer left running would keep the test process alive for `ms` after the last test
  }
}

test('SASL listener config: GSSAPI alone (Kafka default) or PLAIN without JAAS stops start-up with one clear line', () => {
  assert.throws(
    () => defaultBrokerConfig({ listeners: 'SASL_PLAINTEXT://127.0.0.1:0', 'log.dirs': '/tmp/x' }),
    (e: unknown) => e instanceof ConfigError && /enables SASL mechanisms \[GSSAPI\], none of which Fjord supports/.test(e.message),
  );
  assert.throws(
    () => defaultBrokerConfig({ listeners: 'SASL_PLAINTEXT://127.0.0.1:0', 'log.dirs': '/tmp/x', 'sasl.enabled.mechanisms': 'PLAIN' }),
    (e: unknown) => e instanceof ConfigError && /listener\.name\.sasl_plaintext\.plain\.sasl\.jaas\.config/.test(e.message),
  );
  // Per-listener mechanisms win over the global list; SSL listeners are not this layer's.
  const cfg = defaultBrokerConfig({
    listeners: 'PLAINTEXT://127.0.0.1:0,SASL_PLAINTEXT://127.0.0.1:0',
    'log.dirs': '/tmp/x',
    'listener.name.sasl_plaintext.sasl.enabled.mechanisms': 'GSSAPI,SCRAM-SHA-512',
    'listener.name.sasl_plaintext.scram-sha-512.connections.max.reauth.ms': '5000',
  });
  assert.deepEqual(cfg.sasl.listeners.get('SASL_PLAINTEXT')!.mechanisms, ['SCRAM-SHA-512']);
  assert.equal(cfg.sasl.listeners.get('SASL_PLAINTEXT')!.reauthMs.get('SCRAM-SHA-512'), 5000);
  assert.equal(cfg.sasl.maxReceiveSize, 524288);
  assert.equal(cfg.sasl.failedAuthDelayMs, 100);
  // Inter-broker SASL needs a supported mechanism and the broker's own username/password.
  assert.throws(
    () =>
      defaultBrokerConfig({
        listeners: 'SASL_PLAINTEXT://127.0.0.1:0',
        'log.dirs': '/tmp/x',
        'sasl.enabled.mechanisms': 'PLAIN',
        'listener.name.sasl_plaintext.plain.sasl.jaas.config': 'org.apache.kafka.common.security.plain.PlainLoginModule required user_a="b";',
      }),
    (e: unknown) => e instanceof ConfigError && /sasl\.mechanism\.inter\.broker\.protocol GSSAPI/.test(e.message),
  );
});

test("PLAIN: right password authenticates, wrong password and unknown user get SASL_AUTHENTICATION_FAILED with Kafka's message; the broker keeps serving", async () => {
  const { b, port } = await saslBroker({ 'security.inter.broker.protocol': 'PLAINTEXT' });
  try {
    const ok = admin(port, { mechanism: 'PLAIN', username: 'alice', password: 'alice-secret' });
    await ok.createTopics([{ name: 't1', numPartitions: 1, replicationFactor: 1 }]);
    assert.ok((await ok.listTopics()).includes('t1'));
    await ok.close();
    for (const creds of [
      { username: 'alice', password: 'wrong' },
      { username: 'nobody', password: 'x' },
    ]) {
      const bad = admin(port, { mechanism: 'PLAIN', ...creds });
      await assert.rejects(
        bad.listTopics(),
        (e: unknown) => e instanceof KafkaError && e.code === 58 && /Authentication failed: Invalid username or password/.test(e.message),
      );
      await bad.close();
    }
    const again = admin(port, { mechanism: 'PLAIN', username: 'admin', password: 'admin-secret' });
    assert.ok((await again.listTopics()).includes('t1'));
    await again.close();
  } finally {
    await b.stop();
  }
});

test("SCRAM-SHA-256 and -512 with credentials stored in Kafka's form; wrong password gets Kafka's generic message", async () => {
  const { b, port } = await saslBroker({ 'security.inter.broker.protocol': 'PLAINTEXT' });
  try {
    const store = b.broker.services.clientEntities;
    await store.set(entityPath({ user: 'bob' }), {
      'SCRAM-SHA-256': formatCredential(await makeCredential('SCRAM-SHA-256', 'bob-256', 4096)),
      'SCRAM-SHA-512': formatCredential(await makeCredential('SCRAM-SHA-512', 'bob-512', 8192)),
    });
    assert.match(store.get('users/bob')['SCRAM-SHA-512']!, /^salt=[A-Za-z0-9+/=]+,stored_key=[A-Za-z0-9+/=]+,server_key=[A-Za-z0-9+/=]+,iterations=8192$/);
    for (const [mechanism, password] of [
      ['SCRAM-SHA-256', 'bob-256'],
      ['SCRAM-SHA-512', 'bob-512'],
    ] as const) {
      const a = admin(port, { mechanism, username: 'bob', password });
      await a.createTopics([{ name: `t-${mechanism}`, numPartitions: 1, replicationFactor: 1 }]);
      await a.close();
      const bad = admin(port, { mechanism, username: 'bob', password: 'nope' });
      await assert.rejects(
        bad.listTopics(),
        (e: unknown) =>
          e instanceof KafkaError &&
          e.code === 58 &&
          e.message.includes(`Authentication failed during authentication due to invalid credentials with SASL mechanism ${mechanism}`),
      );
      await bad.close();
    }
    // A user without a credential for the mechanism: same answer (nothing tells who exists).
    const ghost = admin(port, { mechanism: 'SCRAM-SHA-256', username: 'ghost', password: 'x' });
    await assert.rejects(
      ghost.listTopics(),
      (e: unknown) => e instanceof KafkaError && e.code === 58 && /invalid credentials with SASL mechanism SCRAM-SHA-256/.test(e.message),
    );
    await ghost.close();
  } finally {
    await b.stop();
  }
});

test('before authentication only ApiVersions and SASL are served: Produce/CreateTopics/Fetch close the connection, nothing is created', async () => {
  const { b, port } = await saslBroker({ 'security.inter.broker.protocol': 'PLAINTEXT' });
  try {
    const c = await RawClient.connect(port);
    const versions = await c.request(18, ApiVersionsRequestCodec, ApiVersionsResponseCodec, 0, {});
    assert.ok(versions.apiKeys.some((k) => k.apiKey === 17 && k.maxVersion === 1));
    assert.ok(versions.apiKeys.some((k) => k.apiKey === 36 && k.maxVersion === 2));
    await assert.rejects(
      c.request(19, CreateTopicsRequestCodec, CreateTopicsResponseCodec, 4, {
        topics: [{ name: 'sneaky', numPartitions: 1, replicationFactor: 1, assignments: [], configs: [] }],
        timeoutMs: 1000,
        validateOnly: false,
      }),
      /connection closed/,
    );
    for (const apiKey of [0, 1, 3]) {
      const s = net.connect(port, '127.0.0.1');
      await once(s, 'connect');
      s.on('error', () => {});
      const frame = encodeRequest(18, ApiVersionsRequestCodec, 0, {}, 7);
      frame.writeInt16BE(apiKey, 4);
      s.write(frame);
      assert.ok(await closedWithin(s, 5000), `api key ${apiKey} before authentication closes the connection`);
    }
    // SaslAuthenticate before SaslHandshake is out of order too.
    const early = await RawClient.connect(port);
    await assert.rejects(
      early.request(36, SaslAuthenticateRequestCodec, SaslAuthenticateResponseCodec, 1, { authBytes: Buffer.from('\0alice\0alice-secret') }),
      /connection closed/,
    );
    const a = admin(port, { mechanism: 'PLAIN', username: 'admin', password: 'admin-secret' });
    assert.ok(!(await a.listTopics()).includes('sneaky'));
    await a.close();
  } finally {
    await b.stop();
  }
});

test('frames before authentication are limited to sasl.server.max.receive.size; after it, socket.request.max.bytes', async () => {
  const { b, port } = await saslBroker({ 'security.inter.broker.protocol': 'PLAINTEXT', 'sasl.server.max.receive.size': '1000' });
  try {
    const s = net.connect(port, '127.0.0.1');
    await once(s, 'connect');
    s.on('error', () => {});
    const prefix = Buffer.alloc(4);
    prefix.writeInt32BE(1001);
    s.write(prefix); // only the prefix: the broker must refuse before buffering the payload
    assert.ok(await closedWithin(s, 5000));
    assert.ok(b.broker.boundPorts().size === 2);
    // The same size on the PLAINTEXT listener is fine (it waits for the rest).
    const p = net.connect(b.port, '127.0.0.1');
    await once(p, 'connect');
    p.write(prefix);
    assert.equal(await closedWithin(p, 300), false);
    p.destroy();
  } finally {
    await b.stop();
  }
});

test('SaslHandshake v0: raw PLAIN token frames without Kafka headers; unsupported mechanism answers UNSUPPORTED_SASL_MECHANISM and closes', async () => {
  const { b, port } = await saslBroker({ 'security.inter.broker.protocol': 'PLAINTEXT' });
  try {
    const c = net.connect(port, '127.0.0.1');
    await once(c, 'connect');
    let got = Buffer.alloc(0);
    c.on('data', (d: Buffer) => (got = Buffer.concat([got, d])));
    const frames = async (n: number): Promise<Buffer[]> => {
      const deadline = Date.now() + 5000;
      for (;;) {
        const out: Buffer[] = [];
        let off = 0;
        while (off + 4 <= got.length && off + 4 + got.readInt32BE(off) <= got.length) {
          out.push(got.subarray(off + 4, off + 4 + got.readInt32BE(off)));
          off += 4 + got.readInt32BE(off);
        }
        if (out.length >= n) return out;
        if (Date.now() > deadline) throw new Error(`got ${out.length} frames, wanted ${n}`);
        await new Promise((r) => setTimeout(r, 10));
      }
    };
    c.write(encodeRequest(17, SaslHandshakeRequestCodec, 0, { mechanism: 'PLAIN' }, 1));
    const [hsFrame] = await frames(1);
    const { Reader } = await import('../../src/protocol/primitives/index.js');
    const r = new Reader(hsFrame!);
    assert.equal(r.int32(), 1);
    const hs = SaslHandshakeResponseCodec.read(r, 0);
    assert.equal(hs.errorCode, 0);
    assert.deepEqual(hs.mechanisms, ['PLAIN', 'SCRAM-SHA-256', 'SCRAM-SHA-512']);
    // Raw token: size prefix + "\0alice\0alice-secret"; the broker answers an empty raw frame.
    const token = Buffer.from('\0alice\0alice-secret');
    const framed = Buffer.alloc(4 + token.length);
    framed.writeInt32BE(token.length);
    token.copy(framed, 4);
    c.write(framed);
    const second = await frames(2);
    assert.equal(second[1]!.length, 0);
    // Authenticated: a normal request now works on this connection.
    c.write(encodeRequest(18, ApiVersionsRequestCodec, 0, {}, 3));
    const third = await frames(3);
    assert.equal(third[2]!.readInt32BE(0), 3);
    assert.equal(third[2]!.readInt16BE(4), 0);
    c.destroy();

    const d = await RawClient.connect(port);
    const bad = await d.request(17, SaslHandshakeRequestCodec, SaslHandshakeResponseCodec, 1, { mechanism: 'GSSAPI' });
    assert.equal(bad.errorCode, 33);
    assert.ok(await closedWithin(d.socket, 5000));
  } finally {
    await b.stop();
  }
});

test('on a PLAINTEXT listener SaslHandshake answers ILLEGAL_SASL_STATE, as Kafka', async () => {
  const { b } = await saslBroker({ 'security.inter.broker.protocol': 'PLAINTEXT' });
  try {
    const c = await RawClient.connect(b.port);
    const hs = await c.request(17, SaslHandshakeRequestCodec, SaslHandshakeResponseCodec, 1, { mechanism: 'PLAIN' });
    assert.equal(hs.errorCode, 34);
    c.close();
  } finally {
    await b.stop();
  }
});
