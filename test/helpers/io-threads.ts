/**
 * FJORD_TEST_IO_THREADS=N (npm run test:threads): num.io.threads=N on every broker a test starts
 * through test/helpers (broker.ts in-process, broker-child.ts as a child; cluster.ts and
 * inproc-cluster.ts's ZooKeeper-mode brokers too, since threads step 3), unless the test sets
 * num.io.threads itself. Runs the existing tests with partitions on shard workers.
 */

/** `props` with num.io.threads from FJORD_TEST_IO_THREADS (embedded or cluster mode, when the test does not set it). */
export function withTestIoThreads(props: Record<string, string>): Record<string, string> {
  const threads = process.env.FJORD_TEST_IO_THREADS;
  if (!threads || props['num.io.threads'] !== undefined) return props;
  return { ...props, 'num.io.threads': threads };
}
