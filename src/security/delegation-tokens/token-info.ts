/**
 * Delegation tokens (KIP-48, KIP-373) as Kafka defines them, without I/O: a token is a random id,
 * its HMAC-SHA512 under the cluster's secret (`delegation.token.secret.key`), and who owns,
 * requested and may renew it with its issue, expiry and maximum times. The HMAC, in base64, is
 * the password a client authenticates with over SCRAM (username = token id, extension
 * `tokenauth=true`); the broker keeps SCRAM credentials derived from it at the mechanism's
 * minimum iterations, as Kafka does.
 */
import crypto from 'node:crypto';
import { parsePrincipal, principalToString, samePrincipal, type KafkaPrincipal } from '../principal.js';
import type { StoredToken } from '../../metadata/delegation-token-store.js';

/** The broker's token settings (Kafka's delegation.token.* keys). */
export interface DelegationTokenConfig {
  /** delegation.token.secret.key (or the older delegation.token.master.key); null = tokens disabled. */
  secretKey: string | null;
  /** delegation.token.max.lifetime.ms: no token lives longer (Kafka: 7 days). */
  maxLifetimeMs: number;
  /** delegation.token.expiry.time.ms: a token's life until renewed (Kafka: 1 day). */
  expiryTimeMs: number;
  /** delegation.token.expiry.check.interval.ms: how often expired tokens are removed (Kafka: 1 hour). */
  expiryCheckIntervalMs: number;
}

export interface TokenInformation {
  tokenId: string;
  owner: KafkaPrincipal;
  tokenRequester: KafkaPrincipal;
  renewers: KafkaPrincipal[];
  issueTimestamp: number;
  maxTimestamp: number;
  expiryTimestamp: number;
}

/** A token with its HMAC. */
export interface DelegationToken {
  info: TokenInformation;
  hmac: Buffer;
}

/** Kafka's DelegationTokenManager.createHmac: HmacSHA512 of the id's UTF-8 bytes, keyed with the secret's UTF-8 bytes. */
export function tokenHmac(tokenId: string, secretKey: string): Buffer {
  return crypto.createHmac('sha512', Buffer.from(secretKey, 'utf8')).update(tokenId, 'utf8').digest();
}

/** Kafka's CoreUtils.generateUuidAsBase64: a random UUID's 16 bytes, base64url without padding. */
export function newTokenId(): string {
  return Buffer.from(crypto.randomUUID().replace(/-/g, ''), 'hex').toString('base64url');
}

/** TokenInformation.ownerOrRenewer: the owner, the requester and the renewers manage a token. */
export function ownerOrRenewer(info: TokenInformation, p: KafkaPrincipal): boolean {
  return samePrincipal(info.owner, p) || samePrincipal(info.tokenRequester, p) || info.renewers.some((r) => samePrincipal(r, p));
}

/** The owner or a renewer may renew or expire a token (DelegationTokenManager.allowedToRenew). */
export function allowedToRenew(info: TokenInformation, p: KafkaPrincipal): boolean {
  return samePrincipal(info.owner, p) || info.renewers.some((r) => samePrincipal(r, p));
}

export function isExpired(info: TokenInformation, now: number): boolean {
  return info.maxTimestamp < now || info.expiryTimestamp < now;
}

/**
 * DescribeDelegationToken's filter (DelegationTokenManager.filterToken): tokens of the owners asked
 * for (null: any), then those the requester owns, requested or renews, or may describe through
 * ACLs (DESCRIBE on the token, or DESCRIBE_TOKENS on its owner's User resource).
 */
export function describable(
  info: TokenInformation,
  requester: KafkaPrincipal,
  owners: readonly KafkaPrincipal[] | null,
  mayDescribeToken: (tokenId: string) => boolean,
  mayDescribeOwnersTokens: (owner: KafkaPrincipal) => boolean,
): boolean {
  if (owners !== null && !owners.some((o) => ownerOrRenewer(info, o))) return false;
  return ownerOrRenewer(info, requester) || mayDescribeToken(info.tokenId) || mayDescribeOwnersTokens(info.owner);
}

export function toStored(info: TokenInformation): StoredToken {
  return {
    tokenId: info.tokenId,
    owner: principalToString(info.owner),
    tokenRequester: principalToString(info.tokenRequester),
    renewers: info.renewers.map(principalToString),
    issueTimestamp: info.issueTimestamp,
    maxTimestamp: info.maxTimestamp,
    expiryTimestamp: info.expiryTimestamp,
  };
}

export function fromStored(t: StoredToken): TokenInformation {
  return {
    tokenId: t.tokenId,
    owner: parsePrincipal(t.owner),
    tokenRequester: parsePrincipal(t.tokenRequester),
    renewers: t.renewers.map(parsePrincipal),
    issueTimestamp: t.issueTimestamp,
    maxTimestamp: t.maxTimestamp,
    expiryTimestamp: t.expiryTimestamp,
  };
}
