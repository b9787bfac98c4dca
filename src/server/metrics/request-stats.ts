/**
 * Per-API request statistics, as Kafka's kafka.network:type=RequestMetrics keeps them: requests
 * by version, errors by code, and the time of each request split into its parts. Plain typed
 * arrays, preallocated and indexed by API key (and version, error code, bucket), so recording a
 * request allocates nothing and hashes nothing; request-metrics.ts reads them when scraped.
 *
 * The parts on Fjord (one event loop, no request queue or handler threads):
 * - request queue: from the frame's last bytes arriving to its handler starting (waiting behind
 *   requests pipelined before it in the same read, or a large-answer request held back);
 * - local: the handler's own work on the loop (decode, handling until it first waits, encode);
 * - remote: waiting on others: acks=all replication, a long-polling fetch, disk, other brokers;
 * - throttle: the quota throttle the broker applied (the larger of what it waited and what the
 *   response carries as throttle_time_ms);
 * - response queue: from the answer being ready to its turn on the connection (answers are
 *   written in request order, so it waits behind slower earlier ones);
 * - response send: handing the answer to the socket (to the kernel, or Node's buffer when full);
 * - total: from the frame's last bytes arriving to the answer handed to the socket.
 */

import { RESPONSE_ERROR_WALKS } from './response-error-walks.gen.js';

/** A response as the generated walks read it: its fields by name. */
type ResponseFields = { readonly [field: string]: unknown };

/** API keys recorded (Kafka 3.9's highest is below 80); pseudo keys for Fetch's two kinds sit at the top. */
export const API_SLOTS = 128;
/** Kafka's RequestMetrics splits Fetch into FetchConsumer and FetchFollower (besides Fetch). */
export const FETCH_CONSUMER_SLOT = 126;
export const FETCH_FOLLOWER_SLOT = 127;
const VERSION_SLOTS = 32;
/** Error codes -1 .. ERROR_SLOTS-2 (Kafka's highest is near 130; tools/codegen/error-walks.ts counts up to the same). */
export const ERROR_SLOTS = 160;

export const TIME_PARTS = ['requestQueue', 'local', 'remote', 'throttle', 'responseQueue', 'responseSend', 'total'] as const;
export type TimePart = (typeof TIME_PARTS)[number];
export const PART_REQUEST_QUEUE = 0;
export const PART_LOCAL = 1;
export const PART_REMOTE = 2;
export const PART_THROTTLE = 3;
export const PART_RESPONSE_QUEUE = 4;
export const PART_RESPONSE_SEND = 5;
export const PART_TOTAL = 6;

/** Bucket upper bounds in ms (the last bucket, above 30 s, is unbounded). */
export const BUCKET_BOUNDS_MS: readonly number[] = [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10000, 30000];
export const BUCKETS = BUCKET_BOUNDS_MS.length + 1;
const BOUNDS = Float64Array.from(BUCKET_BOUNDS_MS);

/** One time part's histograms, one per API slot: bucket counts and the sum of observed ms. */
export class TimeHistograms {
  readonly counts = new Float64Array(API_SLOTS * BUCKETS);
  readonly sums = new Float64Array(API_SLOTS);

  observe(slot: number, ms: number): void {
    let b = 0;
    while (b < BOUNDS.length && ms > BOUNDS[b]!) b++;
    this.counts[slot * BUCKETS + b]!++;
    this.sums[slot]! += ms;
  }

  count(slot: number): number {
    let n = 0;
    for (let b = 0; b < BUCKETS; b++) n += this.counts[slot * BUCKETS + b]!;
    return n;
  }
}

export class RequestStats {
  /** Requests answered (or taken without answer, acks=0) by API slot and version. */
  readonly requests = new Float64Array(API_SLOTS * VERSION_SLOTS);
  /** Errors in the responses by API slot and code (Kafka counts each errorCode of a response, NONE included). */
  readonly errors = new Float64Array(API_SLOTS * ERROR_SLOTS);
  readonly times: readonly TimeHistograms[] = TIME_PARTS.map(() => new TimeHistograms());
  /** Request and response sizes (bytes, without the size prefix) by API slot. */
  readonly requestBytes = new Float64Array(API_SLOTS);
  readonly responseBytes = new Float64Array(API_SLOTS);
  /** Kafka's name of each API slot ('' for none), the request label. */
  readonly names: string[] = new Array<string>(API_SLOTS).fill('');

