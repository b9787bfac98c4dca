/**
 * The broker process's one V8 heap setting (as Kafka's scripts give the JVM its G1 settings):
 * after each full garbage collection the old generation may grow to three times what survived
 * (`--heap-growing-percent=200`) before the next one starts, instead of V8's dynamic factor.
 *
 * Why: V8 starts incremental marking as soon as the old generation's headroom (its limit minus
 * its size and the external memory allocated since the last full GC) is below the young
 * generation's capacity. A broker under produce load grows its young generation to its maximum
 * (16 MB semi-spaces) and allocates socket chunks and request frames off the heap; V8's dynamic
 * factor falls towards 1.1 when collections are frequent (it measures mutator utilisation), which
 * leaves a headroom below that capacity, so marking restarts right after each mark-compact: a
 * broker with a 17 MB live heap ran a mark-compact every 7-30 MB produced and spent 40-70% more
 * CPU per MB than in the other state, where it ran one every few hundred MB. Which state a process
 * fell into depended on its history (load, its live heap's size, scrapes), so two brokers on the
 * same build differed by more than the metrics they were compared for (bench/RESULTS.md, "The
 * metrics-on produce gap: mark-compact loops"). A fixed factor of 3 keeps the headroom above the
 * young generation for any live heap above 8 MB (a broker's is 10-20 MB at start): full GCs come
 * from real old-generation growth, at a memory cost of at most twice the live heap in garbage.
 *
 * An operator's own `--heap-growing-percent` on node's command line is left as it is.
 */
import { setFlagsFromString } from 'node:v8';

export const BROKER_HEAP_GROWING_PERCENT = 200;

const FLAG = /^--heap[-_]growing[-_]percent(=|$)/;

/**
 * Applies the broker's heap setting unless `execArgv` (node's own flags) already sets it. Returns
 * the line the broker logs at start: which setting applies.
 */
export function tuneBrokerHeap(execArgv: readonly string[] = process.execArgv): string {
  const given = execArgv.find((arg) => FLAG.test(arg));
  if (given !== undefined) return `V8 heap: ${given} (from node's command line)`;
  // Read by V8 each time it computes the old generation's limit, so setting it now takes effect
  // from the next full collection on.
  setFlagsFromString(`--heap-growing-percent=${BROKER_HEAP_GROWING_PERCENT}`);
  return `V8 heap: --heap-growing-percent=${BROKER_HEAP_GROWING_PERCENT} (the old generation grows to 3 times its live size between full collections)`;
}
