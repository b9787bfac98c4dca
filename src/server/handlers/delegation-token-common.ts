/**
 * What the delegation token handlers (38-41) share, as KafkaApis: which connections may manage
 * tokens at all, and principals between the wire's type/name pairs and KafkaPrincipal.
 */
import { ANONYMOUS, samePrincipal, type KafkaPrincipal } from '../../security/principal.js';
import type { DelegationTokenManager } from '../../security/delegation-tokens/token-manager.js';
import { ErrorCode } from '../../protocol/errors.js';
import type { RequestContext } from './types.js';

/**
 * KafkaApis.allowTokenRequests: not over PLAINTEXT, not over SSL without a client certificate
 * (1-way TLS, User:ANONYMOUS), and not on a connection that authenticated with a token.
 */
export function allowTokenRequests(ctx: RequestContext): boolean {
  const { principal, securityProtocol } = ctx.connection;
  if (principal.tokenAuthenticated === true || securityProtocol === 'PLAINTEXT') return false;
  return !(securityProtocol === 'SSL' && samePrincipal(principal, ANONYMOUS));
}

export function wirePrincipal(p: KafkaPrincipal): { principalType: string; principalName: string } {
  return { principalType: p.principalType, principalName: p.name };
}

export function fromWire(p: { principalType: string; principalName: string }): KafkaPrincipal {
  return { principalType: p.principalType, name: p.principalName };
}

/** As KafkaPrincipal.equals: a token-authenticated principal is the same principal. */
export function plainPrincipal(p: KafkaPrincipal): KafkaPrincipal {
  return { principalType: p.principalType, name: p.name };
}

/**
 * Renew (39) and Expire (40): the same refusals and the same answer around the manager's call
 * (`change`, made as the connection's plain principal).
 */
export async function changeTokenExpiry(
  ctx: RequestContext,
  change: (manager: DelegationTokenManager, principal: KafkaPrincipal) => Promise<{ errorCode: number; expiryTimestamp: number }>,
): Promise<{ errorCode: number; expiryTimestampMs: bigint; throttleTimeMs: number }> {
  if (!allowTokenRequests(ctx)) return { errorCode: ErrorCode.DELEGATION_TOKEN_REQUEST_NOT_ALLOWED, expiryTimestampMs: -1n, throttleTimeMs: 0 };
  const manager = ctx.services.delegationTokens;
  const outcome = manager
    ? await change(manager, plainPrincipal(ctx.connection.principal))
    : { errorCode: ErrorCode.DELEGATION_TOKEN_AUTH_DISABLED, expiryTimestamp: -1 };
  return { errorCode: outcome.errorCode, expiryTimestampMs: BigInt(outcome.expiryTimestamp), throttleTimeMs: 0 };
}
