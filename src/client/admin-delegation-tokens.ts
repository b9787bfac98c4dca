/**
 * Admin calls for delegation tokens (KIP-48, KIP-373), as Kafka's Admin createDelegationToken,
 * renewDelegationToken, expireDelegationToken and describeDelegationToken: the broker's error
 * becomes a KafkaError in Kafka's words.
 */
import { Api } from './apis.js';
import type { Cluster } from './cluster.js';
import { KafkaError, errorName } from './errors.js';
import type { KafkaPrincipal } from '../security/principal.js';

export interface DelegationTokenInfo {
  tokenId: string;
  hmac: Buffer;
  owner: KafkaPrincipal;
  tokenRequester: KafkaPrincipal;
  renewers: KafkaPrincipal[];
  issueTimestamp: number;
  expiryTimestamp: number;
  maxTimestamp: number;
}

/** The messages of Kafka's exceptions for the token error codes. */
const TOKEN_ERRORS: Readonly<Record<number, string>> = {
  61: 'Delegation Token feature is not enabled.',
  62: 'Delegation Token is not found on server.',
  63: 'Specified Principal is not valid Owner/Renewer.',
  64: 'Delegation Token requests are not allowed on PLAINTEXT/1-way SSL channels and on delegation token authenticated channels.',
  65: 'Delegation Token authorization failed.',
  66: 'Delegation Token is expired.',
  67: 'Request principal type is not supported.',
};

function check(errorCode: number): void {
  if (errorCode !== 0) throw new KafkaError(errorCode, `${errorName(errorCode)}: ${TOKEN_ERRORS[errorCode] ?? 'the broker refused the request'}`);
}

const principal = (type: string, name: string): KafkaPrincipal => ({ principalType: type, name });

export async function createDelegationToken(
  cluster: Cluster,
  opts: { renewers?: readonly KafkaPrincipal[]; owner?: KafkaPrincipal; maxLifetimeMs?: number } = {},
): Promise<DelegationTokenInfo> {
  const conn = await cluster.anyConnection();
  const r = await conn.send(Api.CreateDelegationToken, {
    ownerPrincipalType: opts.owner?.principalType ?? null,
    ownerPrincipalName: opts.owner?.name ?? null,
    renewers: (opts.renewers ?? []).map((p) => ({ principalType: p.principalType, principalName: p.name })),
    maxLifetimeMs: BigInt(opts.maxLifetimeMs ?? -1),
  });
  check(r.errorCode);
  return {
    tokenId: r.tokenId,
    hmac: r.hmac,
    owner: principal(r.principalType, r.principalName),
    // Before v3 the answer has no requester: the owner asked for it.
    tokenRequester:
      r.tokenRequesterPrincipalName === ''
        ? principal(r.principalType, r.principalName)
        : principal(r.tokenRequesterPrincipalType, r.tokenRequesterPrincipalName),
    renewers: [...(opts.renewers ?? [])],
    issueTimestamp: Number(r.issueTimestampMs),
    expiryTimestamp: Number(r.expiryTimestampMs),
    maxTimestamp: Number(r.maxTimestampMs),
  };
}

/** Resolves with the token's new expiry time. */
export async function renewDelegationToken(cluster: Cluster, hmac: Buffer, renewPeriodMs = -1): Promise<number> {
  const conn = await cluster.anyConnection();
  const r = await conn.send(Api.RenewDelegationToken, { hmac, renewPeriodMs: BigInt(renewPeriodMs) });
  check(r.errorCode);
  return Number(r.expiryTimestampMs);
}

/** Resolves with the token's new expiry time (now when expired at once, period -1). */
export async function expireDelegationToken(cluster: Cluster, hmac: Buffer, expiryTimePeriodMs = -1): Promise<number> {
  const conn = await cluster.anyConnection();
  const r = await conn.send(Api.ExpireDelegationToken, { hmac, expiryTimePeriodMs: BigInt(expiryTimePeriodMs) });
  check(r.errorCode);
  return Number(r.expiryTimestampMs);
}

/** `owners` undefined: every token the caller may see; [] lists none (as Kafka). */
export async function describeDelegationTokens(cluster: Cluster, owners?: readonly KafkaPrincipal[]): Promise<DelegationTokenInfo[]> {
  const conn = await cluster.anyConnection();
  const r = await conn.send(Api.DescribeDelegationToken, {
    owners: owners === undefined ? null : owners.map((p) => ({ principalType: p.principalType, principalName: p.name })),
  });
  check(r.errorCode);
  return r.tokens.map((t) => ({
    tokenId: t.tokenId,
    hmac: t.hmac,
    owner: principal(t.principalType, t.principalName),
    tokenRequester:
      t.tokenRequesterPrincipalName === ''
        ? principal(t.principalType, t.principalName)
        : principal(t.tokenRequesterPrincipalType, t.tokenRequesterPrincipalName),
    renewers: t.renewers.map((x) => principal(x.principalType, x.principalName)),
    issueTimestamp: Number(t.issueTimestamp),
    expiryTimestamp: Number(t.expiryTimestamp),
    maxTimestamp: Number(t.maxTimestamp),
  }));
}
