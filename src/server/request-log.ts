/**
 * The request log, Kafka's `kafka.request.logger`: at debug, one "Completed request" line per
 * request with Kafka's fields (API, version, correlation id, client id, principal, listener,
 * security protocol, client address, and the timings the router has). Its level is its own:
 * FJORD_LOG_LEVEL_REQUEST, else the broker's (FJORD_LOG_LEVEL). When debug is off the router
 * pays one level check per request and nothing else (no clock read, no object).
 */
import type { Logger } from 'pino';
import { namedLoggerLevel } from '../common/state-change-log.js';
import { principalToString } from '../security/principal.js';
import type { RequestContext } from './handlers/types.js';

export const REQUEST_LOGGER = 'kafka.request.logger';
export const REQUEST_LEVEL_ENV = 'FJORD_LOG_LEVEL_REQUEST';

export function createRequestLogger(parent: Logger, env: NodeJS.ProcessEnv = process.env): Logger {
  return parent.child({ logger: REQUEST_LOGGER }, { level: namedLoggerLevel(parent.level, REQUEST_LEVEL_ENV, env) });
}

/** The line for one request answered (or, acks=0, handled) `startedMs` (performance.now()) ago. */
export function logCompletedRequest(log: Logger, api: string, ctx: RequestContext, startedMs: number): void {
  const { header, connection } = ctx;
  log.debug(
    {
      api,
      apiVersion: header.apiVersion,
      correlationId: header.correlationId,
      clientId: header.clientId,
      principal: principalToString(connection.principal),
      listener: connection.listenerName,
      securityProtocol: connection.securityProtocol,
      clientAddress: `${connection.clientHost}:${connection.clientPort}`,
      connectionId: connection.connectionId,
      totalTimeMs: Math.round((performance.now() - startedMs) * 1000) / 1000,
      // Time on the event loop decoding and handling, measured only while request quotas exist.
      ...(ctx.handlerLoopMs !== undefined ? { localTimeMs: Math.round(ctx.handlerLoopMs * 1000) / 1000 } : {}),
    },
    'Completed request',
  );
}
