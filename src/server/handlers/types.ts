/**
 * What a request handler is: one Kafka API, the versions it serves, and a function from the
 * decoded request to the response. Decoding and encoding are done for it by the router.
 */
import type { Input, MessageCodec, Reader, Writer } from '../../protocol/primitives/index.js';
import type { ConnectionContext } from '../network/types.js';
import type { RequestHeader } from '../request-header.js';
import type { BrokerServices } from '../broker-services.js';
import { encodeInSlices, worthSlicing } from './sliced-encoding.js';
import { REQUEST_QUOTA_EXEMPT, applyThrottle, requestThrottleMs } from '../quotas/request-quotas.js';

export interface RequestContext {
  header: RequestHeader;
  connection: ConnectionContext;
  services: BrokerServices;
  /**
   * Quotas: event-loop ms spent decoding the request and running its handler until it first
   * waited; set (only while request quotas exist) once the handler has returned its promise.
   */
  handlerLoopMs?: number;
}

export interface ApiHandlerSpec<Req, Res> {
  apiKey: number;
  request: MessageCodec<Req>;
  response: MessageCodec<Res>;
  minVersion: number;
  maxVersion: number;
  /**
   * The response's top-level array that can grow with the request (topics, results, ...): when
   * long, it is encoded in slices that let the event loop in (sliced-encoding.ts).
   */
  slicedField?: keyof Res & string;
  /** Returns the response, or null to send none (Produce with acks=0). */
  handle(request: Req, ctx: RequestContext): Promise<Input<Res> | null> | Input<Res> | null;
}

/** A handler with its types erased, as the router's table holds it. */
export interface ApiHandler {
  readonly apiKey: number;
  readonly name: string;
  readonly minVersion: number;
  readonly maxVersion: number;
  readonly requestCodec: MessageCodec<unknown>;
  /** Decodes the body, handles it, and returns a writer of the response body (null: no response). */
  run(r: Reader, ctx: RequestContext): Promise<((w: Writer) => void) | null>;
}

export function defineHandler<Req, Res>(spec: ApiHandlerSpec<Req, Res>): ApiHandler {
  if (spec.minVersion < spec.request.minVersion || spec.maxVersion > spec.request.maxVersion) {
    throw new Error(`${spec.request.name}: versions ${spec.minVersion}-${spec.maxVersion} exceed the spec`);
  }
  return {
    apiKey: spec.apiKey,
    name: spec.request.name.replace(/Request$/, ''),
    minVersion: spec.minVersion,
    maxVersion: spec.maxVersion,
    requestCodec: spec.request as MessageCodec<unknown>,
    async run(r, ctx) {
      const version = ctx.header.apiVersion;
      // --- quotas: time the request on the event loop only while request quotas exist
      const timed = ctx.services.quotas?.request.quotasEnabled ?? false;
      const t0 = timed ? performance.now() : 0;
      const req = spec.request.read(r, version);
      const pending = spec.handle(req, ctx);
      if (timed) ctx.handlerLoopMs = performance.now() - t0;
      const res = await pending;
      if (res === null) return null;
      if (timed && !SELF_THROTTLED.has(spec.apiKey) && !REQUEST_QUOTA_EXEMPT.has(spec.apiKey)) await throttleForRequestQuota(res as object, ctx);
      // --- end quotas
      const field = spec.slicedField;
      if (worthSlicing(res, field)) return encodeInSlices(spec.response, res, field as keyof Res & string, version);
      return (w) => spec.response.write(w, res, version);
    },
  };
}

/** Produce and Fetch check their quotas themselves (bytes and request time together). */
const SELF_THROTTLED: ReadonlySet<number> = new Set([0, 1]);

/** request_percentage for every other API: throttle_time_ms (where the response has it) and the mute. */
async function throttleForRequestQuota(res: object, ctx: RequestContext): Promise<void> {
  const ms = requestThrottleMs(ctx);
  if (ms <= 0) return;
  const fields = res as { throttleTimeMs?: number };
  if ('throttleTimeMs' in fields) fields.throttleTimeMs = Math.max(fields.throttleTimeMs ?? 0, ms);
  await applyThrottle(ctx, ms);
}