  /** Names the API slots after the broker's handler table. */
  nameApis(handlers: ReadonlyMap<number, { name: string }>): void {
    for (const [key, h] of handlers) if (RequestStats.valid(key)) this.names[key] = h.name;
    this.names[FETCH_CONSUMER_SLOT] = 'FetchConsumer';
    this.names[FETCH_FOLLOWER_SLOT] = 'FetchFollower';
  }

  static valid(apiKey: number): boolean {
    return apiKey >= 0 && apiKey < FETCH_CONSUMER_SLOT;
  }

  /** The router's parts of a handled request: local, remote and throttle time, in ms. */
  handled(slot: number, localMs: number, remoteMs: number, throttleMs: number): void {
    this.times[PART_LOCAL]!.observe(slot, localMs);
    this.times[PART_REMOTE]!.observe(slot, remoteMs);
    this.times[PART_THROTTLE]!.observe(slot, throttleMs);
  }

  /** The connection's parts, once the answer is handed to the socket (RequestTimingSink). */
  requestDone(
    apiKey: number,
    apiVersion: number,
    fetchKind: number,
    requestQueueMs: number,
    responseQueueMs: number,
    sendMs: number,
    totalMs: number,
    requestBytes: number,
    responseBytes: number,
  ): void {
    if (!RequestStats.valid(apiKey) || apiVersion < 0 || apiVersion >= VERSION_SLOTS) return;
    this.requests[apiKey * VERSION_SLOTS + apiVersion]!++;
    this.record(apiKey, requestQueueMs, responseQueueMs, sendMs, totalMs, requestBytes, responseBytes);
    if (fetchKind > 0) {
      const slot = fetchKind === 2 ? FETCH_FOLLOWER_SLOT : FETCH_CONSUMER_SLOT;
      this.record(slot, requestQueueMs, responseQueueMs, sendMs, totalMs, requestBytes, responseBytes);
    }
  }

  private record(slot: number, requestQueueMs: number, responseQueueMs: number, sendMs: number, totalMs: number, reqBytes: number, resBytes: number): void {
    const t = this.times;
    t[PART_REQUEST_QUEUE]!.observe(slot, requestQueueMs);
    t[PART_RESPONSE_QUEUE]!.observe(slot, responseQueueMs);
    t[PART_RESPONSE_SEND]!.observe(slot, sendMs);
    t[PART_TOTAL]!.observe(slot, totalMs);
    this.requestBytes[slot]! += reqBytes;
    this.responseBytes[slot]! += resBytes;
  }

  /**
   * Counts every errorCode field of a response (Kafka's errorCounts) with the walk generated for
   * its API's schema (response-error-walks.gen.ts): only the paths that lead to an errorCode.
   */
  countErrors(apiKey: number, response: object): void {
    if (!RequestStats.valid(apiKey) || apiKey >= RESPONSE_ERROR_WALKS.length) return;
    RESPONSE_ERROR_WALKS[apiKey]?.(this.errors, apiKey * ERROR_SLOTS, response as ResponseFields);
  }

  error(apiKey: number, code: number): void {
    if (RequestStats.valid(apiKey) && code >= -1 && code < ERROR_SLOTS - 1) this.errors[apiKey * ERROR_SLOTS + code + 1]!++;
  }

  /** Calls `f` for each (version, count) of an API slot with requests. */
  forEachVersion(apiKey: number, f: (version: number, count: number) => void): void {
    for (let v = 0; v < VERSION_SLOTS; v++) {
      const n = this.requests[apiKey * VERSION_SLOTS + v]!;
      if (n > 0) f(v, n);
    }
  }

  forEachError(apiKey: number, f: (code: number, count: number) => void): void {
    for (let i = 0; i < ERROR_SLOTS; i++) {
      const n = this.errors[apiKey * ERROR_SLOTS + i]!;
      if (n > 0) f(i - 1, n);
    }
  }
}
