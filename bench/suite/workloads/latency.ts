/**
 * Issue 26's latency workload: end-to-end latency (produce() to a consumer's receipt, one process,
 * one monotonic clock: `rdkafka-perf e2e`) of 1 KiB records to one partition at 25, 50 and 75% of
 * the maximum produce rate measured just before, in the same repeat, on the same broker, for
 * acks=1 and acks=all. The acknowledgement latency (produce() to the delivery report) of the same
 * records is reported beside it. Judges the target "p99 ≤ 2 ms and p99.9 ≤ 5 ms at 50% of the
 * maximum load" on the end-to-end figures.
 *
 * The measuring steps are plain functions (`maxProduceRate`, `e2eLatency`) so bench/latency-breakdown.ts
 * runs them against brokers it starts itself (other builds, node flags, profiles).
 */
import type { ExecResult, FjordHandle, Sample, SuiteContext, TargetCheck, Workload } from '../workload.js';

export const RECORD_BYTES = 1024;
export const LOAD_SHARES = [0.25, 0.5, 0.75] as const;

/** What the measuring functions need: the harness binary and a way to run it. */
export interface Harness {
  rdkafkaPerf: string;
  exec(cmd: string, args: readonly string[], options?: { timeoutMs?: number }): Promise<ExecResult>;
  command?(line: string): void;
}

export interface E2eResult {
  /** The rate actually sent (records/s). */
  rate: number;
  records: number;
  received: number;
  ack: { p50: number; p99: number; p999: number; max: number };
  e2e: { p50: number; p99: number; p999: number; max: number };
}

async function runJson(h: Harness, args: string[], timeoutMs: number): Promise<Record<string, number | null>> {
  h.command?.(`rdkafka-perf ${args.join(' ')}`);
  const r = await h.exec(h.rdkafkaPerf, args, { timeoutMs });
  const last = r.stdout.trim().split('\n').pop() ?? '';
  if (r.code !== 0 || !last.startsWith('{')) throw new Error(`rdkafka-perf ${args[0]} failed (${r.code}): ${r.stderr.trim().split('\n').pop() ?? ''}`);
  return JSON.parse(last) as Record<string, number | null>;
}

/** The produce rate (records/s) one librdkafka producer reaches: `records` × 1 KiB, linger 5 ms, 1 MB batches. */
export async function maxProduceRate(h: Harness, bootstrap: string, topic: string, acks: '1' | 'all', records: number): Promise<number> {
  const out = await runJson(
    h,
    ['produce', '-b', bootstrap, '-t', topic, '-n', String(records), '-s', String(RECORD_BYTES), '-a', acks === 'all' ? '-1' : '1', '-l', '5', '-B', '1000000'],
    180_000,
  );
  return Number(out.records_per_s);
}

/**
 * End-to-end latency at a fixed `rate` for `seconds` after `warmupSeconds` (left out of the
 * figures). linger.ms=0 and Nagle off: the producer sends as soon as it can, batching only what
 * queued while a request was in flight.
 */
export async function e2eLatency(
  h: Harness,
  bootstrap: string,
  topic: string,
  acks: '1' | 'all',
  rate: number,
  seconds: number,
  warmupSeconds: number,
): Promise<E2eResult> {
  const out = await runJson(
    h,
    [
      'e2e',
      '-b',
      bootstrap,
      '-t',
      topic,
      '-r',
      String(Math.round(rate)),
      '-d',
      String(seconds),
      '-w',
      String(warmupSeconds),
      '-s',
      String(RECORD_BYTES),
      '-a',
      acks === 'all' ? '-1' : '1',
      '-l',
      '0',
      '-X',
      'socket.nagle.disable=true',
    ],
    (seconds + warmupSeconds) * 1000 + 60_000,
  );
  const pick = (prefix: string) => ({
    p50: Number(out[`${prefix}_p50_ms`]),
    p99: Number(out[`${prefix}_p99_ms`]),
    p999: Number(out[`${prefix}_p999_ms`]),
    max: Number(out[`${prefix}_max_ms`]),
  });
  return { rate: Number(out.rate), records: Number(out.records), received: Number(out.received), ack: pick('ack'), e2e: pick('e2e') };
}

/** The row name of one measurement. */
export function caseName(acks: '1' | 'all', share: number): string {
  return `1 KiB, 1 partition, acks=${acks}, ${Math.round(share * 100)}% of max`;
}

