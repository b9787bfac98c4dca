/**
 * The broker side of each SASL mechanism Fjord serves: a small state machine fed the client's
 * tokens, answering the server's tokens until it knows who the client is.
 *
 * Two kinds of failure, as Kafka makes them: SaslAuthenticationError carries a message meant for
 * the client (PLAIN's "Authentication failed: Invalid username or password"); SaslMechanismError's
 * detail stays in the broker's log and the client gets Kafka's generic "Authentication failed
 * during authentication due to invalid credentials with SASL mechanism X" (so that SCRAM does not
 * tell who exists).
 */
import {
  authMessage,
  constantTimeEqual,
  hash,
  hmac,
  parseClientFinal,
  parseClientFirst,
  parseCredential,
  randomNonce,
  serverFirstMessage,
  SCRAM_MIN_ITERATIONS,
  xor,
  type ClientFirst,
  type ScramCredential,
  type ScramMechanism,
} from './scram.js';
import type { KafkaPrincipal } from '../principal.js';

export type SaslMechanismName = 'PLAIN' | ScramMechanism;
export const SUPPORTED_MECHANISMS: readonly SaslMechanismName[] = ['PLAIN', 'SCRAM-SHA-256', 'SCRAM-SHA-512'];
export const isSupportedMechanism = (m: string): m is SaslMechanismName => (SUPPORTED_MECHANISMS as readonly string[]).includes(m);

export class SaslAuthenticationError extends Error {
  override readonly name = 'SaslAuthenticationError';
}
export class SaslMechanismError extends Error {
  override readonly name = 'SaslMechanismError';
}

export interface SaslServerStep {
  /** Bytes for the client (may be empty). */
  challenge: Buffer;
  /** Set once the exchange succeeded: the authenticated user name. */
  authorizedId?: string;
  /** Delegation token authentication: the token's owner, who the connection becomes. */
  tokenOwner?: KafkaPrincipal;
  /** When the credential stops being valid (a token's expiry), for the session's end. */
  credentialExpiresAt?: number;
}

export interface SaslMechanismServer {
  readonly mechanism: SaslMechanismName;
  evaluate(token: Buffer): SaslServerStep;
}

/** Where the mechanisms find credentials. */
export interface SaslCredentialSource {
  /** PLAIN: the password of `user_<name>` in the listener's PlainLoginModule options. */
  plainPassword(username: string): string | undefined;
  /** SCRAM: the stored credential text of the user for the mechanism. */
  scramCredential(username: string, mechanism: ScramMechanism): string | undefined;
  /** SCRAM with tokenauth=true: the delegation token's credential and owner; undefined when unknown (or tokens are disabled). */
  tokenCredential?(tokenId: string, mechanism: ScramMechanism): { credential: ScramCredential; owner: KafkaPrincipal; expiryTimestamp: number } | undefined;
}

/** RFC 4616: [authzid] NUL authcid NUL passwd, checked against the JAAS user_<name> entries. */
export class PlainServer implements SaslMechanismServer {
  readonly mechanism = 'PLAIN';
  private done = false;

  constructor(private readonly creds: SaslCredentialSource) {}

  evaluate(token: Buffer): SaslServerStep {
    if (this.done) throw new SaslAuthenticationError('Authentication failed: PLAIN exchange already complete');
    this.done = true;
    const parts = token.toString('utf8').split('\u0000');
    if (parts.length !== 3) throw new SaslAuthenticationError(`Invalid SASL/PLAIN response: expected 3 tokens, got ${parts.length}`);
    const [authzid, username, password] = parts as [string, string, string];
    if (username === '') throw new SaslAuthenticationError('Authentication failed: username not specified');
    if (password === '') throw new SaslAuthenticationError('Authentication failed: password not specified');
    const expected = this.creds.plainPassword(username);
    if (expected === undefined || !constantTimeEqual(Buffer.from(expected, 'utf8'), Buffer.from(password, 'utf8'))) {
      throw new SaslAuthenticationError('Authentication failed: Invalid username or password');
    }
    if (authzid !== '' && authzid !== username) {
      throw new SaslAuthenticationError('Authentication failed: Client requested an authorization id that is different from username');
    }
    return { challenge: Buffer.alloc(0), authorizedId: username };
  }
}

/** RFC 5802 server: client-first → server-first → client-final → server-final. */
export class ScramServer implements SaslMechanismServer {
  private state: 'first' | 'final' | 'done' = 'first';
  private clientFirst: ClientFirst | undefined;
  private serverFirst = '';
  private nonce = '';
  private credential: ScramCredential | undefined;
  private token: { owner: KafkaPrincipal; expiryTimestamp: number } | undefined;

