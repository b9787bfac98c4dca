/**
 * The broker process's one V8 heap setting (as Kafka's scripts give the JVM its G1 settings):
 * after each full garbage collection the old generation may grow to three times what survived
 * (`--heap-growing-percent=200`) before the next one starts, instead of V8's dynamic factor.
 *
 * Why: V8 starts incremental marking once the old generation's headroom (its limit minus its
 * size) is no more than the young generation's capacity. A broker under produce load grows its
 * young generation to its maximum (16 MB semi-spaces), and V8's dynamic factor, which falls when
 * collections take much of the time (it measures mutator utilisation), was seen at 1.9: a 17 MB
 * live heap got a 33 MB limit, 16 MB of headroom (--trace-incremental-marking): marking then
 * restarts right after each mark-compact. In one run with two brokers differing only by this
 * flag, 300 MB produced 4 times to each: 42 mark-compacts against 3, and 2.67 against 1.57 CPU ms
 * per MB. Which state a process fell into depended on its history (load, its live heap, scrapes),
 * so two brokers of one build differed by up to 50% in CPU per MB produced (issue 23's metrics
 * on/off comparison: bench/RESULTS.md, "The metrics-on produce gap: V8's mark-compact loop").
 * A fixed factor of 3 keeps the headroom above the young generation for any live heap above 8 MB
 * (a broker's is 10-20 MB from its start): full collections come from real old-generation
 * growth, at a memory cost of at most twice the live heap in garbage (RSS 175 against 163 MB
 * after 1.2 GB produced, the same run, neither broker looping).
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