/** One broker, one repeat: the maximum rate per acks, then e2e latency at each share of it. */
export async function latencyRepeat(
  h: Harness,
  fjord: Pick<FjordHandle, 'bootstrap' | 'createTopic' | 'deleteTopic'>,
  opts: { maxRecords: number; seconds: number; warmupSeconds: number; tag: string },
): Promise<Sample[]> {
  const samples: Sample[] = [];
  for (const acks of ['1', 'all'] as const) {
    const maxTopic = `latency-max-${acks}-${opts.tag}`;
    await fjord.createTopic(maxTopic, 1);
    const max = await maxProduceRate(h, fjord.bootstrap, maxTopic, acks, opts.maxRecords);
    await fjord.deleteTopic(maxTopic);
    samples.push({ case: `1 KiB, 1 partition, acks=${acks}, maximum`, system: 'fjord', metric: 'records/s', value: max, higherIsBetter: true });
    for (const share of LOAD_SHARES) {
      const topic = `latency-e2e-${acks}-${Math.round(share * 100)}-${opts.tag}`;
      await fjord.createTopic(topic, 1);
      const r = await e2eLatency(h, fjord.bootstrap, topic, acks, max * share, opts.seconds, opts.warmupSeconds);
      await fjord.deleteTopic(topic);
      const c = caseName(acks, share);
      const add = (metric: string, value: number, higherIsBetter = false) => samples.push({ case: c, system: 'fjord', metric, value, higherIsBetter });
      add('records/s', r.rate, true);
      add('p50 ms', r.e2e.p50);
      add('p99 ms', r.e2e.p99);
      add('p99.9 ms', r.e2e.p999);
      add('ack p99 ms', r.ack.p99);
      add('ack p99.9 ms', r.ack.p999);
      add('lost records', r.records - r.received);
    }
  }
  return samples;
}

/** The target at 50% of max: p99 ≤ 2 ms and p99.9 ≤ 5 ms, end to end, for each acks. */
export function latencyTargets(figures: readonly { case: string; metric: string; value: number }[]): TargetCheck[] {
  return (['1', 'all'] as const).map((acks) => {
    const c = caseName(acks, 0.5);
    const value = (metric: string) => figures.find((f) => f.case === c && f.metric === metric)?.value ?? Number.NaN;
    const p99 = value('p99 ms');
    const p999 = value('p99.9 ms');
    return {
      target: `end-to-end p99 ≤ 2 ms and p99.9 ≤ 5 ms at 50% of maximum load (acks=${acks})`,
      met: p99 <= 2 && p999 <= 5,
      figure: `end to end p99 ${p99.toFixed(2)} ms, p99.9 ${p999.toFixed(2)} ms (produce to acknowledgement: p99 ${value('ack p99 ms').toFixed(2)} ms, p99.9 ${value('ack p99.9 ms').toFixed(2)} ms) at ${Math.round(value('records/s'))} records/s`,
      ...(p99 <= 2 && p999 <= 5
        ? {}
        : {
            note: 'what holds the tail: bench/RESULTS.md, "Issue 26: latency at 25/50/75% of max load, and what makes its tail" (bench/latency-breakdown.ts)',
          }),
    };
  });
}

const latency: Workload = {
  name: 'latency',
  order: 30,
  title: 'End-to-end latency at 25/50/75% of the maximum produce rate',
  description:
    'rdkafka-perf e2e: a librdkafka producer sends 1 KiB records at a fixed rate (linger.ms=0, Nagle off) to one partition and a consumer in the same process (assigned at the end offset, fetch.wait.max.ms 500) timestamps each on receipt; the rate is 25/50/75% of the maximum that `rdkafka-perf produce` (linger 5 ms, 1 MB batches) reached on the same broker just before. p50/p99/p99.9 are produce() to receipt; "ack" columns are produce() to the delivery report of the same records.',
  systems: ['fjord'],
  primary: 'p99 ms',
  async run(ctx: SuiteContext) {
    const rdkafkaPerf = await ctx.tool('rdkafka-perf');
    const h: Harness = { rdkafkaPerf, exec: (c, a, o) => ctx.exec(c, a, o), command: (l) => ctx.command(l) };
    const samples: Sample[] = [];
    for (const repeat of ctx.repeatIndices()) {
      const fjord = await ctx.startFjord();
      try {
        ctx.log(`latency: repeat ${repeat + 1}/${ctx.repeats}`);
        samples.push(
          ...(await latencyRepeat(h, fjord, {
            maxRecords: ctx.quick ? 50_000 : 200_000,
            seconds: ctx.quick ? 2 : 5,
            warmupSeconds: ctx.quick ? 1 : 2,
            tag: String(repeat),
          })),
        );
      } finally {
        await fjord.stop();
      }
    }
    const figures = ctx.medians(samples);
    return {
      figures,
      targets: latencyTargets(figures),
      notes: ["Fjord only: NATS JetStream and Redis Streams have no end-to-end mode in this suite's load generators yet."],
    };
  },
};

export default latency;
