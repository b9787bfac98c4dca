/**
 * DescribeDelegationToken (41), as KafkaApis.handleDescribeTokensRequest: refused on connections
 * that may not manage tokens (DELEGATION_TOKEN_REQUEST_NOT_ALLOWED), then
 * DELEGATION_TOKEN_AUTH_DISABLED without a secret key; an empty owner list lists nothing, null
 * every owner. The listing is filtered quietly: a principal sees the tokens it owns, requested
 * or renews, and others' only with DESCRIBE on the DelegationToken or DESCRIBE_TOKENS on the
 * owner's User resource (KIP-373).
 */
import { DescribeDelegationTokenRequestCodec, DescribeDelegationTokenResponseCodec } from '../../protocol/messages/index.js';
import { ErrorCode } from '../../protocol/errors.js';
import { principalToString } from '../../security/principal.js';
import { describable } from '../../security/delegation-tokens/token-info.js';
import { defineHandler } from './types.js';
import { AclOperation, ResourceType, resourceChecks } from './authz.js';
import { allowTokenRequests, fromWire, plainPrincipal, wirePrincipal } from './delegation-token-common.js';

const checks = resourceChecks({
  describeToken: { resource: ResourceType.DELEGATION_TOKEN, operation: AclOperation.DESCRIBE },
  describeOwnersTokens: { resource: ResourceType.USER, operation: AclOperation.DESCRIBE_TOKENS },
});

export const describeDelegationTokenHandler = defineHandler({
  apiKey: 41,
  request: DescribeDelegationTokenRequestCodec,
  response: DescribeDelegationTokenResponseCodec,
  minVersion: 0,
  maxVersion: 3,
  authorize: {
    ownWay:
      "as Kafka: an authenticated connection that did not use a token; others' tokens are left out without DESCRIBE on the token or DESCRIBE_TOKENS on the owner",
    resources: checks,
  },
  handle(req, ctx) {
    if (!allowTokenRequests(ctx)) return { errorCode: ErrorCode.DELEGATION_TOKEN_REQUEST_NOT_ALLOWED, tokens: [], throttleTimeMs: 0 };
    const manager = ctx.services.delegationTokens;
    if (manager === undefined || !manager.enabled) return { errorCode: ErrorCode.DELEGATION_TOKEN_AUTH_DISABLED, tokens: [], throttleTimeMs: 0 };
    if (req.owners !== null && req.owners.length === 0) return { errorCode: 0, tokens: [], throttleTimeMs: 0 };
    const requester = plainPrincipal(ctx.connection.principal);
    const owners = req.owners === null ? null : req.owners.map(fromWire);
    const tokens = manager
      .tokens()
      .filter((t) =>
        describable(
          t.info,
          requester,
          owners,
          (tokenId) => checks.describeToken.allows(ctx, tokenId),
          (owner) => checks.describeOwnersTokens.allows(ctx, principalToString(owner)),
        ),
      )
      .map(({ info, hmac }) => {
        const owner = wirePrincipal(info.owner);
        const requesterOnWire = wirePrincipal(info.tokenRequester);
        return {
          principalType: owner.principalType,
          principalName: owner.principalName,
          tokenRequesterPrincipalType: requesterOnWire.principalType,
          tokenRequesterPrincipalName: requesterOnWire.principalName,
          issueTimestamp: BigInt(info.issueTimestamp),
          expiryTimestamp: BigInt(info.expiryTimestamp),
          maxTimestamp: BigInt(info.maxTimestamp),
          tokenId: info.tokenId,
          hmac,
          renewers: info.renewers.map(wirePrincipal),
        };
      });
    return { errorCode: 0, tokens, throttleTimeMs: 0 };
  },
});
