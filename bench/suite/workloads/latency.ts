/**
 * Issue 26's latency workload: produce latency (produce() to the acknowledgement) and end-to-end
 * latency (produce() to a consumer's receipt; one process, one monotonic clock: `rdkafka-perf
 * e2e`) of 1 KiB records to one partition at 25, 50 and 75% of the maximum load, for acks=1 and
 * acks=all, on one broker. Judges the target "produce p99 ≤ 2 ms and p99.9 ≤ 5 ms at 50% of the
 * maximum load" on the acknowledgement figures, as the issue words it; end to end stands beside.
 *
 * The maximum is the highest rate the latency configuration itself sustains (`sustainedMaxRate`:
 * the same client, linger.ms=0, Nagle off, the same acks, its consumer running), found by a short
 * ramp and bisection: a rate is carried when the rate sent reaches it and both the
 * acknowledgements and the consumer finish within a moment of the last send. It used to be the
 * rate of a batching producer (linger 5 ms, 1 MB batches); half of that was more single-record
 * requests than the linger-0 client can send on two cores beside the broker and its own consumer,
 * so the client queued, and the figures measured the client's queue, not the broker.
 *
 * Beside each percentile the table says where the time went in the same window: the broker's own
 * Produce time (its request metrics, Kafka's RequestMetrics TotalTimeMs, scraped from the
 * metrics listener before and after and read off the difference of the histograms' buckets) and
 * the client's (librdkafka's statistics: int_latency, time in the producer's partition queue;
 * outbuf_latency, in the connection's output buffer; rtt, request written to response read).
 *
 * The measuring steps are plain functions (`sustainedMaxRate`, `e2eLatency`, `brokerProduceTimes`)
 * so bench/latency-breakdown.ts runs them against brokers it starts itself (other builds, node
 * flags, profiles).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { freePort } from '../../free-port.js';
import type { ExecResult, FjordHandle, Sample, SuiteContext, TargetCheck, Workload } from '../workload.js';

export const RECORD_BYTES = 1024;
export const LOAD_SHARES = [0.25, 0.5, 0.75] as const;

/** What the measuring functions need: the harness binary and a way to run it. */
export interface Harness {
  rdkafkaPerf: string;
  exec(cmd: string, args: readonly string[], options?: { timeoutMs?: number }): Promise<ExecResult>;
  command?(line: string): void;
}

/** p50/p99/p99.9/max of one latency, ms. */
export interface Percentiles {
  p50: number;
  p99: number;
  p999: number;
  max: number;
}

/** librdkafka's per-second statistics inside the window: the worst second's p99 and p99.99, ms. */
export interface ClientStat {
  p99: number;
  p9999: number;
}

export interface E2eResult {
  /** The rate actually sent (records/s). */
  rate: number;
  records: number;
  received: number;
  failed: number;
  ack: Percentiles;
  e2e: Percentiles;
  /** From the last send to the last acknowledgement and to the last receipt, ms. */
  ackDrainMs: number;
  e2eDrainMs: number;
  /** The producer's partition queue, the connection's output buffer, and the round trip. */
  client: { queue: ClientStat; outbuf: ClientStat; rtt: ClientStat };
}

async function runJson(h: Harness, args: string[], timeoutMs: number): Promise<Record<string, number | null>> {
  h.command?.(`rdkafka-perf ${args.join(' ')}`);
  const r = await h.exec(h.rdkafkaPerf, args, { timeoutMs });
  const last = r.stdout.trim().split('\n').pop() ?? '';
  if (r.code !== 0 || !last.startsWith('{')) throw new Error(`rdkafka-perf ${args[0]} failed (${r.code}): ${r.stderr.trim().split('\n').pop() ?? ''}`);
  return JSON.parse(last) as Record<string, number | null>;
}

/**
 * Latency at a fixed `rate` for `seconds` after `warmupSeconds` (left out of the figures).
 * linger.ms=0 and Nagle off: the producer sends as soon as it can, batching only what queued
 * while a request was in flight.
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
  const pick = (prefix: string): Percentiles => ({
    p50: Number(out[`${prefix}_p50_ms`]),
    p99: Number(out[`${prefix}_p99_ms`]),
    p999: Number(out[`${prefix}_p999_ms`]),
    max: Number(out[`${prefix}_max_ms`]),
  });
  const stat = (name: string): ClientStat => ({ p99: Number(out[`${name}_p99_ms`]), p9999: Number(out[`${name}_p9999_ms`]) });
  return {
    rate: Number(out.rate),
    records: Number(out.records),
    received: Number(out.received),
    failed: Number(out.failed),
    ack: pick('ack'),
    e2e: pick('e2e'),
    ackDrainMs: Number(out.ack_drain_ms),
    e2eDrainMs: Number(out.e2e_drain_ms),
    client: { queue: stat('int_latency'), outbuf: stat('outbuf_latency'), rtt: stat('rtt') },
  };
}

/** How long after the last send the last acknowledgement and receipt may come for a rate to count as carried. */
export const DRAIN_LIMIT_MS = 200;

