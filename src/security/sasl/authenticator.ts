/**
 * SASL on a connection, as Kafka's SaslServerAuthenticator: in front of the request router for
 * connections on SASL listeners.
 *
 * Before authentication only ApiVersions, SaslHandshake and SaslAuthenticate are served; anything
 * else closes the connection (Kafka's IllegalSaslStateException), and frames are bounded by
 * sasl.server.max.receive.size (set on the connection at accept, see frameLimitsFor), so none of
 * the broker's heavy paths can be reached unauthenticated.
 *
 * SaslHandshake v0: the tokens that follow are raw size-prefixed frames without Kafka headers.
 * SaslHandshake v1: they come in SaslAuthenticate requests (v0-v2; v1+ answers the session
 * lifetime). A failure answers SASL_AUTHENTICATION_FAILED after
 * connection.failed.authentication.delay.ms, is logged with the peer's address, and closes the
 * connection. On success the connection's principal becomes User:<name>.
 *
 * KIP-368: with connections.max.reauth.ms > 0 a session expires; a request arriving after that
 * closes the connection, unless the client re-authenticated (SaslHandshake v1 and
 * SaslAuthenticate on the live connection, same mechanism, same principal). As in Kafka, a
 * re-authentication may start after the session ended.
 */
import { DecodeError, Reader, Writer } from '../../protocol/primitives/index.js';
import {
  SaslAuthenticateRequestCodec, SaslAuthenticateResponseCodec, SaslHandshakeRequestCodec, SaslHandshakeResponseCodec,
  type SaslAuthenticateResponse, type SaslHandshakeResponse,
} from '../../protocol/messages/index.js';
import { ErrorCode } from '../../protocol/errors.js';
import { entityPath, type ClientEntityConfigStore } from '../../metadata/client-entity-configs.js';
import { peekHeader, readRequestHeader, writeResponseHeader } from '../../server/request-header.js';
import { CloseConnectionError, type ConnectionContext, type FrameLimits, type NetworkLogger, type RequestDispatcher, type ResponseFrame } from '../../server/network/types.js';
import { usesSasl } from '../security-protocol.js';
import { principalToString, samePrincipal, userPrincipal } from '../principal.js';
import type { SaslListenerConfig, SaslServerConfig } from './config.js';
import {
  createMechanismServer, isSupportedMechanism, SaslAuthenticationError, SaslMechanismError,
  type SaslCredentialSource, type SaslMechanismName, type SaslMechanismServer,
} from './mechanisms.js';

const SASL_HANDSHAKE = 17;
const API_VERSIONS = 18;
const SASL_AUTHENTICATE = 36;

export interface SaslGateOptions {
  config: SaslServerConfig;
  clientEntities: ClientEntityConfigStore;
  logger: NetworkLogger;
  now?: () => number;
}

type State =
  | 'handshake' // waiting for ApiVersions or SaslHandshake
  | 'authenticate' // handshake v1 done: SaslAuthenticate requests carry the tokens
  | 'raw-token' // handshake v0 done: raw token frames
  | 'authenticated'
  | 'reauthenticate' // KIP-368: SaslAuthenticate of a re-authentication
  | 'failed';

class SaslSession {
  state: State = 'handshake';
  server: SaslMechanismServer | undefined;
  mechanism: SaslMechanismName | undefined;
  /** Date.now() after which the session is over; undefined = never. */
  expiresAt: number | undefined;

  constructor(readonly listener: SaslListenerConfig) {}
}

/** Frame limits a new connection on `listener` starts with: small until authenticated. */
export function saslFrameLimitsFor(config: SaslServerConfig) {
  return (listener: { name: string; securityProtocol: string }): FrameLimits | undefined =>
    config.listeners.has(listener.name) ? { maxBytes: config.maxReceiveSize, minBytes: 0, maxName: 'sasl.server.max.receive.size' } : undefined;
}

const API_NAMES: Record<number, string> = { 0: 'PRODUCE', 1: 'FETCH', 2: 'LIST_OFFSETS', 3: 'METADATA', 19: 'CREATE_TOPICS', 36: 'SASL_AUTHENTICATE', 17: 'SASL_HANDSHAKE', 18: 'API_VERSIONS' };
const apiName = (key: number): string => API_NAMES[key] ?? `api key ${key}`;