  constructor(
    readonly mechanism: ScramMechanism,
    private readonly creds: SaslCredentialSource,
    private readonly now: () => number = Date.now,
  ) {}

  evaluate(token: Buffer): SaslServerStep {
    if (this.state === 'first') return this.onClientFirst(token.toString('utf8'));
    if (this.state === 'final') return this.onClientFinal(token.toString('utf8'));
    throw new SaslMechanismError('SCRAM exchange already complete');
  }

  private onClientFirst(text: string): SaslServerStep {
    const first = parseClientFirst(text);
    if (first === undefined) throw new SaslMechanismError('Invalid SCRAM client first message format');
    // Kafka's one extension: tokenauth=true (ScramExtensions, Boolean.parseBoolean) authenticates
    // with a delegation token: the user name is the token id, the password its HMAC.
    const credential = first.extensions.get('tokenauth')?.toLowerCase() === 'true' ? this.tokenCredential(first.username) : this.userCredential(first.username);
    if (first.authzid !== '' && first.authzid !== first.username) {
      throw new SaslAuthenticationError('Authentication failed: Client requested an authorization id that is different from username');
    }
    if (credential.iterations < SCRAM_MIN_ITERATIONS) {
      throw new SaslMechanismError(`Iterations ${credential.iterations} is less than the minimum ${SCRAM_MIN_ITERATIONS} for ${this.mechanism}`);
    }
    this.clientFirst = first;
    this.credential = credential;
    this.nonce = first.nonce + randomNonce();
    this.serverFirst = serverFirstMessage(this.nonce, credential.salt, credential.iterations);
    this.state = 'final';
    return { challenge: Buffer.from(this.serverFirst, 'utf8') };
  }

  private userCredential(username: string): ScramCredential {
    const stored = this.creds.scramCredential(username, this.mechanism);
    const credential = stored === undefined ? undefined : parseCredential(stored);
    if (credential === undefined)
      throw new SaslMechanismError(`Authentication failed: Invalid user credentials (no ${this.mechanism} credential for ${username})`);
    return credential;
  }

  private tokenCredential(tokenId: string): ScramCredential {
    const found = this.creds.tokenCredential?.(tokenId, this.mechanism);
    if (found === undefined) throw new SaslMechanismError(`Token Authentication failed: Invalid tokenId : ${tokenId}`);
    if (found.expiryTimestamp < this.now()) throw new SaslMechanismError(`Token Authentication failed: token ${tokenId} expired`);
    this.token = { owner: found.owner, expiryTimestamp: found.expiryTimestamp };
    return found.credential;
  }

  private onClientFinal(text: string): SaslServerStep {
    this.state = 'done';
    const first = this.clientFirst!;
    const credential = this.credential!;
    const final = parseClientFinal(text);
    if (final === undefined) throw new SaslMechanismError('Invalid SCRAM client final message format');
    // As Kafka: the final nonce must end with the server's (librdkafka sends its own nonce in front of it).
    if (!final.nonce.endsWith(this.nonce)) throw new SaslMechanismError('Invalid client nonce in the final client message.');
    if (Buffer.from(final.channelBinding, 'base64').toString('utf8') !== first.gs2Header) {
      throw new SaslMechanismError('Invalid channel binding in the final client message');
    }
    const auth = authMessage(first.bare, this.serverFirst, final.withoutProof);
    const signature = hmac(this.mechanism, credential.storedKey, auth);
    if (final.proof.length !== signature.length) throw new SaslMechanismError('Invalid client credentials');
    const clientKey = xor(final.proof, signature);
    if (!constantTimeEqual(hash(this.mechanism, clientKey), credential.storedKey)) throw new SaslMechanismError('Invalid client credentials');
    const serverSignature = hmac(this.mechanism, credential.serverKey, auth);
    const challenge = Buffer.from(`v=${serverSignature.toString('base64')}`, 'utf8');
    if (this.token !== undefined)
      return { challenge, authorizedId: first.username, tokenOwner: this.token.owner, credentialExpiresAt: this.token.expiryTimestamp };
    return { challenge, authorizedId: first.username };
  }
}

export function createMechanismServer(mechanism: SaslMechanismName, creds: SaslCredentialSource, now: () => number = Date.now): SaslMechanismServer {
  return mechanism === 'PLAIN' ? new PlainServer(creds) : new ScramServer(mechanism, creds, now);
}