/**
 * Whether the client carried `target`: it sent at the rate (within 3%), nothing failed or went
 * missing, and both the acknowledgements and the consumer caught up within DRAIN_LIMIT_MS of the
 * last send. A client that falls behind queues, and its queue drains for as long as it grew.
 */
export function carried(target: number, r: E2eResult): boolean {
  return (
    r.rate >= 0.97 * target &&
    r.failed === 0 &&
    r.received === r.records &&
    r.ackDrainMs <= DRAIN_LIMIT_MS &&
    r.e2eDrainMs >= 0 &&
    r.e2eDrainMs <= DRAIN_LIMIT_MS
  );
}

export interface RampStep {
  target: number;
  sent: number;
  ok: boolean;
}

/**
 * The highest rate the latency configuration carries (`carried`), with its steps: doubling from
 * `start` until a rate is not carried (halving first if `start` is not), then `bisections`
 * geometric bisections between the last carried rate and the first that was not. Each step is a
 * short `e2eLatency` run on `topic` (its consumer starts at the end offset, so one topic serves all).
 */
export async function sustainedMaxRate(
  h: Harness,
  bootstrap: string,
  topic: string,
  acks: '1' | 'all',
  opts: { start: number; seconds: number; warmupSeconds: number; bisections: number; log?: (line: string) => void },
): Promise<{ rate: number; steps: RampStep[] }> {
  const steps: RampStep[] = [];
  const attempt = async (target: number): Promise<boolean> => {
    const r = await e2eLatency(h, bootstrap, topic, acks, target, opts.seconds, opts.warmupSeconds);
    const ok = carried(target, r);
    steps.push({ target, sent: r.rate, ok });
    opts.log?.(
      `  acks=${acks} ${Math.round(target)} rec/s: ${ok ? 'carried' : 'not carried'} (sent ${Math.round(r.rate)}/s, drain ack ${r.ackDrainMs.toFixed(0)} ms, e2e ${r.e2eDrainMs.toFixed(0)} ms, ack p99 ${r.ack.p99.toFixed(2)} ms)`,
    );
    return ok;
  };
  let lo = 0;
  let hi = 0;
  if (await attempt(opts.start)) {
    lo = opts.start;
    for (let rate = opts.start * 2; rate <= 4_000_000; rate *= 2) {
      if (!(await attempt(rate))) {
        hi = rate;
        break;
      }
      lo = rate;
    }
    if (hi === 0) return { rate: lo, steps };
  } else {
    hi = opts.start;
    for (let rate = opts.start / 2; rate >= 500; rate /= 2) {
      if (await attempt(rate)) {
        lo = rate;
        break;
      }
      hi = rate;
    }
    if (lo === 0) throw new Error(`acks=${acks}: no rate down to ${hi} records/s was carried`);
  }
  for (let i = 0; i < opts.bisections; i++) {
    const mid = Math.round(Math.sqrt(lo * hi));
    if (await attempt(mid)) lo = mid;
    else hi = mid;
  }
  return { rate: lo, steps };
}

/**
 * The broker's Produce request times (TotalTimeMs: frame complete to answer handed to the
 * socket) as cumulative bucket counts by upper bound in ms, scraped from the metrics listener's
 * fjord_network_request_total_time_seconds histogram.
 */
export async function scrapeProduceTimes(metricsUrl: string): Promise<Map<number, number>> {
  const res = await fetch(`${metricsUrl}/metrics`);
  if (!res.ok) throw new Error(`scraping ${metricsUrl}/metrics: HTTP ${res.status}`);
  const text = await res.text();
  const buckets = new Map<number, number>();
  const line = /^fjord_network_request_total_time_seconds_bucket\{([^}]*)\} ([\d.e+]+)$/gm;
  for (const m of text.matchAll(line)) {
    if (!/\brequest="Produce"/.test(m[1]!)) continue;
    const le = /\ble="([^"]+)"/.exec(m[1]!)?.[1];
    if (le !== undefined) buckets.set(le === '+Inf' ? Number.POSITIVE_INFINITY : Number(le) * 1000, Number(m[2]));
  }
  return buckets;
}

