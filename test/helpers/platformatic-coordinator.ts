/**
 * Works around a gap of @platformatic/kafka 2.12.1's Consumer that can leave a member of a
 * KIP-848 group unable to heartbeat for good once its group coordinator dies (seen in
 * test/interop/kip848-failover.test.ts: once in CI, and in one of six runs on a loaded machine).
 *
 * The consumer keeps the coordinator's node id it found until an error tells it the coordinator
 * moved (NOT_COORDINATOR, COORDINATOR_NOT_AVAILABLE, a network error). When the node dies and the
 * consumer's metadata is refreshed (every 5 s, metadataMaxAge) after the controller has dropped
 * it from the live brokers, but before the consumer asked FindCoordinator again, the node is no
 * longer in its metadata: the connection pool then fails with "Cannot get a connection: the
 * broker is not available in the current cluster metadata", an error marked hasStaleMetadata, and
 * the consumer's error handling only clears its metadata for that mark (an if/else-if), never the
 * node id. Every heartbeat and commit then fails the same way, each attempt, forever; the member
 * keeps fetching its partitions until its session times out on the new coordinator. Kafka's
 * brokers also list only live brokers in Metadata, so the gap is the client's: a broker cannot
 * close it (platformatic/kafka issue 290 made network errors reset the node id, not this one).
 *
 * Here the consumer's connection pool answers a request for a broker its metadata does not list
 * with a retriable network error without that mark, after clearing the metadata itself: the
 * consumer both refreshes its metadata and looks its coordinator up again, as the fixed client
 * would.
 */
import { type Base, NetworkError } from '@platformatic/kafka';

type PoolGet = (broker: unknown, callback?: (error: Error | null, connection?: unknown) => void) => unknown;

/** `consumer`: a @platformatic/kafka Consumer, before it joins its group. */
export function rediscoverCoordinatorOfUnlistedBroker(consumer: Base): void {
  const pool = consumer.connections as unknown as { get: PoolGet };
  const get: PoolGet = pool.get.bind(pool);
  pool.get = (broker, callback) => {
    if ((broker !== undefined && broker !== null) || typeof callback !== 'function') return get(broker, callback);
    consumer.clearMetadata();
    callback(new NetworkError('Cannot get a connection: the broker is not in the current cluster metadata (the test looks the coordinator up again).'));
  };
}
