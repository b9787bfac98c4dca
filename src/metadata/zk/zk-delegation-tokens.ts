/**
 * Delegation tokens in ZooKeeper, where Kafka's ZooKeeper mode keeps them
 * (DelegationTokenManagerZk):
 *
 * - `/delegation_token/tokens/<tokenId>`: `{"version":3,"owner":"User%3Aalice",
 *   "tokenRequester":"User%3Aalice","renewers":["User%3Abob"],"issueTimestamp":...,
 *   "maxTimestamp":...,"expiryTimestamp":...,"tokenId":"..."}` (principals sanitized as Kafka's
 *   Sanitizer does; versions 1 and 2 have no tokenRequester: the owner is the requester). The
 *   HMAC and the SCRAM credentials are never stored: each broker derives them from the secret.
 * - every change is announced by `/delegation_token/token_changes/token_change_<seq>` holding the
 *   token id; every broker follows it (SequentialChangeFollower) and re-reads that token, or
 *   drops it when its znode is gone.
 */
import type { Logger } from 'pino';
import { desanitizeEntityName, sanitizeEntityName } from '../client-entity-configs.js';
import type { DelegationTokenStore, StoredToken } from '../delegation-token-store.js';
import { isZkError, type ZkSession } from './zk-session.js';
import { SequentialChangeFollower, znodeChangeSource } from './zk-change-follower.js';

export const TOKENS_PATH = '/delegation_token/tokens';
export const TOKEN_CHANGES_PATH = '/delegation_token/token_changes';
const CHANGE_PREFIX = 'token_change_';
const ZNODE_VERSION = 3;

type Session = Pick<ZkSession, 'getIfExists' | 'children' | 'childrenIfExists' | 'create' | 'setOrCreate' | 'delete' | 'ensurePath' | 'on' | 'off'>;

/** The token znode's body, as Kafka writes it. */
export function tokenZnodeBody(t: StoredToken): string {
  return JSON.stringify({
    version: ZNODE_VERSION,
    owner: sanitizeEntityName(t.owner),
    tokenRequester: sanitizeEntityName(t.tokenRequester),
    renewers: t.renewers.map(sanitizeEntityName),
    issueTimestamp: t.issueTimestamp,
    maxTimestamp: t.maxTimestamp,
    expiryTimestamp: t.expiryTimestamp,
    tokenId: t.tokenId,
  });
}

/** Reads a token znode (versions 1 to 3); throws on what is not one. */
export function parseTokenZnode(data: Buffer | string): StoredToken {
  const j = JSON.parse(data.toString()) as Record<string, unknown>;
  const version = j.version;
  if (typeof version !== 'number' || version < 1 || version > ZNODE_VERSION) throw new Error(`malformed token znode: version ${String(version)}`);
  const str = (k: string): string => {
    if (typeof j[k] !== 'string') throw new Error(`malformed token znode: no "${k}"`);
    return j[k] as string;
  };
  const num = (k: string): number => {
    if (typeof j[k] !== 'number') throw new Error(`malformed token znode: no "${k}"`);
    return j[k] as number;
  };
  const owner = desanitizeEntityName(str('owner'));
  const renewers = j.renewers;
  if (!Array.isArray(renewers) || !renewers.every((r) => typeof r === 'string')) throw new Error('malformed token znode: no "renewers"');
  return {
    tokenId: str('tokenId'),
    owner,
    tokenRequester: version >= 3 ? desanitizeEntityName(str('tokenRequester')) : owner,
    renewers: (renewers as string[]).map(desanitizeEntityName),
    issueTimestamp: num('issueTimestamp'),
    maxTimestamp: num('maxTimestamp'),
    expiryTimestamp: num('expiryTimestamp'),
  };
}

export class ZkDelegationTokens implements DelegationTokenStore {
  private follower: SequentialChangeFollower<string> | undefined;

  constructor(
    private readonly session: Session,
    private readonly logger?: Logger,
  ) {}

  async loadAll(): Promise<StoredToken[]> {
    // As Kafka's createDelegationTokenPaths, once tokens are enabled.
    await this.session.ensurePath(TOKENS_PATH);
    await this.session.ensurePath(TOKEN_CHANGES_PATH);
    const out: StoredToken[] = [];
    for (const tokenId of await this.session.childrenIfExists(TOKENS_PATH)) {
      try {
        const t = await this.load(tokenId);
        if (t) out.push(t);
      } catch (err) {
        this.logger?.error({ tokenId, err: String(err) }, 'skipping an unreadable delegation token znode');
      }
    }
    return out;
  }

  async put(token: StoredToken): Promise<void> {
    await this.session.setOrCreate(`${TOKENS_PATH}/${token.tokenId}`, Buffer.from(tokenZnodeBody(token)));
    await this.announce(token.tokenId);
  }

  async remove(tokenId: string): Promise<void> {
    try {
      await this.session.delete(`${TOKENS_PATH}/${tokenId}`);
    } catch (err) {
      if (!isZkError(err, 'NO_NODE')) throw err;
    }
    await this.announce(tokenId);
  }

  async follow(listener: (tokenId: string, token: StoredToken | undefined) => void | Promise<void>): Promise<void> {
    this.follower = new SequentialChangeFollower<string>({
      source: znodeChangeSource(this.session, TOKEN_CHANGES_PATH, CHANGE_PREFIX),
      session: this.session,
      what: TOKEN_CHANGES_PATH,
      ...(this.logger ? { logger: this.logger } : {}),
      onChange: async (tokenId) => listener(tokenId, await this.load(tokenId)),
    });
    await this.follower.start();
  }

  close(): void {
    this.follower?.close();
  }

  private async load(tokenId: string): Promise<StoredToken | undefined> {
    const node = await this.session.getIfExists(`${TOKENS_PATH}/${tokenId}`);
    return node ? parseTokenZnode(node.data) : undefined;
  }

  private async announce(tokenId: string): Promise<void> {
    await this.session.create(`${TOKEN_CHANGES_PATH}/${CHANGE_PREFIX}`, tokenId, 'persistent_sequential');
  }
}