/** Wraps the router: connections on SASL listeners go through their authenticator first. */
export function withSaslAuthentication(route: RequestDispatcher, opts: SaslGateOptions): RequestDispatcher {
  const sessions = new WeakMap<ConnectionContext, SaslSession>();
  const now = opts.now ?? Date.now;
  const log = opts.logger;
  const { config } = opts;

  const credentials = (listener: SaslListenerConfig): SaslCredentialSource => ({
    plainPassword: (username) => listener.plainUsers.get(username),
    scramCredential: (username, mechanism) => opts.clientEntities.get(entityPath({ user: username }))[mechanism],
  });

  function fail(session: SaslSession, ctx: ConnectionContext, reason: string, response: ResponseFrame | null): Promise<ResponseFrame | null> {
    session.state = 'failed';
    ctx.closeAfterResponses = true;
    log.info({ connectionId: ctx.connectionId, listener: ctx.listenerName, mechanism: session.mechanism }, `Failed authentication with /${ctx.clientHost} (channelId=${ctx.connectionId}) (${reason})`);
    return new Promise((resolve) => setTimeout(() => resolve(response), config.failedAuthDelayMs));
  }

  function handshake(session: SaslSession, frame: Buffer, ctx: ConnectionContext, reauth: boolean): ResponseFrame | Promise<ResponseFrame | null> {
    const { apiVersion, correlationId } = peekHeader(frame);
    if (apiVersion < 0 || apiVersion > 1 || (reauth && apiVersion < 1)) {
      throw new CloseConnectionError(`unsupported SaslHandshake version ${apiVersion}`);
    }
    const r = new Reader(frame);
    readRequestHeader(r, SASL_HANDSHAKE, false);
    const req = SaslHandshakeRequestCodec.read(r, apiVersion);
    const mechanism = req.mechanism;
    const enabled = session.listener.mechanisms;
    const respond = (body: SaslHandshakeResponse): Buffer => {
      const w = new Writer(64);
      writeResponseHeader(w, SASL_HANDSHAKE, false, correlationId);
      SaslHandshakeResponseCodec.write(w, body, apiVersion);
      return w.result();
    };
    if (!isSupportedMechanism(mechanism) || !enabled.includes(mechanism)) {
      const response = respond({ errorCode: ErrorCode.UNSUPPORTED_SASL_MECHANISM, mechanisms: enabled });
      return fail(session, ctx, `Unsupported SASL mechanism ${mechanism}`, response);
    }
    if (reauth && mechanism !== session.mechanism) {
      const response = respond({ errorCode: ErrorCode.ILLEGAL_SASL_STATE, mechanisms: enabled });
      return fail(session, ctx, `SASL mechanism must be the same when re-authenticating: ${session.mechanism} then ${mechanism}`, response);
    }
    session.mechanism = mechanism;
    session.server = createMechanismServer(mechanism, credentials(session.listener));
    session.state = reauth ? 'reauthenticate' : apiVersion === 0 ? 'raw-token' : 'authenticate';
    return respond({ errorCode: 0, mechanisms: enabled });
  }

  /** Runs one token through the mechanism; returns its answer, or the failure's reason and client message. */
  function evaluate(session: SaslSession, token: Buffer): { challenge: Buffer; authorizedId?: string } | { failure: string; clientMessage: string } {
    try {
      return session.server!.evaluate(token);
    } catch (err) {
      if (err instanceof SaslAuthenticationError) return { failure: err.message, clientMessage: err.message };
      const detail = err instanceof SaslMechanismError ? err.message : `unexpected error: ${String(err)}`;
      const during = session.state === 'reauthenticate' ? 're-authentication' : 'authentication';
      return { failure: detail, clientMessage: `Authentication failed during ${during} due to invalid credentials with SASL mechanism ${session.mechanism}` };
    }
  }

  /** The exchange is over: the connection is now that user's (re-authentication may not change it). */
  function complete(session: SaslSession, ctx: ConnectionContext, authorizedId: string): string | undefined {
    const principal = userPrincipal(authorizedId);
    if (session.state === 'reauthenticate' && !samePrincipal(principal, ctx.principal)) {
      return `Cannot change principals during re-authentication from ${principalToString(ctx.principal)}: ${principalToString(principal)}`;
    }
    ctx.principal = principal;
    delete ctx.frameLimits;
    const lifetime = session.listener.reauthMs.get(session.mechanism!) ?? 0;
    session.expiresAt = lifetime > 0 ? now() + lifetime : undefined;
    session.state = 'authenticated';
    session.server = undefined;
    log.debug({ connectionId: ctx.connectionId, principal: principalToString(principal), mechanism: session.mechanism }, 'authenticated');
    return undefined;
  }

  function authenticate(session: SaslSession, frame: Buffer, ctx: ConnectionContext): ResponseFrame | Promise<ResponseFrame | null> {
    const { apiVersion, correlationId } = peekHeader(frame);
    if (apiVersion < 0 || apiVersion > 2) throw new CloseConnectionError(`unsupported SaslAuthenticate version ${apiVersion}`);
    const flexible = apiVersion >= SaslAuthenticateRequestCodec.flexibleFrom;
    const r = new Reader(frame);
    readRequestHeader(r, SASL_AUTHENTICATE, flexible);
    const req = SaslAuthenticateRequestCodec.read(r, apiVersion);
    const respond = (body: SaslAuthenticateResponse): Buffer => {
      const w = new Writer(128);
      writeResponseHeader(w, SASL_AUTHENTICATE, flexible, correlationId);
      SaslAuthenticateResponseCodec.write(w, body, apiVersion);
      return w.result();
    };
    const failure = (reason: string, clientMessage: string): Promise<ResponseFrame | null> =>
      fail(session, ctx, reason, respond({ errorCode: ErrorCode.SASL_AUTHENTICATION_FAILED, errorMessage: clientMessage, authBytes: Buffer.alloc(0), sessionLifetimeMs: 0n }));
    const step = evaluate(session, req.authBytes);
    if ('failure' in step) return failure(step.failure, step.clientMessage);
    if (step.authorizedId !== undefined) {
      const refused = complete(session, ctx, step.authorizedId);
      if (refused !== undefined) return failure(refused, refused);
    }
    const lifetime = session.state === 'authenticated' && session.expiresAt !== undefined ? BigInt(session.expiresAt - now()) : 0n;
    return respond({ errorCode: 0, errorMessage: null, authBytes: step.challenge, sessionLifetimeMs: lifetime });
  }

  function rawToken(session: SaslSession, frame: Buffer, ctx: ConnectionContext): ResponseFrame | Promise<ResponseFrame | null> {
    const step = evaluate(session, frame);
    // v0 has no error channel: the client sees the connection close.
    if ('failure' in step) return fail(session, ctx, step.failure, null);
    if (step.authorizedId !== undefined) complete(session, ctx, step.authorizedId);
    return Buffer.from(step.challenge);
  }

  function unexpected(apiKey: number, during: string): never {
    throw new CloseConnectionError(`Unexpected Kafka request of type ${apiName(apiKey)} during SASL ${during}.`);
  }

  return function saslGate(frame: Buffer, ctx: ConnectionContext): Promise<ResponseFrame | null> | ResponseFrame | null {
    if (!usesSasl(ctx.securityProtocol)) return route(frame, ctx);
    let session = sessions.get(ctx);
    if (session === undefined) {
      const listener = config.listeners.get(ctx.listenerName);
      if (listener === undefined) throw new CloseConnectionError(`listener ${ctx.listenerName} has no SASL configuration`);
      session = new SaslSession(listener);
      sessions.set(ctx, session);
    }
    try {
      switch (session.state) {
        case 'failed':
          return null; // closing: queued answers are written, nothing more is read
        case 'raw-token':
          return rawToken(session, frame, ctx);
        case 'handshake': {
          if (frame.length < 8) throw new CloseConnectionError(`frame of ${frame.length} bytes is too small for a request header`);
          const { apiKey } = peekHeader(frame);
          if (apiKey === API_VERSIONS) return route(frame, ctx);
          if (apiKey === SASL_HANDSHAKE) return handshake(session, frame, ctx, false);
          return unexpected(apiKey, 'handshake');
        }
        case 'authenticate':
        case 'reauthenticate': {
          if (frame.length < 8) throw new CloseConnectionError(`frame of ${frame.length} bytes is too small for a request header`);
          const { apiKey } = peekHeader(frame);
          if (apiKey === SASL_AUTHENTICATE) return authenticate(session, frame, ctx);
          return unexpected(apiKey, 'authentication');
        }
        case 'authenticated': {
          const { apiKey } = peekHeader(frame);
          // A re-authentication may begin after the session ended, as Kafka's SocketServer checks
          // for it before the expiry: its clients wait for their requests in flight (a long poll)
          // first. Anything else after the end closes the connection.
          if (apiKey === SASL_HANDSHAKE && session.expiresAt !== undefined) return handshake(session, frame, ctx, true);
          if (session.expiresAt !== undefined && now() > session.expiresAt) {
            throw new CloseConnectionError(`authenticated session of ${principalToString(ctx.principal)} expired (connections.max.reauth.ms) and was not re-authenticated`);
          }
          return route(frame, ctx);
        }
      }
    } catch (err) {
      if (err instanceof DecodeError || err instanceof RangeError) throw new CloseConnectionError(`malformed SASL request: ${err.message}`);
      throw err;
    }
  };
}
