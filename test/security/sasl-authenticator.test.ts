// The SASL exchange without frames (security/sasl/authenticator.ts); the gate that reads and
// writes its frames is covered by sasl-gate.test.ts.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SaslServerAuthenticator } from '../../src/security/sasl/authenticator.js';
import { ANONYMOUS, userPrincipal, type KafkaPrincipal } from '../../src/security/principal.js';
import { ErrorCode } from '../../src/protocol/errors.js';
import type { ClientEntityConfigStore } from '../../src/metadata/client-entity-configs.js';
import type { SaslListenerConfig } from '../../src/security/sasl/config.js';

const noEntities: ClientEntityConfigStore = { get: () => ({}), entries: () => new Map(), set: async () => undefined, onChange: () => undefined };
const listener: SaslListenerConfig = {
  listenerName: 'SASL_PLAINTEXT',
  mechanisms: ['PLAIN'],
  plainUsers: new Map([
    ['alice', 'alice-secret'],
    ['bob', 'bob-secret'],
  ]),
  reauthMs: new Map([['PLAIN', 1000]]),
};
const plain = (user: string, password: string): Buffer => Buffer.from(`\0${user}\0${password}`);

test('a handshake for a mechanism the listener does not serve is refused', () => {
  const auth = new SaslServerAuthenticator(listener, noEntities, () => 0);
  const outcome = auth.handshake('SCRAM-SHA-256', 1, false);
  assert.equal(outcome.errorCode, ErrorCode.UNSUPPORTED_SASL_MECHANISM);
  assert.equal(auth.state, 'handshake');
});

test('PLAIN authenticates the peer, and the session ends after connections.max.reauth.ms', () => {
  let now = 10_000;
  const auth = new SaslServerAuthenticator(listener, noEntities, () => now);
  assert.deepEqual(auth.handshake('PLAIN', 1, false), { errorCode: 0 });
  assert.equal(auth.state, 'authenticate');
  const peer: { principal: KafkaPrincipal } = { principal: ANONYMOUS };
  const step = auth.token(plain('alice', 'alice-secret'), peer);
  assert.ok('authenticated' in step && step.authenticated);
  assert.deepEqual(peer.principal, userPrincipal('alice'));
  assert.equal(auth.sessionLifetimeMs(), 1000n);
  assert.equal(auth.expired(), false);
  now += 1001;
  assert.equal(auth.expired(), true);
});

test('a wrong password fails, and a re-authentication may not change the principal', () => {
  const wrong = new SaslServerAuthenticator(listener, noEntities, () => 0);
  wrong.handshake('PLAIN', 0, false);
  assert.equal(wrong.state, 'raw-token');
  const failed = wrong.token(plain('alice', 'nope'), { principal: ANONYMOUS });
  assert.ok('failure' in failed);

  const auth = new SaslServerAuthenticator(listener, noEntities, () => 0);
  const peer: { principal: KafkaPrincipal } = { principal: ANONYMOUS };
  auth.handshake('PLAIN', 1, false);
  auth.token(plain('alice', 'alice-secret'), peer);
  assert.deepEqual(auth.handshake('PLAIN', 1, true), { errorCode: 0 });
  assert.equal(auth.state, 'reauthenticate');
  const refused = auth.token(plain('bob', 'bob-secret'), peer);
  assert.ok('failure' in refused && refused.failure.startsWith('Cannot change principals during re-authentication'));
  assert.deepEqual(peer.principal, userPrincipal('alice'));
});
