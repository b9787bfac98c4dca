/**
 * RenewDelegationToken (39): moves a token's expiry to now + the period (-1: delegation.token.expiry.time.ms), never past its maximum time.
 * As KafkaApis: refused on connections that may not manage tokens
 * (DELEGATION_TOKEN_REQUEST_NOT_ALLOWED); only the token's owner or a renewer may (no ACL:
 * DELEGATION_TOKEN_OWNER_MISMATCH otherwise); the token is named by its HMAC
 * (DELEGATION_TOKEN_NOT_FOUND, DELEGATION_TOKEN_EXPIRED, DELEGATION_TOKEN_AUTH_DISABLED).
 */
import { RenewDelegationTokenRequestCodec, RenewDelegationTokenResponseCodec } from '../../protocol/messages/index.js';
import { defineHandler } from './types.js';
import { changeTokenExpiry } from './delegation-token-common.js';

export const renewDelegationTokenHandler = defineHandler({
  apiKey: 39,
  request: RenewDelegationTokenRequestCodec,
  response: RenewDelegationTokenResponseCodec,
  minVersion: 0,
  maxVersion: 2,
  authorize: { ownWay: 'as Kafka: no ACL; an authenticated connection that did not use a token, and the token owner or a renewer' },
  handle: (req, ctx) => changeTokenExpiry(ctx, (manager, principal) => manager.renew(principal, req.hmac, Number(req.renewPeriodMs))),
});
