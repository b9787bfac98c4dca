/**
 * Applying a throttle time to a connection as Kafka 2.0+ does (KIP-219). For versions whose client
 * throttles itself the response goes out at once carrying throttle_time_ms, and the broker stops
 * reading from the connection for that long (the channel is muted from when the throttle is
 * decided until it ends; the response is still written meanwhile). For older versions the client
 * does not know to wait, so the broker holds the response back for the throttle time instead
 * (and reads nothing meanwhile), as Kafka did before KIP-219.
 */
import type { ConnectionContext } from '../network/types.js';

/** First version of each pre-KIP-219 API whose client throttles itself (Kafka's shouldClientThrottle); other APIs: every version. */
const FIRST_CLIENT_THROTTLED_VERSION: ReadonlyMap<number, number> = new Map([
  [0, 6],
  [1, 8],
  [2, 3],
  [3, 6],
  [8, 4],
  [9, 4],
  [10, 2],
  [11, 3],
  [12, 2],
  [13, 2],
  [14, 2],
  [15, 2],
  [16, 2],
  [18, 2],
  [19, 3],
  [20, 2],
  [21, 1],
  [22, 1],
  [23, 3],
  [24, 1],
  [25, 1],
  [26, 1],
  [28, 1],
  [29, 1],
  [30, 1],
  [31, 1],
  [32, 2],
  [33, 1],
  [34, 1],
  [35, 1],
  [37, 1],
  [38, 1],
  [39, 1],
  [40, 1],
  [41, 1],
  [42, 1],
]);

export function clientThrottles(apiKey: number, version: number): boolean {
  return version >= (FIRST_CLIENT_THROTTLED_VERSION.get(apiKey) ?? 0);
}

/**
 * Mutes the connection for `throttleMs` and, for a client that does not throttle itself, resolves
 * once that time has passed (the caller answers then). Resolves at once when nothing to do.
 */
export function throttleConnection(connection: ConnectionContext, apiKey: number, version: number, throttleMs: number): Promise<void> | undefined {
  if (throttleMs <= 0) return undefined;
  connection.muteFor?.(throttleMs);
  if (clientThrottles(apiKey, version)) return undefined;
  return new Promise((resolve) => setTimeout(resolve, throttleMs).unref());
}
