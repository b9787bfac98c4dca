/**
 * FJORD_TEST_NETWORK_THREADS=N: num.network.threads=N on every broker a test starts through
 * test/helpers (broker.ts in-process, broker-child.ts as a child), unless the test sets it itself.
 * Runs the existing tests with the sockets on network threads (as io-threads.ts does for shards).
 */

/** `props` with num.network.threads from FJORD_TEST_NETWORK_THREADS (when the test does not set it). */
export function withTestNetworkThreads(props: Record<string, string>): Record<string, string> {
  const threads = process.env.FJORD_TEST_NETWORK_THREADS;
  if (!threads || props['num.network.threads'] !== undefined) return props;
  return { ...props, 'num.network.threads': threads };
}
