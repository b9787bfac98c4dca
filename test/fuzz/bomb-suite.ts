/**
 * Runs some of the bombs of issue 9 (tools/fuzz/bombs.ts) at the test suite's sizes against a
 * broker child process, with a well-behaved producer and consumer beside it, and makes one test
 * of each. A bomb passes when the broker stays up, answers a probe on the bomb's own connection
 * (or closed it) and on a fresh one, keeps RSS under 512 MB during and after it, and never blocks
 * its event loop for more than a second. Needs a build (dist/), as `npm test` makes.
 */
import { before, test } from 'node:test';
import assert from 'node:assert/strict';
import { DEFAULTS, formatReport, runFuzz, type FuzzReport } from '../../tools/fuzz/fuzz.js';
import { bombSet, TRICKLE_BOMB } from '../../tools/fuzz/bombs.js';
import { withTestIoThreads } from '../helpers/io-threads.js';

export function bombSuite(names: readonly string[]): void {
  let r: FuzzReport;
  before(async () => {
    r = await runFuzz({
      ...DEFAULTS,
      inputs: 0,
      seed: 9,
      bombs: names,
      bombScale: 'short',
      bombDeadlineMs: 10_000,
      probeTimeoutMs: 5000,
      trickleMs: 15_000,
      // A listen backlog that holds the 500-connection burst. With Kafka's default of 50 the kernel
      // drops the burst's overflow, and a fresh probe's wait is TCP's retransmission steps (about
      // 1 s, then 2 s: measured the same before and after issue 23), not the broker's answer,
      // which is what these bombs measure.
      // FJORD_TEST_IO_THREADS reaches this child broker too (docs/threads.md, "Swept at 3").
      brokerProps: withTestIoThreads({ 'socket.listen.backlog.size': '1024' }),
      log: () => undefined,
    });
    for (const line of formatReport(r)) console.log(`# ${line}`);
  });

  for (const bomb of bombSet('short').filter((b) => names.includes(b.name))) {
    test(`bomb ${bomb.name}: ${bomb.description}`, () => {
      const o = r.bombs.find((b) => b.name === bomb.name);
      assert.ok(o, 'bomb did not run');
      assert.ok(o.ok, `${o.reasons.join('; ')} [answers: ${o.answers.join('; ')}]`);
    });
  }

  if (names.includes(TRICKLE_BOMB)) {
    // the fuzzer's broker cuts partial frames after 5 s (socket.request.receive.timeout.ms, idle timer)
    test('bomb trickle: a frame sent at one byte a second is closed by the broker', () => {
      assert.ok(r.trickle, 'trickle did not run');
      assert.ok(r.trickle.ok, r.trickle.reason);
    });
  }

  test('the broker never went down and the side clients kept half their throughput', () => {
    assert.deepEqual(
      r.crashes.map((c) => `${c.phase}: ${c.exit}`),
      [],
    );
    assert.ok(r.brokerUpAtEnd);
    assert.ok(r.side && r.side.baseline.produced > 0, JSON.stringify(r.side));
    assert.equal(r.side.keptDuringBombs, true, JSON.stringify(r.side));
  });
}