/**
 * The q-quantile (ms) of the requests between two scrapes, interpolated linearly inside its
 * bucket (the buckets are coarse: …, 0.5, 1, 2.5, 5, 10 ms, …); NaN without requests.
 */
export function windowQuantile(before: Map<number, number>, after: Map<number, number>, q: number): number {
  const bounds = [...after.keys()].sort((a, b) => a - b);
  const total = (after.get(Number.POSITIVE_INFINITY) ?? 0) - (before.get(Number.POSITIVE_INFINITY) ?? 0);
  if (total <= 0) return Number.NaN;
  const rank = q * total;
  let prevBound = 0;
  let prevCum = 0;
  for (const b of bounds) {
    const cum = (after.get(b) ?? 0) - (before.get(b) ?? 0);
    if (cum >= rank) {
      if (!Number.isFinite(b)) return prevBound;
      return prevBound + ((b - prevBound) * (rank - prevCum)) / Math.max(1, cum - prevCum);
    }
    prevBound = b;
    prevCum = cum;
  }
  return prevBound;
}

/** Latency at `rate` with the broker's Produce times of the same run, when a metrics listener is given. */
export async function measuredLatency(
  h: Harness,
  bootstrap: string,
  metricsUrl: string | undefined,
  topic: string,
  acks: '1' | 'all',
  rate: number,
  seconds: number,
  warmupSeconds: number,
): Promise<E2eResult & { broker: { p99: number; p999: number } }> {
  // The first scrape when the harness's warm-up ends (timed from its start: within the few ms it
  // takes to start and query the end offset), so both sides count the same seconds.
  const before = metricsUrl ? sleep(warmupSeconds * 1000).then(() => scrapeProduceTimes(metricsUrl)) : undefined;
  const r = await e2eLatency(h, bootstrap, topic, acks, rate, seconds, warmupSeconds);
  const after = metricsUrl ? await scrapeProduceTimes(metricsUrl) : undefined;
  const broker =
    before && after
      ? { p99: windowQuantile(await before, after, 0.99), p999: windowQuantile(await before, after, 0.999) }
      : { p99: Number.NaN, p999: Number.NaN };
  return { ...r, broker };
}

/** The row name of one measurement. */
export function caseName(acks: '1' | 'all', share: number): string {
  return `1 KiB, 1 partition, acks=${acks}, ${Math.round(share * 100)}% of max`;
}

/** One broker, one repeat: the sustained maximum per acks, then latency at each share of it. */
export async function latencyRepeat(
  h: Harness,
  fjord: Pick<FjordHandle, 'bootstrap' | 'createTopic' | 'deleteTopic'>,
  metricsUrl: string | undefined,
  opts: {
    seconds: number;
    warmupSeconds: number;
    ramp: { start: number; seconds: number; warmupSeconds: number; bisections: number };
    tag: string;
    log?: (line: string) => void;
  },
): Promise<Sample[]> {
  const samples: Sample[] = [];
  for (const acks of ['1', 'all'] as const) {
    const maxTopic = `latency-max-${acks}-${opts.tag}`;
    await fjord.createTopic(maxTopic, 1);
    const max = await sustainedMaxRate(h, fjord.bootstrap, maxTopic, acks, { ...opts.ramp, ...(opts.log ? { log: opts.log } : {}) });
    await fjord.deleteTopic(maxTopic);
    samples.push({ case: `1 KiB, 1 partition, acks=${acks}, maximum`, system: 'fjord', metric: 'records/s', value: max.rate, higherIsBetter: true });
    for (const share of LOAD_SHARES) {
      const topic = `latency-e2e-${acks}-${Math.round(share * 100)}-${opts.tag}`;
      await fjord.createTopic(topic, 1);
      const r = await measuredLatency(h, fjord.bootstrap, metricsUrl, topic, acks, max.rate * share, opts.seconds, opts.warmupSeconds);
      await fjord.deleteTopic(topic);
      const c = caseName(acks, share);
      const add = (metric: string, value: number, higherIsBetter = false) => samples.push({ case: c, system: 'fjord', metric, value, higherIsBetter });
      add('records/s', r.rate, true);
      add('ack p50 ms', r.ack.p50);
      add('ack p99 ms', r.ack.p99);
      add('ack p99.9 ms', r.ack.p999);
      add('e2e p50 ms', r.e2e.p50);
      add('e2e p99 ms', r.e2e.p99);
      add('e2e p99.9 ms', r.e2e.p999);
      if (metricsUrl) {
        add('broker Produce p99 ms', r.broker.p99);
        add('broker Produce p99.9 ms', r.broker.p999);
      }
      add('client queue p99 ms', r.client.queue.p99);
      add('client outbuf p99 ms', r.client.outbuf.p99);
      add('client rtt p99 ms', r.client.rtt.p99);
      add('lost records', r.records - r.received);
    }
  }
  return samples;
}

