/**
 * The broker's delegation tokens, as Kafka's DelegationTokenManager: create, renew, expire and
 * list tokens over a DelegationTokenStore (ZooKeeper or the embedded file), with every token and
 * its derived SCRAM credentials cached in memory for authentication; other brokers' changes
 * arrive through the store's notifications, and expired tokens are removed every
 * `delegation.token.expiry.check.interval.ms`. Without a secret key tokens are disabled and every
 * operation answers DELEGATION_TOKEN_AUTH_DISABLED. Changes are made one at a time.
 */
import type { Logger } from 'pino';
import { ErrorCode } from '../../protocol/errors.js';
import { Mutex } from '../../common/mutex.js';
import { messageOf } from '../../common/errors.js';
import type { DelegationTokenStore, StoredToken } from '../../metadata/delegation-token-store.js';
import { principalToString, type KafkaPrincipal } from '../principal.js';
import { makeCredential, SCRAM_MECHANISMS, SCRAM_MIN_ITERATIONS, type ScramCredential, type ScramMechanism } from '../sasl/scram.js';
import {
  allowedToRenew,
  fromStored,
  isExpired,
  newTokenId,
  tokenHmac,
  toStored,
  type DelegationToken,
  type DelegationTokenConfig,
  type TokenInformation,
} from './token-info.js';

/** What SCRAM authentication with a token needs: the token's credential and whose it is. */
export interface TokenCredential {
  credential: ScramCredential;
  owner: KafkaPrincipal;
  expiryTimestamp: number;
}

/** The source SCRAM authentication reads tokens from (the SASL authenticator's view of the manager). */
export interface DelegationTokenCredentials {
  tokenCredential(tokenId: string, mechanism: ScramMechanism): TokenCredential | undefined;
}

export type CreateOutcome = { errorCode: 0; token: DelegationToken } | { errorCode: number };
export interface ExpiryOutcome {
  errorCode: number;
  /** The token's expiry time now; -1 on an error (Kafka's ErrorTimestamp). */
  expiryTimestamp: number;
}

interface CachedToken {
  token: DelegationToken;
  credentials: Record<ScramMechanism, ScramCredential>;
}

export class DelegationTokenManager implements DelegationTokenCredentials {
  private readonly cache = new Map<string, CachedToken>();
  /** base64 HMAC -> token id: renew and expire name a token by its HMAC. */
  private readonly byHmac = new Map<string, string>();
  private readonly mutex = new Mutex();
  private timer: NodeJS.Timeout | undefined;

  private constructor(
    private readonly config: DelegationTokenConfig,
    private readonly store: DelegationTokenStore | undefined,
    private readonly logger: Logger | undefined,
    private readonly now: () => number,
  ) {}

  /** Loads the kept tokens and follows changes; `store` is only opened when tokens are enabled. */
  static async open(
    config: DelegationTokenConfig,
    store: (() => DelegationTokenStore | Promise<DelegationTokenStore>) | undefined,
    logger?: Logger,
    now: () => number = Date.now,
  ): Promise<DelegationTokenManager> {
    const enabled = config.secretKey !== null && config.secretKey !== '' && store !== undefined;
    const m = new DelegationTokenManager(config, enabled ? await store() : undefined, logger, now);
    if (m.store) {
      const kept = await m.store.loadAll();
      for (const t of kept) await m.cacheToken(fromStored(t));
      logger?.info({ tokens: kept.length }, 'delegation tokens loaded');
      await m.store.follow((tokenId, token) => m.mutex.run(() => m.onStoreChange(tokenId, token)));
      m.timer = setInterval(() => void m.expireTokens(), config.expiryCheckIntervalMs);
      m.timer.unref();
    }
    return m;
  }

  get enabled(): boolean {
    return this.store !== undefined;
  }

  close(): void {
    clearInterval(this.timer);
    this.store?.close();
  }

  /** CreateDelegationToken once the request is allowed: a new token, kept and cached before the answer. */
  create(owner: KafkaPrincipal, requester: KafkaPrincipal, renewers: KafkaPrincipal[], maxLifetimeMs: number): Promise<CreateOutcome> {
    const store = this.store;
    if (store === undefined) return Promise.resolve({ errorCode: ErrorCode.DELEGATION_TOKEN_AUTH_DISABLED });
    return this.mutex.run(async () => {
      const issue = this.now();
      const lifetime = maxLifetimeMs <= 0 ? this.config.maxLifetimeMs : Math.min(maxLifetimeMs, this.config.maxLifetimeMs);
      const maxTimestamp = issue + lifetime;
      const info: TokenInformation = {
        tokenId: newTokenId(),
        owner,
        tokenRequester: requester,
        renewers,
        issueTimestamp: issue,
        maxTimestamp,
        expiryTimestamp: Math.min(maxTimestamp, issue + this.config.expiryTimeMs),
      };
      await store.put(toStored(info));
      const cached = await this.cacheToken(info);
      this.logger?.info({ tokenId: info.tokenId, owner: principalToString(owner) }, 'created a delegation token');
      return { errorCode: 0, token: cached.token };
    });
  }

