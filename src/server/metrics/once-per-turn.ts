/**
 * A scrape's shared pass: the registry asks every family of one scrape in the same turn of the
 * event loop, so the first family's call makes the value (a pass over partitions, groups or
 * shards) and the others of that scrape share it; the next turn's first call makes a new one.
 */
export function oncePerTurn<T>(make: () => T): () => T {
  let held: { value: T } | undefined;
  return () => {
    if (!held) {
      held = { value: make() };
      setImmediate(() => {
        held = undefined;
      });
    }
    return held.value;
  };
}
