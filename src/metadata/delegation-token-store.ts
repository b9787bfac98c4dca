/**
 * Where delegation tokens (KIP-48) are kept: the token's information without its HMAC (every
 * broker derives the HMAC, and the SCRAM credentials, from the token id and the shared secret).
 * ZooKeeper in cluster mode (`/delegation_token/tokens/<tokenId>`, zk/zk-delegation-tokens.ts),
 * a JSON file beside the embedded broker's metadata (embedded/embedded-delegation-tokens.ts).
 * Principals are held as Kafka prints them ("User:alice").
 */

export interface StoredToken {
  tokenId: string;
  owner: string;
  tokenRequester: string;
  renewers: string[];
  issueTimestamp: number;
  maxTimestamp: number;
  expiryTimestamp: number;
}

export interface DelegationTokenStore {
  /** Every token kept. */
  loadAll(): Promise<StoredToken[]>;
  /** Creates or replaces a token; resolves once durable (and announced to every broker). */
  put(token: StoredToken): Promise<void>;
  /** Removes a token (no error when it is gone already). */
  remove(tokenId: string): Promise<void>;
  /**
   * Follows changes made by any broker (cluster mode): `listener` gets the token as now kept, or
   * undefined when it was removed. Embedded mode has no other writer and never calls it.
   */
  follow(listener: (tokenId: string, token: StoredToken | undefined) => void | Promise<void>): Promise<void>;
  close(): void;
}

/** A stored token's JSON, checked field by field; undefined when it is not one. */
export function storedTokenFrom(value: unknown): StoredToken | undefined {
  if (value === null || typeof value !== 'object') return undefined;
  const v = value as Record<string, unknown>;
  const num = (x: unknown): number | undefined => (typeof x === 'number' && Number.isFinite(x) ? x : undefined);
  const { tokenId, owner, tokenRequester, renewers } = v;
  const issueTimestamp = num(v.issueTimestamp);
  const maxTimestamp = num(v.maxTimestamp);
  const expiryTimestamp = num(v.expiryTimestamp);
  if (typeof tokenId !== 'string' || typeof owner !== 'string' || typeof tokenRequester !== 'string') return undefined;
  if (!Array.isArray(renewers) || !renewers.every((r) => typeof r === 'string')) return undefined;
  if (issueTimestamp === undefined || maxTimestamp === undefined || expiryTimestamp === undefined) return undefined;
  return { tokenId, owner, tokenRequester, renewers: renewers as string[], issueTimestamp, maxTimestamp, expiryTimestamp };
}
