/**
 * SASL on a connection, as Kafka's SaslServerAuthenticator: in front of the request router for
 * connections on SASL listeners. This file speaks the frames; the exchange itself (mechanisms,
 * state, the session's end) is security/sasl/authenticator.ts.
 *
 * Before authentication only ApiVersions, SaslHandshake and SaslAuthenticate are served; anything
 * else closes the connection (Kafka's IllegalSaslStateException), and frames are bounded by
 * sasl.server.max.receive.size (set on the connection at accept, see saslFrameLimitsFor), so none
 * of the broker's heavy paths can be reached unauthenticated.
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
  SaslAuthenticateRequestCodec,
  SaslAuthenticateResponseCodec,
  SaslHandshakeRequestCodec,
  SaslHandshakeResponseCodec,
  type SaslAuthenticateResponse,
  type SaslHandshakeResponse,
} from '../../protocol/messages/index.js';
import { ErrorCode } from '../../protocol/errors.js';
import type { ClientEntityConfigStore } from '../../metadata/client-entity-configs.js';
import { peekHeader, readRequestHeader, writeResponseHeader } from '../request-header.js';
import { CloseConnectionError, type ConnectionContext, type FrameLimits, type NetworkLogger, type RequestDispatcher, type ResponseFrame } from './types.js';
import { usesSasl } from '../../security/security-protocol.js';
import { principalToString } from '../../security/principal.js';
import type { SaslServerConfig } from '../../security/sasl/config.js';
import { SaslServerAuthenticator } from '../../security/sasl/authenticator.js';
import type { SaslAuthenticationStats } from '../../security/sasl/authentication-stats.js';
import type { DelegationTokenCredentials } from '../../security/delegation-tokens/token-manager.js';

const SASL_HANDSHAKE = 17;
const API_VERSIONS = 18;
const SASL_AUTHENTICATE = 36;

export interface SaslGateOptions {
  config: SaslServerConfig;
  clientEntities: ClientEntityConfigStore;
  /** SCRAM with tokenauth=true authenticates against these (absent: tokens disabled). */
  delegationTokens?: DelegationTokenCredentials;
  logger: NetworkLogger;
  now?: () => number;
  /** Counted per listener for the metrics (socket-server-metrics' successful/failed-authentication-total). */
  stats?: SaslAuthenticationStats;
}

/** Frame limits a new connection on `listener` starts with: small until authenticated. */
export function saslFrameLimitsFor(config: SaslServerConfig) {
  return (listener: { name: string; securityProtocol: string }): FrameLimits | undefined =>
    config.listeners.has(listener.name) ? { maxBytes: config.maxReceiveSize, minBytes: 0, maxName: 'sasl.server.max.receive.size' } : undefined;
}

const API_NAMES: Record<number, string> = {
  0: 'PRODUCE',
  1: 'FETCH',
  2: 'LIST_OFFSETS',
  3: 'METADATA',
  19: 'CREATE_TOPICS',
  36: 'SASL_AUTHENTICATE',
  17: 'SASL_HANDSHAKE',
  18: 'API_VERSIONS',
};
const apiName = (key: number): string => API_NAMES[key] ?? `api key ${key}`;

/** Wraps the router: connections on SASL listeners go through their authenticator first. */
export function withSaslAuthentication(route: RequestDispatcher, opts: SaslGateOptions): RequestDispatcher {
  const sessions = new WeakMap<ConnectionContext, SaslServerAuthenticator>();
  const now = opts.now ?? Date.now;
  const log = opts.logger;
  const { config } = opts;

  function fail(session: SaslServerAuthenticator, ctx: ConnectionContext, reason: string, response: ResponseFrame | null): Promise<ResponseFrame | null> {
    session.fail();
    if (opts.stats) opts.stats.listener(ctx.listenerName).failed++;
    ctx.closeAfterResponses = true;
    log.info(
      { connectionId: ctx.connectionId, listener: ctx.listenerName, mechanism: session.mechanism },
      `Failed authentication with /${ctx.clientHost} (channelId=${ctx.connectionId}) (${reason})`,
    );
    return new Promise((resolve) => setTimeout(() => resolve(response), config.failedAuthDelayMs));
  }

  /** The exchange is over: frames are no longer bounded by sasl.server.max.receive.size. */
  function authenticated(session: SaslServerAuthenticator, ctx: ConnectionContext): void {
    delete ctx.frameLimits;
    if (opts.stats) opts.stats.listener(ctx.listenerName).successful++;
    log.debug({ connectionId: ctx.connectionId, principal: principalToString(ctx.principal), mechanism: session.mechanism }, 'authenticated');
  }

  function handshake(session: SaslServerAuthenticator, frame: Buffer, ctx: ConnectionContext, reauth: boolean): ResponseFrame | Promise<ResponseFrame | null> {
    const { apiVersion, correlationId } = peekHeader(frame);
    if (apiVersion < 0 || apiVersion > 1 || (reauth && apiVersion < 1)) {
      throw new CloseConnectionError(`unsupported SaslHandshake version ${apiVersion}`);
    }
    const r = new Reader(frame);
    readRequestHeader(r, SASL_HANDSHAKE, false);
    const req = SaslHandshakeRequestCodec.read(r, apiVersion);
    const respond = (body: SaslHandshakeResponse): Buffer => {
      const w = new Writer(64);
      writeResponseHeader(w, SASL_HANDSHAKE, false, correlationId);
      SaslHandshakeResponseCodec.write(w, body, apiVersion);
      return w.result();
    };
    const outcome = session.handshake(req.mechanism, apiVersion, reauth);
    const response = respond({ errorCode: outcome.errorCode, mechanisms: session.listener.mechanisms });
    return 'failure' in outcome ? fail(session, ctx, outcome.failure, response) : response;
  }

  function authenticate(session: SaslServerAuthenticator, frame: Buffer, ctx: ConnectionContext): ResponseFrame | Promise<ResponseFrame | null> {
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
    const step = session.token(req.authBytes, ctx);
    if ('failure' in step) {
      return fail(
        session,
        ctx,
        step.failure,
        respond({ errorCode: ErrorCode.SASL_AUTHENTICATION_FAILED, errorMessage: step.clientMessage, authBytes: Buffer.alloc(0), sessionLifetimeMs: 0n }),
      );
    }
    if (step.authenticated) authenticated(session, ctx);
    return respond({ errorCode: 0, errorMessage: null, authBytes: step.challenge, sessionLifetimeMs: session.sessionLifetimeMs() });
  }

  function rawToken(session: SaslServerAuthenticator, frame: Buffer, ctx: ConnectionContext): ResponseFrame | Promise<ResponseFrame | null> {
    const step = session.token(frame, ctx);
    // v0 has no error channel: the client sees the connection close.
    if ('failure' in step) return fail(session, ctx, step.failure, null);
    if (step.authenticated) authenticated(session, ctx);
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
      session = new SaslServerAuthenticator(listener, opts.clientEntities, now, opts.delegationTokens);
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
          if (session.expired()) {
            throw new CloseConnectionError(
              `authenticated session of ${principalToString(ctx.principal)} expired (connections.max.reauth.ms) and was not re-authenticated`,
            );
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
