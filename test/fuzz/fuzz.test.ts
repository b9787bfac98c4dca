/**
 * The short fuzzing run of `npm run fuzz` (tools/fuzz): 8,000 mutated real-client requests and
 * random frames against a broker child process, each connection's inputs followed by a probe on
 * the same connection and on a fresh one, with a well-behaved producer and consumer beside it.
 * The bombs run in bombs.test.ts. Needs a build (dist/), as `npm test` makes. 8,000 inputs use
 * every mutation kind on ~3,000 connections; `npm run fuzz` (20,000) and `--soak` run more.
 */
import { before, test } from 'node:test';
import assert from 'node:assert/strict';
import { DEFAULTS, formatReport, mb, runFuzz, type FuzzReport } from '../../tools/fuzz/fuzz.js';
import { withTestIoThreads } from '../helpers/io-threads.js';

const INPUTS = 8_000;
const RSS_BOUND = 512 * 1024 * 1024;
let r: FuzzReport;

before(async () => {
  // brokerProps: FJORD_TEST_IO_THREADS reaches the fuzzed child broker too (docs/threads.md).
  r = await runFuzz({ ...DEFAULTS, inputs: INPUTS, seed: 9, bombs: [], rssBoundBytes: RSS_BOUND, brokerProps: withTestIoThreads({}), log: () => undefined });
  for (const line of formatReport(r)) console.log(`# ${line}`);
});

test(`all ${INPUTS.toLocaleString('en')} inputs were sent, and the broker closed connections it could not parse`, () => {
  assert.equal(r.inputsSent, INPUTS);
  assert.ok(r.connectionsClosedByBroker > 0, 'no connection was closed: were the inputs hostile at all?');
  assert.ok(Object.keys(r.mutations).length >= 12, `mutations used: ${Object.keys(r.mutations).join(', ')}`);
});

test('the broker is up at the end, never crashed, and stops on SIGTERM', () => {
  assert.deepEqual(r.crashes, []);
  assert.ok(r.brokerUpAtEnd);
  assert.equal(r.brokerStoppedCleanly, true);
});

test('every probe was answered, on the same connection and on a fresh one', () => {
  assert.equal(r.freshProbes.failed, 0, r.probeFailures.join('\n'));
  assert.equal(r.sameConnectionProbes.failed, 0, r.probeFailures.join('\n'));
  assert.ok(r.freshProbes.answered >= r.connectionsOpened * 0.99, `${r.freshProbes.answered} fresh probes for ${r.connectionsOpened} connections`);
  assert.ok(r.sameConnectionProbes.answered > 0);
});

test(`broker RSS stays under ${mb(RSS_BOUND)} while fuzzing`, () => {
  assert.ok(r.brokerRss.fuzzPeakBytes !== null && r.brokerRss.fuzzPeakBytes > 0);
  assert.ok(r.brokerRss.fuzzPeakBytes < RSS_BOUND, `peak ${mb(r.brokerRss.fuzzPeakBytes)}`);
});

test('the broker reports its own event-loop delay, and it stays under 2 s on a loaded machine', () => {
  assert.ok(r.worstLoopDelayMs.broker !== null && r.worstLoopDelayMs.broker > 0, 'no event-loop report read from the broker');
  assert.ok(r.worstLoopDelayMs.fuzzPhaseBroker! < 2000, `worst delay ${r.worstLoopDelayMs.fuzzPhaseBroker} ms`);
});

test('the side producer and consumer kept at least half their throughput', () => {
  assert.ok(r.side, 'no side clients');
  assert.ok(r.side.baseline.produced > 0 && r.side.baseline.consumed > 0, JSON.stringify(r.side));
  assert.equal(r.side.keptDuringFuzz, true, JSON.stringify(r.side));
});
