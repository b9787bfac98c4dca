/**
 * The latency workload's method (bench/suite/workloads/latency.ts): the maximum is the highest
 * rate the latency client itself carries (ramp, then bisection, judged by `carried`), the broker's
 * Produce time is read off the difference of two scrapes of its request histogram, and the target
 * row judges the acknowledgement latency. A fake harness answers as `rdkafka-perf e2e` does, so
 * these run in milliseconds; the real harness runs in test/bench/suite-smoke.test.ts's kind of run.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { carried, type E2eResult, type Harness, latencyTargets, sustainedMaxRate, windowQuantile } from '../../bench/suite/workloads/latency.js';

/** What `rdkafka-perf e2e` prints for a client whose ceiling is `ceiling` records/s. */
function fakeHarness(ceiling: number, calls: number[]): Harness {
  return {
    rdkafkaPerf: 'rdkafka-perf',
    async exec(_cmd, args) {
      const rate = Number(args[args.indexOf('-r') + 1]);
      calls.push(rate);
      const over = rate > ceiling;
      const out = {
        mode: 'e2e',
        records: rate,
        failed: 0,
        received: rate,
        rate: over ? ceiling : rate,
        ack_drain_ms: over ? 1500 : 2,
        e2e_drain_ms: over ? 2000 : 3,
        ack_p50_ms: 0.5,
        ack_p99_ms: 1,
        ack_p999_ms: 2,
        ack_max_ms: 3,
        e2e_p50_ms: 1,
        e2e_p99_ms: 2,
        e2e_p999_ms: 3,
        e2e_max_ms: 4,
        int_latency_p99_ms: 0.1,
        int_latency_p9999_ms: 0.2,
        outbuf_latency_p99_ms: 0.01,
        outbuf_latency_p9999_ms: 0.02,
        rtt_p99_ms: 0.9,
        rtt_p9999_ms: 1.5,
      };
      return { code: 0, stdout: `${JSON.stringify(out)}\n`, stderr: '', ms: 1 };
    },
  };
}

const result = (over: Partial<E2eResult>): E2eResult => ({
  rate: 1000,
  records: 1000,
  received: 1000,
  failed: 0,
  ack: { p50: 1, p99: 1, p999: 1, max: 1 },
  e2e: { p50: 1, p99: 1, p999: 1, max: 1 },
  ackDrainMs: 1,
  e2eDrainMs: 1,
  client: { queue: { p99: 0, p9999: 0 }, outbuf: { p99: 0, p9999: 0 }, rtt: { p99: 0, p9999: 0 } },
  ...over,
});

describe('latency workload method', () => {
  it('carried: the rate sent, nothing lost, acknowledgements and consumer caught up soon after the last send', () => {
    assert.equal(carried(1000, result({})), true);
    assert.equal(carried(1000, result({ rate: 900 })), false);
    assert.equal(carried(1000, result({ received: 999 })), false);
    assert.equal(carried(1000, result({ failed: 1 })), false);
    assert.equal(carried(1000, result({ ackDrainMs: 900 })), false);
    assert.equal(carried(1000, result({ e2eDrainMs: 900 })), false);
    assert.equal(carried(1000, result({ e2eDrainMs: -1 })), false);
  });

  it('sustainedMaxRate doubles until a rate is not carried, then bisects', async () => {
    const calls: number[] = [];
    const max = await sustainedMaxRate(fakeHarness(130_000, calls), 'b:1', 't', '1', { start: 25_000, seconds: 1, warmupSeconds: 1, bisections: 2 });
    // 25k, 50k, 100k carried; 200k not; then sqrt(100k*200k) = 141,421 not; sqrt(100k*141,421) = 118,921 carried.
    assert.deepEqual(calls, [25_000, 50_000, 100_000, 200_000, 141_421, 118_921]);
    assert.equal(max.rate, 118_921);
    assert.deepEqual(
      max.steps.map((s) => s.ok),
      [true, true, true, false, false, true],
    );
  });

  it('sustainedMaxRate halves from a start the client cannot carry', async () => {
    const calls: number[] = [];
    const max = await sustainedMaxRate(fakeHarness(10_000, calls), 'b:1', 't', 'all', { start: 25_000, seconds: 1, warmupSeconds: 1, bisections: 0 });
    assert.deepEqual(calls, [25_000, 12_500, 6_250]);
    assert.equal(max.rate, 6_250);
  });

  it("windowQuantile reads a quantile off the difference of two scrapes' cumulative buckets", () => {
    const before = new Map([
      [1, 100],
      [2.5, 100],
      [5, 100],
      [Number.POSITIVE_INFINITY, 100],
    ]);
    // In the window: 900 requests ≤ 1 ms, 90 in (1, 2.5], 10 in (2.5, 5].
    const after = new Map([
      [1, 1000],
      [2.5, 1090],
      [5, 1100],
      [Number.POSITIVE_INFINITY, 1100],
    ]);
    assert.equal(windowQuantile(before, after, 0.9), 1);
    assert.equal(windowQuantile(before, after, 0.99), 2.5);
    assert.ok(Math.abs(windowQuantile(before, after, 0.995) - 3.75) < 1e-9);
    assert.ok(Number.isNaN(windowQuantile(after, after, 0.99)));
  });

  it('the target row judges produce (acknowledgement) latency and shows the broker and client beside it', () => {
    const c = '1 KiB, 1 partition, acks=1, 50% of max';
    const fig = (metric: string, value: number) => ({ case: c, metric, value });
    const figures = [
      { case: '1 KiB, 1 partition, acks=1, maximum', metric: 'records/s', value: 100_000 },
      fig('records/s', 50_000),
      fig('ack p99 ms', 1.5),
      fig('ack p99.9 ms', 4),
      fig('e2e p99 ms', 30),
      fig('e2e p99.9 ms', 60),
      fig('broker Produce p99 ms', 0.9),
      fig('broker Produce p99.9 ms', 2),
      fig('client queue p99 ms', 0.2),
      fig('client rtt p99 ms', 1.1),
    ];
    const [acks1] = latencyTargets(figures);
    assert.equal(acks1!.met, true, 'end to end above 2 ms does not fail the produce target');
    assert.match(acks1!.target, /^produce p99 ≤ 2 ms and p99\.9 ≤ 5 ms at 50% of maximum load \(acks=1\)$/);
    assert.match(acks1!.figure, /acknowledgement p99 1\.50 ms, p99\.9 4\.00 ms at 50000 records\/s \(50% of 100000/);
    assert.match(acks1!.figure, /broker Produce time p99 0\.90 ms, p99\.9 2\.00 ms; client queue p99 0\.20 ms/);
    const [missed] = latencyTargets(figures.map((f) => (f.metric === 'ack p99.9 ms' ? { ...f, value: 6 } : f)));
    assert.equal(missed!.met, false);
    assert.match(missed!.note ?? '', /Issue 26: latency, measured at the load the latency client carries/);
  });
});
