// Request metrics at the connection: what each request is and when it came (noted at dispatch),
// and its times once its answer is handed to the socket (reported to the RequestTimingSink).
// Numbers kept on the request's ResponseSlot, so measuring allocates nothing.
import type { ResponseQueue, ResponseSlot } from './response-queue.js';
import type { ConnectionContext, RequestTimingSink } from './types.js';

/** SASL requests that may come while raw SASL tokens are expected (the other frames then are tokens, not requests). */
const SASL_PHASE_APIS: ReadonlySet<number> = new Set([17, 18, 36]);
/** Fetch's API key (its times are also recorded as FetchConsumer or FetchFollower). */
const FETCH_KEY = 1;

/** At dispatch: the request's API key and version, when its frame was complete and when its handling starts. */
export function noteRequest(slot: ResponseSlot, frame: Buffer, frameAt: number, ctx: ConnectionContext): void {
  if (frame.length < 4) return;
  const apiKey = frame.readInt16BE(0);
  if (ctx.frameLimits?.minBytes === 0 && !SASL_PHASE_APIS.has(apiKey)) return;
  slot.apiKey = apiKey;
  slot.apiVersion = frame.readInt16BE(2);
  slot.frameAt = frameAt;
  slot.dispatchedAt = ctx.dispatchedAt = performance.now();
}

/**
 * After a write: each request whose answer (or acks=0 nothing) was just handed to the socket,
 * taken from the queue at queue.takenAt. Empties queue.taken.
 */
export function reportTimes(timing: RequestTimingSink, queue: ResponseQueue, ctx: ConnectionContext): void {
  const slots = queue.taken;
  if (slots.length === 0) return;
  const takenAt = queue.takenAt;
  const sentAt = performance.now();
  for (const slot of slots) {
    if (slot.apiKey < 0) continue;
    const fetchKind = slot.apiKey === FETCH_KEY ? (ctx.fetchKind ?? 0) : 0;
    timing.requestDone(
      slot.apiKey,
      slot.apiVersion,
      fetchKind,
      slot.dispatchedAt - slot.frameAt,
      takenAt - slot.answeredAt,
      sentAt - takenAt,
      sentAt - slot.frameAt,
      slot.requestBytes,
      slot.responseBytes > 0 ? slot.responseBytes - 4 : 0,
    );
  }
  slots.length = 0;
}
