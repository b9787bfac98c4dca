/**
 * CreateDelegationToken (38), KIP-48 and KIP-373 (v3: a token on behalf of another owner), as
 * KafkaApis.handleCreateTokenRequest: refused on connections that may not manage tokens
 * (DELEGATION_TOKEN_REQUEST_NOT_ALLOWED), for another owner without CREATE_TOKENS on that User
 * (DELEGATION_TOKEN_AUTHORIZATION_FAILED), with a renewer that is not a User
 * (INVALID_PRINCIPAL_TYPE); else the token manager creates it (DELEGATION_TOKEN_AUTH_DISABLED
 * without a secret key).
 */
import { CreateDelegationTokenRequestCodec, CreateDelegationTokenResponseCodec, type CreateDelegationTokenResponse } from '../../protocol/messages/index.js';
import type { Input } from '../../protocol/primitives/index.js';
import { ErrorCode } from '../../protocol/errors.js';
import { principalToString, samePrincipal, USER_TYPE, type KafkaPrincipal } from '../../security/principal.js';
import { defineHandler } from './types.js';
import { AclOperation, ResourceType, resourceChecks } from './authz.js';
import { allowTokenRequests, fromWire, plainPrincipal, wirePrincipal } from './delegation-token-common.js';

const checks = resourceChecks({ createTokensFor: { resource: ResourceType.USER, operation: AclOperation.CREATE_TOKENS } });

function refusal(errorCode: number, owner: KafkaPrincipal, requester: KafkaPrincipal): Input<CreateDelegationTokenResponse> {
  const o = wirePrincipal(owner);
  const r = wirePrincipal(requester);
  return {
    errorCode,
    principalType: o.principalType,
    principalName: o.principalName,
    tokenRequesterPrincipalType: r.principalType,
    tokenRequesterPrincipalName: r.principalName,
    issueTimestampMs: -1n,
    expiryTimestampMs: -1n,
    maxTimestampMs: -1n,
    tokenId: '',
    hmac: Buffer.alloc(0),
    throttleTimeMs: 0,
  };
}

export const createDelegationTokenHandler = defineHandler({
  apiKey: 38,
  request: CreateDelegationTokenRequestCodec,
  response: CreateDelegationTokenResponseCodec,
  minVersion: 0,
  maxVersion: 3,
  authorize: {
    ownWay: 'as Kafka: only authenticated connections that did not use a token may create tokens; creating for another owner needs CREATE_TOKENS on that User',
    resources: checks,
  },
  async handle(req, ctx) {
    const requester = plainPrincipal(ctx.connection.principal);
    const owner =
      req.ownerPrincipalName === null || req.ownerPrincipalName === ''
        ? requester
        : fromWire({ principalType: req.ownerPrincipalType ?? USER_TYPE, principalName: req.ownerPrincipalName });
    if (!allowTokenRequests(ctx)) return refusal(ErrorCode.DELEGATION_TOKEN_REQUEST_NOT_ALLOWED, owner, requester);
    if (!samePrincipal(owner, requester) && !checks.createTokensFor.allows(ctx, principalToString(owner))) {
      return refusal(ErrorCode.DELEGATION_TOKEN_AUTHORIZATION_FAILED, owner, requester);
    }
    const renewers = req.renewers.map(fromWire);
    if (renewers.some((p) => p.principalType !== USER_TYPE)) return refusal(ErrorCode.INVALID_PRINCIPAL_TYPE, owner, requester);
    const created = await ctx.services.delegationTokens?.create(owner, requester, renewers, Number(req.maxLifetimeMs));
    if (created === undefined || !('token' in created)) return refusal(created?.errorCode ?? ErrorCode.DELEGATION_TOKEN_AUTH_DISABLED, owner, requester);
    const { info, hmac } = created.token;
    return {
      ...refusal(0, owner, requester),
      issueTimestampMs: BigInt(info.issueTimestamp),
      expiryTimestampMs: BigInt(info.expiryTimestamp),
      maxTimestampMs: BigInt(info.maxTimestamp),
      tokenId: info.tokenId,
      hmac,
    };
  },
});
