/**
 * Turns a request frame into a response frame: reads the header, finds the handler, decodes,
 * makes the handler's declared whole-request authorization check (else answers its refusal),
 * handles (timed for request quotas and request metrics: metrics/request-stats.ts), encodes. Unsupported versions of ApiVersions get Kafka's v0 error answer (so the
 * client can retry lower); anything else malformed or unknown closes that one connection.
 */
import { DecodeError, Reader, Writer } from '../protocol/primitives/index.js';
import { ErrorCode } from '../protocol/errors.js';
import { ApiVersionsResponseCodec } from '../protocol/messages/index.js';
import { CloseConnectionError, type ConnectionContext } from './network/types.js';
import type { BrokerServices } from './broker-services.js';
import { API_VERSIONS_KEY, isFlexible, peekHeader, readRequestHeader, writeResponseHeader } from './request-header.js';
import { apiVersionsList } from './handlers/18-api-versions.js';
import type { ApiHandler, RequestContext } from './handlers/types.js';
import { authorizeCluster } from './handlers/authz.js';
import { throttleForRequestQuota } from './quotas/request-quotas.js';
import { giveBackProduceFrame, PRODUCE_API_KEY } from './network/frame-buffers.js';
import { createRequestLogger, logCompletedRequest } from './request-log.js';
import { FETCH_CONSUMER_SLOT, FETCH_FOLLOWER_SLOT, type RequestStats } from './metrics/request-stats.js';

export function createRequestRouter(services: BrokerServices) {
  const log = services.logger;
  const requestLog = createRequestLogger(log);
  return async function route(frame: Buffer, connection: ConnectionContext): Promise<Buffer | Buffer[] | null> {
    const started = requestLog.isLevelEnabled('debug') ? performance.now() : -1;
    const { apiKey, apiVersion, correlationId } = peekHeader(frame);
    const handler = services.handlers.get(apiKey);
    if (!handler) {
      throw new CloseConnectionError(`unknown API key ${apiKey} (correlation id ${correlationId})`);
    }
    if (apiVersion < handler.minVersion || apiVersion > handler.maxVersion) {
      if (apiKey === API_VERSIONS_KEY) {
        services.requestStats?.error(apiKey, ErrorCode.UNSUPPORTED_VERSION);
        return unsupportedApiVersions(services, correlationId);
      }
      throw new CloseConnectionError(`unsupported version ${apiVersion} of ${handler.name} (correlation id ${correlationId})`);
    }
    const flexible = isFlexible(handler.requestCodec, apiVersion);
    const r = new Reader(frame);
    let run;
    let ctx: RequestContext;
    try {
      const header = readRequestHeader(r, apiKey, flexible);
      ctx = { header, connection, services, localMs: 0, remoteMs: 0, throttleMs: 0, resumedAt: 0 };
      run = serveRequest(handler, r, ctx);
    } catch (err) {
      if (err instanceof DecodeError || err instanceof RangeError) {
        throw new CloseConnectionError(`malformed ${handler.name} v${apiVersion} request: ${err.message}`);
      }
      throw err;
    }
    const writeBody = await run;
    if (started >= 0) logCompletedRequest(requestLog, handler.name, ctx, started);
    // A handled Produce keeps nothing of its frame (its batches are in the log): the memory is reused.
    const reusable = apiKey === PRODUCE_API_KEY;
    if (writeBody === null) {
      if (services.requestStats) recordHandled(services.requestStats, ctx, apiKey, 0);
      if (reusable) giveBackProduceFrame(frame);
      return null;
    }
    // Large record sets (Fetch) stay where storage read them: the connection writes the parts
    // with one vectored write instead of copying megabytes into a single frame.
    const w = new Writer(512, { referenceThreshold: REFERENCE_THRESHOLD });
    writeResponseHeader(w, apiKey, flexible, correlationId);
    writeBody(w);
    if (services.requestStats) recordHandled(services.requestStats, ctx, apiKey, performance.now() - (ctx.resumedAt ?? 0));
    log.trace({ apiKey, apiVersion, correlationId }, 'answered');
    const parts = w.parts();
    if (reusable) giveBackProduceFrame(frame);
    return parts.length === 1 ? parts[0]! : parts;
  };
}

