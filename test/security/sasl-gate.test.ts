// The authenticator in front of the router, called directly: the principal it sets, the frame
// limits it lifts, and what reaches the router before and after authentication.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { testConnection } from '../helpers/connection-context.js';
import { encodeRequest } from '../helpers/raw-client.js';
import { withSaslAuthentication, saslFrameLimitsFor } from '../../src/server/network/sasl-gate.js';
import { defaultBrokerConfig } from '../../src/server/config/index.js';
import { ClientEntityConfigs } from '../../src/metadata/client-entity-configs.js';
import { ApiVersionsRequestCodec, SaslAuthenticateRequestCodec, SaslHandshakeRequestCodec } from '../../src/protocol/messages/index.js';
import { CloseConnectionError, type ConnectionContext } from '../../src/server/network/types.js';
import { silentLogger } from '../../src/server/logger.js';

const cfg = defaultBrokerConfig({
  listeners: 'PLAINTEXT://127.0.0.1:0,SASL_PLAINTEXT://127.0.0.1:0',
  'log.dirs': '/tmp/unused',
  'sasl.enabled.mechanisms': 'PLAIN',
  'listener.name.sasl_plaintext.plain.sasl.jaas.config': 'org.apache.kafka.common.security.plain.PlainLoginModule required user_alice="s";',
  'security.inter.broker.protocol': 'PLAINTEXT',
}).sasl;

test('the gate sets User:<name> on success, lifts the frame limit, and passes only ApiVersions before it', async () => {
  const store = await ClientEntityConfigs.open({ loadAll: async () => new Map(), load: async () => ({}), store: async () => undefined });
  const routed: string[] = [];
  const gate = withSaslAuthentication(
    (frame, ctx) => {
      routed.push(`${frame.readInt16BE(0)}:${ctx.principal.name}`);
      return Buffer.alloc(0);
    },
    { config: cfg, clientEntities: store, logger: silentLogger() },
  );
  const limits = saslFrameLimitsFor(cfg)({ name: 'SASL_PLAINTEXT', securityProtocol: 'SASL_PLAINTEXT' });
  assert.deepEqual(limits, { maxBytes: 524288, minBytes: 0, maxName: 'sasl.server.max.receive.size' });
  assert.equal(saslFrameLimitsFor(cfg)({ name: 'PLAINTEXT', securityProtocol: 'PLAINTEXT' }), undefined);
  const ctx: ConnectionContext = testConnection({ listenerName: 'SASL_PLAINTEXT', securityProtocol: 'SASL_PLAINTEXT', frameLimits: limits! });
  const frame = (b: Buffer): Buffer => b.subarray(4);
  await gate(frame(encodeRequest(18, ApiVersionsRequestCodec, 0, {}, 1)), ctx);
  await gate(frame(encodeRequest(17, SaslHandshakeRequestCodec, 1, { mechanism: 'PLAIN' }, 2)), ctx);
  assert.equal(ctx.principal.name, 'ANONYMOUS');
  await gate(frame(encodeRequest(36, SaslAuthenticateRequestCodec, 2, { authBytes: Buffer.from('\0alice\0s') }, 3)), ctx);
  assert.deepEqual(ctx.principal, { principalType: 'User', name: 'alice' });
  assert.equal(ctx.frameLimits, undefined);
  await gate(frame(encodeRequest(3, ApiVersionsRequestCodec, 0, {}, 4)), ctx);
  assert.deepEqual(routed, ['18:ANONYMOUS', '3:alice']);

  const other = testConnection({ listenerName: 'SASL_PLAINTEXT', securityProtocol: 'SASL_PLAINTEXT' });
  assert.throws(
    () => gate(frame(encodeRequest(3, ApiVersionsRequestCodec, 0, {}, 1)), other),
    (e: unknown) => e instanceof CloseConnectionError && /Unexpected Kafka request of type METADATA during SASL handshake/.test(e.message),
  );
  // PLAINTEXT connections go straight to the router.
  await gate(frame(encodeRequest(0, ApiVersionsRequestCodec, 0, {}, 1)), testConnection());
  assert.equal(routed.at(-1), '0:ANONYMOUS');
});