  /** RenewDelegationToken: the expiry moves to now + the period (-1: expiry.time.ms), never past the maximum. */
  renew(principal: KafkaPrincipal, hmac: Buffer, renewPeriodMs: number): Promise<ExpiryOutcome> {
    return this.changeExpiry(principal, hmac, (info, now) => {
      if (isExpired(info, now)) return { errorCode: ErrorCode.DELEGATION_TOKEN_EXPIRED, expiryTimestamp: -1 };
      const period = renewPeriodMs < 0 ? this.config.expiryTimeMs : renewPeriodMs;
      return { errorCode: 0, expiryTimestamp: Math.min(info.maxTimestamp, now + period) };
    });
  }

  /** ExpireDelegationToken: a negative period removes the token now, else its expiry becomes now + the period. */
  expire(principal: KafkaPrincipal, hmac: Buffer, expiryPeriodMs: number): Promise<ExpiryOutcome> {
    return this.changeExpiry(principal, hmac, (info, now) => {
      if (expiryPeriodMs < 0) return { errorCode: 0, expiryTimestamp: now, remove: true };
      if (isExpired(info, now)) return { errorCode: ErrorCode.DELEGATION_TOKEN_EXPIRED, expiryTimestamp: -1 };
      return { errorCode: 0, expiryTimestamp: Math.min(info.maxTimestamp, now + expiryPeriodMs) };
    });
  }

  /** Every cached token (expired ones too, until the periodic check removes them). */
  tokens(): DelegationToken[] {
    return [...this.cache.values()].map((c) => c.token);
  }

  tokenCredential(tokenId: string, mechanism: ScramMechanism): TokenCredential | undefined {
    const c = this.cache.get(tokenId);
    if (c === undefined) return undefined;
    return { credential: c.credentials[mechanism], owner: c.token.info.owner, expiryTimestamp: c.token.info.expiryTimestamp };
  }

  /** Removes every token past its expiry or maximum time (Kafka's expireTokens). */
  expireTokens(): Promise<void> {
    const store = this.store;
    if (store === undefined) return Promise.resolve();
    return this.mutex.run(async () => {
      const now = this.now();
      for (const { token } of [...this.cache.values()]) {
        if (!isExpired(token.info, now)) continue;
        try {
          await store.remove(token.info.tokenId);
          this.uncache(token.info.tokenId);
          this.logger?.info({ tokenId: token.info.tokenId, owner: principalToString(token.info.owner) }, 'delegation token expired');
        } catch (err) {
          this.logger?.error({ tokenId: token.info.tokenId, err: messageOf(err) }, 'could not remove an expired delegation token');
        }
      }
    });
  }

  private changeExpiry(
    principal: KafkaPrincipal,
    hmac: Buffer,
    decide: (info: TokenInformation, now: number) => ExpiryOutcome & { remove?: boolean },
  ): Promise<ExpiryOutcome> {
    const store = this.store;
    if (store === undefined) return Promise.resolve({ errorCode: ErrorCode.DELEGATION_TOKEN_AUTH_DISABLED, expiryTimestamp: -1 });
    return this.mutex.run(async () => {
      const tokenId = this.byHmac.get(hmac.toString('base64'));
      const cached = tokenId === undefined ? undefined : this.cache.get(tokenId);
      if (cached === undefined) return { errorCode: ErrorCode.DELEGATION_TOKEN_NOT_FOUND, expiryTimestamp: -1 };
      const info = cached.token.info;
      if (!allowedToRenew(info, principal)) return { errorCode: ErrorCode.DELEGATION_TOKEN_OWNER_MISMATCH, expiryTimestamp: -1 };
      const outcome = decide(info, this.now());
      if (outcome.errorCode !== 0) return outcome;
      if (outcome.remove) {
        await store.remove(info.tokenId);
        this.uncache(info.tokenId);
        this.logger?.info({ tokenId: info.tokenId }, 'delegation token expired on request');
      } else {
        const updated = { ...info, expiryTimestamp: outcome.expiryTimestamp };
        await store.put(toStored(updated));
        await this.cacheToken(updated);
      }
      return { errorCode: 0, expiryTimestamp: outcome.expiryTimestamp };
    });
  }

  /** A change announced by a broker (this one included): re-cache the token as kept, or drop it. */
  private async onStoreChange(tokenId: string, token: StoredToken | undefined): Promise<void> {
    if (token === undefined) this.uncache(tokenId);
    else await this.cacheToken(fromStored(token));
  }

  private async cacheToken(info: TokenInformation): Promise<CachedToken> {
    const hmac = tokenHmac(info.tokenId, this.config.secretKey!);
    const existing = this.cache.get(info.tokenId);
    // The HMAC, and so the credentials, depend on the id alone: only the information changes.
    const credentials = existing?.credentials ?? (await deriveCredentials(hmac.toString('base64')));
    const cached = { token: { info, hmac }, credentials };
    this.cache.set(info.tokenId, cached);
    this.byHmac.set(hmac.toString('base64'), info.tokenId);
    return cached;
  }

  private uncache(tokenId: string): void {
    const c = this.cache.get(tokenId);
    if (c === undefined) return;
    this.cache.delete(tokenId);
    this.byHmac.delete(c.token.hmac.toString('base64'));
  }
}

/** Kafka's prepareScramCredentials: one credential per SCRAM mechanism, the base64 HMAC as password, minimum iterations. */
async function deriveCredentials(password: string): Promise<Record<ScramMechanism, ScramCredential>> {
  const out = {} as Record<ScramMechanism, ScramCredential>;
  for (const m of SCRAM_MECHANISMS) out[m] = await makeCredential(m, password, SCRAM_MIN_ITERATIONS);
  return out;
}
