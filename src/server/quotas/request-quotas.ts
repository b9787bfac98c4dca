/**
 * The quota checks handlers make, in Kafka's order and with Kafka's values:
 * - Produce: the request's record bytes on producer_byte_rate, and (acks != 0) its handler time
 *   on request_percentage; appended regardless, answered with the larger throttle time.
 * - Fetch (consumers only; followers' fetches are never throttled): the fetched record bytes on
 *   consumer_byte_rate and the handler time on request_percentage; when throttled the bytes are
 *   taken back and the answer is empty (the consumer fetches the same offsets again later).
 * - Every other API (request-router.ts times it, throttleForRequestQuota): the handler time on
 *   request_percentage, except the inter-broker requests Kafka exempts.
 *
 * request_percentage on Fjord: Kafka measures the time a request spends on a request handler
 * thread, as a percentage of one thread per second. Fjord has one event loop; it measures the
 * event-loop time of decoding the request and running its handler until the handler first waits
 * (disk, replication, long poll), which is the work done on the loop for that request (reads and
 * decompression run off the loop and are not counted). request_percentage=100 lets a client use
 * the whole loop; 10 a tenth of it.
 */
import type { RequestContext } from '../handlers/types.js';
import { throttleConnection } from './throttle.js';

/** Kafka's nanosToPercentage, from milliseconds: percent-seconds of one thread. */
export function msToPercentSeconds(ms: number): number {
  return ms / 10;
}

/** Inter-broker requests Kafka does not throttle (ClusterAction): LeaderAndIsr, StopReplica, UpdateMetadata, ControlledShutdown, WriteTxnMarkers. */
export const REQUEST_QUOTA_EXEMPT: ReadonlySet<number> = new Set([4, 5, 6, 7, 27]);

function clientId(ctx: RequestContext): string {
  return ctx.header.clientId ?? '';
}

/** The request's handler time on request_percentage; 0 when within quota or no quota. */
export function requestThrottleMs(ctx: RequestContext, nowMs: number = Date.now()): number {
  const q = ctx.services.quotas?.request;
  if (!q?.quotasEnabled || ctx.handlerLoopMs === undefined) return 0;
  return q.recordAndGetThrottleTimeMs(ctx.connection.principal, clientId(ctx), msToPercentSeconds(ctx.handlerLoopMs), nowMs);
}

/**
 * Produce, as the request is handed to the partitions' owners: records its record bytes on
 * producer_byte_rate and mutes the connection for the throttle time at once; returns that time
 * (0: none). At hand-over rather than once the owners answer: with partitions on shard workers
 * (num.io.threads > 1) the answer is a thread hop away, and a producer's pipelined requests
 * (librdkafka keeps 5 in flight) would all be read and counted before the first mute, a burst
 * several times the bound followed by a throttle of as many seconds. Kafka reads nothing more
 * from a connection while one of its requests is in process, which this matches.
 */
export function recordProduceBytes(ctx: RequestContext, recordBytes: number): number {
  const q = ctx.services.quotas?.produce;
  if (!q?.quotasEnabled) return 0;
  const ms = q.recordAndGetThrottleTimeMs(ctx.connection.principal, clientId(ctx), recordBytes, Date.now());
  if (ms > 0) ctx.connection.muteFor?.(ms);
  return ms;
}

/**
 * Produce, once answered: the larger of `bandwidthMs` (recordProduceBytes) and the handler time
 * on request_percentage (acks != 0); the connection is muted for it from now (the mute from the
 * hand-over ends no earlier than before). Resolves after the throttle time for versions whose
 * client does not throttle itself.
 */
export async function throttleProduce(ctx: RequestContext, bandwidthMs: number, acks: number): Promise<number> {
  const { quotas } = ctx.services;
  if (!quotas || (!quotas.produce.quotasEnabled && !quotas.request.quotasEnabled)) return 0;
  const request = acks === 0 ? 0 : requestThrottleMs(ctx, Date.now());
  const ms = Math.max(bandwidthMs, request);
  await throttleConnection(ctx.connection, 0, ctx.header.apiVersion, ms);
  return ms;
}

/** Fetch: the consumer's byte limit within its quota (Kafka caps fetch.max.bytes at bound × (samples − 1) × window). */
export function fetchQuotaMaxBytes(ctx: RequestContext): number {
  const q = ctx.services.quotas?.fetch;
  if (!q?.quotasEnabled) return Infinity;
  return Math.floor(q.maxValueInQuotaWindow(ctx.connection.principal, clientId(ctx)));
}

/**
 * Fetch (consumer): records the fetched bytes and handler time; returns the throttle time (0:
 * answer as read). When throttled the bytes are taken back: the caller answers empty.
 */
export function fetchThrottleMs(ctx: RequestContext, responseBytes: number): number {
  const { quotas } = ctx.services;
  if (!quotas || (!quotas.fetch.quotasEnabled && !quotas.request.quotasEnabled)) return 0;
  const now = Date.now();
  const request = requestThrottleMs(ctx, now);
  const bandwidth = quotas.fetch.recordAndGetThrottleTimeMs(ctx.connection.principal, clientId(ctx), responseBytes, now);
  const ms = Math.max(bandwidth, request);
  if (ms > 0) quotas.fetch.unrecord(ctx.connection.principal, clientId(ctx), responseBytes, now);
  return ms;
}

/** Mutes the connection; resolves after the throttle time when the client does not throttle itself. */
export async function applyThrottle(ctx: RequestContext, ms: number): Promise<void> {
  await throttleConnection(ctx.connection, ctx.header.apiKey, ctx.header.apiVersion, ms);
}

/** Produce and Fetch check their quotas themselves (bytes and request time together). */
const SELF_THROTTLED: ReadonlySet<number> = new Set([0, 1]);

/**
 * request_percentage for every other API, once its response is ready: throttle_time_ms (where
 * the response has it) and the mute.
 */
export async function throttleForRequestQuota(res: object, ctx: RequestContext): Promise<void> {
  const apiKey = ctx.header.apiKey;
  if (SELF_THROTTLED.has(apiKey) || REQUEST_QUOTA_EXEMPT.has(apiKey)) return;
  const ms = requestThrottleMs(ctx);
  if (ms <= 0) return;
  const fields = res as { throttleTimeMs?: number };
  if ('throttleTimeMs' in fields) fields.throttleTimeMs = Math.max(fields.throttleTimeMs ?? 0, ms);
  await applyThrottle(ctx, ms);
}
