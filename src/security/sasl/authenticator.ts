/**
 * One connection's SASL exchange, as Kafka's SaslServerAuthenticator without the frames: the
 * state (handshake, tokens, authenticated, KIP-368 re-authentication, failed), the mechanism
 * chosen by SaslHandshake, each token run through that mechanism's server, and the session's
 * end (connections.max.reauth.ms). server/network/sasl-gate.ts reads and writes the Kafka frames
 * around it and decides what a connection may send in each state.
 */
import { ErrorCode } from '../../protocol/errors.js';
import { entityPath, type ClientEntityConfigStore } from '../../metadata/client-entity-configs.js';
import { principalToString, samePrincipal, userPrincipal, type KafkaPrincipal } from '../principal.js';
import type { SaslListenerConfig } from './config.js';
import type { DelegationTokenCredentials } from '../delegation-tokens/token-manager.js';
import {
  createMechanismServer,
  isSupportedMechanism,
  SaslAuthenticationError,
  SaslMechanismError,
  type SaslCredentialSource,
  type SaslMechanismName,
  type SaslMechanismServer,
  type SaslServerStep,
} from './mechanisms.js';

export type SaslState =
  | 'handshake' // waiting for ApiVersions or SaslHandshake
  | 'authenticate' // handshake v1 done: SaslAuthenticate requests carry the tokens
  | 'raw-token' // handshake v0 done: raw token frames
  | 'authenticated'
  | 'reauthenticate' // KIP-368: SaslAuthenticate of a re-authentication
  | 'failed';

/** The connection whose principal an exchange sets (server/network's ConnectionContext). */
export interface SaslPeer {
  principal: KafkaPrincipal;
}

/** A SaslHandshake's answer: errorCode 0, or an error and the reason logged for it. */
export type HandshakeOutcome = { errorCode: 0 } | { errorCode: number; failure: string };

/** A token's answer: the challenge (authenticated: the exchange is over), or why it failed. */
export type TokenOutcome = { challenge: Buffer; authenticated: boolean } | { failure: string; clientMessage: string };

export class SaslServerAuthenticator {
  state: SaslState = 'handshake';
  mechanism: SaslMechanismName | undefined;
  /** now() after which the session is over; undefined = never. */
  expiresAt: number | undefined;
  private server: SaslMechanismServer | undefined;
  private readonly credentials: SaslCredentialSource;

  constructor(
    readonly listener: SaslListenerConfig,
    clientEntities: ClientEntityConfigStore,
    private readonly now: () => number,
    tokens?: DelegationTokenCredentials,
  ) {
    this.credentials = {
      plainPassword: (username) => listener.plainUsers.get(username),
      scramCredential: (username, mechanism) => clientEntities.get(entityPath({ user: username }))[mechanism],
      ...(tokens ? { tokenCredential: (tokenId, mechanism) => tokens.tokenCredential(tokenId, mechanism) } : {}),
    };
  }

  /** SaslHandshake at `apiVersion` (0: raw tokens follow; 1: SaslAuthenticate requests). */
  handshake(mechanism: string, apiVersion: number, reauth: boolean): HandshakeOutcome {
    const enabled = this.listener.mechanisms;
    if (!isSupportedMechanism(mechanism) || !enabled.includes(mechanism)) {
      return { errorCode: ErrorCode.UNSUPPORTED_SASL_MECHANISM, failure: `Unsupported SASL mechanism ${mechanism}` };
    }
    if (reauth && mechanism !== this.mechanism) {
      return {
        errorCode: ErrorCode.ILLEGAL_SASL_STATE,
        failure: `SASL mechanism must be the same when re-authenticating: ${this.mechanism} then ${mechanism}`,
      };
    }
    this.mechanism = mechanism;
    this.server = createMechanismServer(mechanism, this.credentials, this.now);
    this.state = reauth ? 'reauthenticate' : apiVersion === 0 ? 'raw-token' : 'authenticate';
    return { errorCode: 0 };
  }

  /** Runs one token through the mechanism; the last one makes `peer` that user. */
  token(bytes: Buffer, peer: SaslPeer): TokenOutcome {
    const step = this.evaluate(bytes);
    if ('failure' in step) return step;
    if (step.authorizedId === undefined) return { challenge: step.challenge, authenticated: false };
    const refused = this.complete(peer, step);
    if (refused !== undefined) return { failure: refused, clientMessage: refused };
    return { challenge: step.challenge, authenticated: true };
  }

  /** The exchange failed: nothing more is read. */
  fail(): void {
    this.state = 'failed';
  }

  /** SaslAuthenticate's session_lifetime_ms: what is left of an authenticated session, 0 = no end. */
  sessionLifetimeMs(): bigint {
    return this.state === 'authenticated' && this.expiresAt !== undefined ? BigInt(this.expiresAt - this.now()) : 0n;
  }

  /** Whether an authenticated session has ended (connections.max.reauth.ms). */
  expired(): boolean {
    return this.expiresAt !== undefined && this.now() > this.expiresAt;
  }

  private evaluate(token: Buffer): SaslServerStep | { failure: string; clientMessage: string } {
    try {
      return this.server!.evaluate(token);
    } catch (err) {
      if (err instanceof SaslAuthenticationError) return { failure: err.message, clientMessage: err.message };
      const detail = err instanceof SaslMechanismError ? err.message : `unexpected error: ${String(err)}`;
      const during = this.state === 'reauthenticate' ? 're-authentication' : 'authentication';
      return { failure: detail, clientMessage: `Authentication failed during ${during} due to invalid credentials with SASL mechanism ${this.mechanism}` };
    }
  }

  /** The exchange is over: the connection is now that user's (re-authentication may not change it). */
  private complete(peer: SaslPeer, step: SaslServerStep): string | undefined {
    // A token's connection is its owner's, marked so that it may not manage tokens (Kafka's tokenAuthenticated).
    const principal: KafkaPrincipal = step.tokenOwner ? { ...step.tokenOwner, tokenAuthenticated: true } : userPrincipal(step.authorizedId!);
    if (this.state === 'reauthenticate' && !samePrincipal(principal, peer.principal)) {
      return `Cannot change principals during re-authentication from ${principalToString(peer.principal)}: ${principalToString(principal)}`;
    }
    peer.principal = principal;
    const lifetime = this.listener.reauthMs.get(this.mechanism!) ?? 0;
    // As Kafka: with re-authentication on, a session also ends with its credential (a token's expiry).
    this.expiresAt = lifetime > 0 ? Math.min(this.now() + lifetime, step.credentialExpiresAt ?? Number.POSITIVE_INFINITY) : undefined;
    this.state = 'authenticated';
    this.server = undefined;
    return undefined;
  }
}
