/**
 * What request metrics add to one request, measured in isolation: the performance.now() reads
 * (router and connection), the three histogram updates of the router, the connection's four,
 * the requests counter and the error-code walk of a response, for a one-partition Produce
 * answer and a 100-partition Fetch answer. Prints ns per request, the error-code walk alone
 * (the walk generated per schema, src/server/metrics/response-error-walks.gen.ts, against the
 * generic for…in walk it replaced), and the minor garbage collections each loop caused (0: the
 * loop allocates nothing that survives to a scavenge, i.e. nothing per request). Compare with a
 * request's whole cost on the broker (tens of microseconds for a small produce).
 *
 *   node --import tsx bench/request-metrics-cost.ts [iterations=2000000]
 */
import { PerformanceObserver } from 'node:perf_hooks';
import { ERROR_SLOTS, RequestStats } from '../src/server/metrics/request-stats.js';
import { countErrorCodesGeneric } from '../test/server/metrics/request-error-walk-generic.js';

const iterations = Number(process.argv[2] ?? 2_000_000);
const stats = new RequestStats();

const produceAnswer = {
  responses: [
    {
      name: 'bench',
      partitionResponses: [{ index: 0, errorCode: 0, baseOffset: 10n, logAppendTimeMs: -1n, logStartOffset: 0n, recordErrors: [], errorMessage: null }],
    },
  ],
  throttleTimeMs: 0,
};
const fetchAnswer = {
  throttleTimeMs: 0,
  errorCode: 0,
  sessionId: 0,
  responses: [
    {
      topic: 'bench',
      topicId: '',
      partitions: Array.from({ length: 100 }, (_, i) => ({
        partitionIndex: i,
        errorCode: 0,
        highWatermark: 100n,
        lastStableOffset: 100n,
        logStartOffset: 0n,
        abortedTransactions: null,
        preferredReadReplica: -1,
        records: Buffer.alloc(1024),
      })),
    },
  ],
};

let scavenges = 0;
new PerformanceObserver((list) => {
  for (const e of list.getEntries()) if ((e as PerformanceEntry & { detail?: { kind?: number } }).detail?.kind === 1) scavenges++;
}).observe({ entryTypes: ['gc'] });
/** Lets pending gc entries reach the observer. */
const settle = (): Promise<void> => new Promise((r) => setImmediate(r));

/** ns per call of `once` over `iterations` (after a warm-up), and the scavenges during the timed loop. */
async function time(once: () => void): Promise<{ ns: number; gcs: number }> {
  for (let i = 0; i < 100_000; i++) once();
  await settle();
  const before = scavenges;
  const start = process.hrtime.bigint();
  for (let i = 0; i < iterations; i++) once();
  const ns = Number(process.hrtime.bigint() - start) / iterations;
  await settle();
  return { ns, gcs: scavenges - before };
}

async function run(label: string, apiKey: number, answer: object): Promise<void> {
  // The clock reads of one request alone on its connection: dispatch, handler returned, answer
  // resolved, encoded (router); answered, taken, written (connection; the last two per write batch).
  const whole = await time(() => {
    const dispatched = performance.now();
    const returned = performance.now();
    const resolved = performance.now();
    stats.countErrors(apiKey, answer);
    const encoded = performance.now();
    stats.handled(apiKey, returned - dispatched + (encoded - resolved), resolved - returned, 0);
    const answered = performance.now();
    const taken = performance.now();
    const written = performance.now();
    stats.requestDone(apiKey, 9, 0, 0, taken - answered, written - taken, written - dispatched, 100, 100);
  });
  const walk = await time(() => stats.countErrors(apiKey, answer));
  const errors = new Float64Array(ERROR_SLOTS);
  const generic = await time(() => countErrorCodesGeneric(errors, 0, answer));
  console.log(
    `${label}: ${whole.ns.toFixed(0)} ns per request (${whole.gcs} scavenges); ` +
      `error-code walk ${walk.ns.toFixed(0)} ns (${walk.gcs} scavenges), generic walk ${generic.ns.toFixed(0)} ns`,
  );
}

await run('Produce, 1 partition', 0, produceAnswer);
await run('Fetch, 100 partitions', 1, fetchAnswer);
const clock = await time(() => performance.now());
console.log(`performance.now() alone: ${clock.ns.toFixed(0)} ns (${clock.gcs} scavenges)`);