/** The target at 50% of max: produce (acknowledgement) p99 ≤ 2 ms and p99.9 ≤ 5 ms, for each acks. */
export function latencyTargets(figures: readonly { case: string; metric: string; value: number }[]): TargetCheck[] {
  return (['1', 'all'] as const).map((acks) => {
    const c = caseName(acks, 0.5);
    const value = (metric: string) => figures.find((f) => f.case === c && f.metric === metric)?.value ?? Number.NaN;
    const ms = (metric: string) => value(metric).toFixed(2);
    const max = figures.find((f) => f.case === `1 KiB, 1 partition, acks=${acks}, maximum`)?.value ?? Number.NaN;
    const p99 = value('ack p99 ms');
    const p999 = value('ack p99.9 ms');
    const met = p99 <= 2 && p999 <= 5;
    return {
      target: `produce p99 ≤ 2 ms and p99.9 ≤ 5 ms at 50% of maximum load (acks=${acks})`,
      met,
      figure:
        `produce to acknowledgement p99 ${ms('ack p99 ms')} ms, p99.9 ${ms('ack p99.9 ms')} ms at ${Math.round(value('records/s'))} records/s ` +
        `(50% of ${Math.round(max)}, the most the latency client carried); broker Produce time p99 ${ms('broker Produce p99 ms')} ms, ` +
        `p99.9 ${ms('broker Produce p99.9 ms')} ms; client queue p99 ${ms('client queue p99 ms')} ms, round trip p99 ${ms('client rtt p99 ms')} ms; ` +
        `end to end p99 ${ms('e2e p99 ms')} ms, p99.9 ${ms('e2e p99.9 ms')} ms`,
      ...(met
        ? {}
        : {
            note: 'where the tail lives: the broker and client figures beside it; bench/RESULTS.md, "Issue 26: latency, measured at the load the latency client carries" (bench/latency-breakdown.ts)',
          }),
    };
  });
}

const latency: Workload = {
  name: 'latency',
  order: 30,
  title: 'Produce and end-to-end latency at 25/50/75% of the maximum the latency client carries',
  description:
    'rdkafka-perf e2e: a librdkafka producer sends 1 KiB records at a fixed rate (linger.ms=0, Nagle off) to one partition and a consumer in the same process (assigned at the end offset, fetch.wait.max.ms 500) timestamps each on receipt. The maximum is the highest rate this same client carries (doubling from 50,000 records/s, or halving if that is not carried, then two bisections; 1 s steps after 1 s of warm-up; carried: sent at the rate, and both the acknowledgements and the consumer caught up within 200 ms of the last send), so the shares load the broker, not the client\'s queue. "ack" is produce() to the delivery report (the target\'s figure), "e2e" produce() to receipt; "broker Produce" is the broker\'s own Produce TotalTimeMs over the same seconds (its request histogram scraped before and after; coarse buckets 0.5/1/2.5/5/10 ms, interpolated); "client queue", "outbuf" and "rtt" are librdkafka\'s int_latency, outbuf_latency and rtt statistics (the worst second\'s p99).',
  systems: ['fjord'],
  primary: 'ack p99 ms',
  async run(ctx: SuiteContext) {
    const rdkafkaPerf = await ctx.tool('rdkafka-perf');
    const h: Harness = { rdkafkaPerf, exec: (c, a, o) => ctx.exec(c, a, o), command: (l) => ctx.command(l) };
    const samples: Sample[] = [];
    for (const repeat of ctx.repeatIndices()) {
      const metricsUrl = `http://127.0.0.1:${await freePort()}`;
      const fjord = await ctx.startFjord({ 'metrics.listener': metricsUrl });
      try {
        ctx.log(`latency: repeat ${repeat + 1}/${ctx.repeats}`);
        samples.push(
          ...(await latencyRepeat(h, fjord, metricsUrl, {
            // The broker is warm from the ramp: 1 s of warm-up is the client's connection and JIT.
            seconds: ctx.quick ? 2 : 4,
            warmupSeconds: 1,
            ramp: { start: 50_000, seconds: 1, warmupSeconds: 1, bisections: ctx.quick ? 1 : 2 },
            tag: String(repeat),
            log: (l) => ctx.log(l),
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
