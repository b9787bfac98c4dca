/** Running async work over many items with a bound on how much is in flight at once. */
/** Runs fn over items with at most `limit` in flight; waits for all (fn should not throw). */
export async function forEachConcurrently<T>(items: readonly T[], limit: number, fn: (item: T) => Promise<unknown>): Promise<void> {
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) await fn(items[next++]!);
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
}
