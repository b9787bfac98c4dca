/**
 * What request metrics add to one request, measured in isolation: the performance.now() reads
 * (router and connection), the three histogram updates of the router, the connection's four,
 * the requests counter and the error-code walk of a response, for a one-partition Produce
 * answer and a 100-partition Fetch answer. Prints ns per request; compare with a request's whole
 * cost on the broker (tens of microseconds for a small produce).
 *
 *   node --import tsx bench/request-metrics-cost.ts [iterations=2000000]
 */
import { RequestStats } from '../src/server/metrics/request-stats.js';

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

function run(label: string, apiKey: number, answer: object): void {
  // The clock reads of one request alone on its connection: dispatch, handler returned, answer
  // resolved, encoded (router); answered, taken, written (connection; the last two per write batch).
  const once = (): void => {
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
  };
  for (let i = 0; i < 100_000; i++) once();
  const start = process.hrtime.bigint();
  for (let i = 0; i < iterations; i++) once();
  const ns = Number(process.hrtime.bigint() - start) / iterations;
  console.log(`${label}: ${ns.toFixed(0)} ns per request`);
}

run('Produce, 1 partition', 0, produceAnswer);
run('Fetch, 100 partitions', 1, fetchAnswer);
const bare = process.hrtime.bigint();
for (let i = 0; i < iterations; i++) performance.now();
console.log(`performance.now() alone: ${(Number(process.hrtime.bigint() - bare) / iterations).toFixed(0)} ns`);