/**
 * Decodes, checks, handles and returns a writer of the response body (null: no response). Async
 * as a whole: a body that does not decode rejects (the connection closes as for a failed request).
 */
export async function serveRequest(handler: ApiHandler, r: Reader, ctx: RequestContext): Promise<((w: Writer) => void) | null> {
  const version = ctx.header.apiVersion;
  // --- quotas: time the request on the event loop only while request quotas exist
  const timed = ctx.services.quotas?.request.quotasEnabled ?? false;
  const stats = ctx.services.requestStats;
  // With metrics on, the request started when the connection dispatched it (request-timing.ts).
  const t0 = stats ? (ctx.connection.dispatchedAt ?? performance.now()) : timed ? performance.now() : 0;
  const req = handler.decode(r, version);
  if (stats && ctx.header.apiKey === FETCH_KEY) ctx.connection.fetchKind = fetchReplicaId(req as FetchIds) >= 0 ? 2 : 1;
  const pending = refusal(handler, req, ctx) ?? handler.handle(req, ctx);
  const t1 = timed || stats ? performance.now() : 0;
  if (timed) ctx.handlerLoopMs = t1 - t0;
  const res = await pending;
  const t2 = stats ? performance.now() : 0;
  if (stats) {
    ctx.localMs = t1 - t0;
    ctx.remoteMs = t2 - t1;
  }
  if (res === null) return null;
  if (timed) await throttleForRequestQuota(res, ctx);
  // --- end quotas
  if (stats) {
    const throttled = (res as { throttleTimeMs?: unknown }).throttleTimeMs;
    ctx.resumedAt = timed ? performance.now() : t2;
    ctx.throttleMs = Math.max(ctx.resumedAt - t2, typeof throttled === 'number' ? throttled : 0);
    stats.countErrors(ctx.header.apiKey, res);
  }
  return handler.encoder(res, version);
}

const FETCH_KEY = 1;
type FetchIds = { replicaId?: number; replicaState?: { replicaId: number } };
const fetchReplicaId = (req: FetchIds): number =>
  req.replicaState !== undefined && req.replicaState.replicaId >= 0 ? req.replicaState.replicaId : (req.replicaId ?? -1);

/** Request metrics: the router's parts of a handled request (Fetch also as FetchConsumer or FetchFollower). */
function recordHandled(stats: RequestStats, ctx: RequestContext, apiKey: number, encodeMs: number): void {
  const local = (ctx.localMs ?? 0) + encodeMs;
  stats.handled(apiKey, local, ctx.remoteMs ?? 0, ctx.throttleMs ?? 0);
  if (apiKey === FETCH_KEY)
    stats.handled(ctx.connection.fetchKind === 2 ? FETCH_FOLLOWER_SLOT : FETCH_CONSUMER_SLOT, local, ctx.remoteMs ?? 0, ctx.throttleMs ?? 0);
}

/** The handler's declared whole-request check: its refusal when denied, else undefined. */
function refusal(handler: ApiHandler, req: unknown, ctx: RequestContext): object | undefined {
  const auth = handler.authorization;
  if (!('cluster' in auth)) return undefined;
  const version = ctx.header.apiVersion;
  if (auth.appliesTo !== undefined && !auth.appliesTo(req, version)) return undefined;
  return authorizeCluster(ctx, auth.cluster) ? undefined : auth.denied(req, version);
}

/** Byte runs at least this long are sent by reference; below it a copy is cheaper than a writev entry. */
const REFERENCE_THRESHOLD = 16 * 1024;

/** Kafka's answer to an ApiVersions version it does not know: v0 layout, error 35, our ranges. */
function unsupportedApiVersions(services: BrokerServices, correlationId: number): Buffer {
  const w = new Writer(512);
  w.int32(correlationId);
  ApiVersionsResponseCodec.write(w, { errorCode: ErrorCode.UNSUPPORTED_VERSION, apiKeys: apiVersionsList(services) }, 0);
  return w.result();
}
