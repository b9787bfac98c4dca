/**
 * SaslHandshake and SaslAuthenticate outside an authentication: on a PLAINTEXT listener, or on an
 * authenticated connection whose session does not expire. The SASL exchange itself is served by
 * src/server/network/sasl-gate.ts before requests reach the router; here, as Kafka's KafkaApis,
 * the answer is ILLEGAL_SASL_STATE.
 */
import {
  SaslAuthenticateRequestCodec,
  SaslAuthenticateResponseCodec,
  SaslHandshakeRequestCodec,
  SaslHandshakeResponseCodec,
} from '../../protocol/messages/index.js';
import { ErrorCode } from '../../protocol/errors.js';
import { defineHandler } from './types.js';

export const saslHandshakeHandler = defineHandler({
  apiKey: 17,
  request: SaslHandshakeRequestCodec,
  response: SaslHandshakeResponseCodec,
  minVersion: 0,
  maxVersion: 1,
  // Part of authenticating (src/security/sasl runs the exchange before any request is routed).
  authorize: { none: 'SASL authentication comes before authorization' },
  handle() {
    return { errorCode: ErrorCode.ILLEGAL_SASL_STATE, mechanisms: [] };
  },
});

export const saslAuthenticateHandler = defineHandler({
  apiKey: 36,
  request: SaslAuthenticateRequestCodec,
  response: SaslAuthenticateResponseCodec,
  minVersion: 0,
  maxVersion: 2,
  authorize: { none: 'SASL authentication comes before authorization' },
  handle() {
    return {
      errorCode: ErrorCode.ILLEGAL_SASL_STATE,
      errorMessage: 'SaslAuthenticate request received after successful authentication',
      authBytes: Buffer.alloc(0),
      sessionLifetimeMs: 0n,
    };
  },
});
