/**
 * Request metrics under the names the Prometheus JMX exporter's Kafka rules give Kafka's
 * kafka.network:type=RequestMetrics MBeans, read from RequestStats (request-stats.ts) at scrape:
 * - kafka_network_requestmetrics_requests_total{request,version} and _errors_total{request,error};
 * - each time part as the JMX exporter shows a Kafka histogram, so dashboards work unchanged:
 *   kafka_network_requestmetrics_totaltimems{request,quantile="0.50".."0.999"} with _count (and
 *   _sum, which the exporter lacks), typed summary;
 * - the same parts as true Prometheus histograms (aggregatable across brokers, any quantile with
 *   histogram_quantile): fjord_network_request_<part>_time_seconds_bucket{request,le}.
 *
 * Both come from one fixed-bucket histogram per API and part (no sample reservoir). The quantile
 * lines are interpolated within buckets over a recent window (the last one to two minutes, as
 * Kafka's exponentially decaying histograms favour recent requests); _count, _sum and the true
 * histograms are cumulative.
 */
import { errorName } from '../../protocol/errors.js';
import type { MetricsRegistry } from './registry.js';
import { API_SLOTS, BUCKETS, BUCKET_BOUNDS_MS, type RequestStats, TIME_PARTS, type TimeHistograms, type TimePart } from './request-stats.js';
import { type Sample, labelText, preformattedStats, valueText } from './stats-families.js';

/** Kafka's MBean names of the parts (lower-cased as the exporter does) and the histogram family names. */
const JMX_NAMES: Readonly<Record<TimePart, string>> = {
  requestQueue: 'requestqueuetimems',
  local: 'localtimems',
  remote: 'remotetimems',
  throttle: 'throttletimems',
  responseQueue: 'responsequeuetimems',
  responseSend: 'responsesendtimems',
  total: 'totaltimems',
};
const HISTOGRAM_NAMES: Readonly<Record<TimePart, string>> = {
  requestQueue: 'request_queue',
  local: 'local',
  remote: 'remote',
  throttle: 'throttle',
  responseQueue: 'response_queue',
  responseSend: 'response_send',
  total: 'total',
};
const HELP: Readonly<Record<TimePart, string>> = {
  requestQueue: 'time from the request frame being complete to its handler starting',
  local: "time of the handler's own work on the event loop (decode, handle, encode)",
  remote: 'time waiting on others: replication (acks=all), long-polling fetches, disk, other brokers',
  throttle: 'quota throttle time applied to the request',
  responseQueue: 'time from the answer being ready to its turn on the connection (answers go in request order)',
  responseSend: 'time handing the answer to the socket',
  total: 'time from the request frame being complete to its answer handed to the socket',
};

/** Kafka's Yammer histogram percentiles, as the exporter labels them. */
const QUANTILES: readonly [number, string][] = [
  [0.5, '0.50'],
  [0.75, '0.75'],
  [0.95, '0.95'],
  [0.98, '0.98'],
  [0.99, '0.99'],
  [0.999, '0.999'],
];
const LE_SECONDS = [...BUCKET_BOUNDS_MS.map((ms) => String(ms / 1000)), '+Inf'];
/** The quantile window: counts since the older of two snapshots taken a minute apart. */
const WINDOW_MS = 60_000;

export function registerRequestMetrics(registry: MetricsRegistry, stats: RequestStats, now: () => number = Date.now): void {
  const windows = TIME_PARTS.map((_, i) => new QuantileWindow(stats.times[i]!, now));
  // The API slots with requests, found once per scrape: the registry asks every family in the
  // same turn, so the first finds them and the other fifteen share the list until the next turn.
  let seenSlots: number[] | undefined;
  const seen = (): number[] => {
    if (seenSlots !== undefined) return seenSlots;
    const slots: number[] = [];
    const total = stats.times[TIME_PARTS.indexOf('total')]!;
    const local = stats.times[TIME_PARTS.indexOf('local')]!;
    for (let s = 0; s < API_SLOTS; s++) if (stats.names[s] !== '' && (total.count(s) > 0 || local.count(s) > 0)) slots.push(s);
    seenSlots = slots;
    setImmediate(() => {
      seenSlots = undefined;
    });
    return slots;
  };

  preformattedStats(registry, 'counter', 'kafka_network_requestmetrics_requests_total', 'Requests answered, by API and version (Kafka RequestsPerSec)', () => {
    const out: Sample[] = [];
    for (let s = 0; s < API_SLOTS; s++) {
      if (stats.names[s] === '') continue;
      stats.forEachVersion(s, (version, value) => out.push({ value, labels: { request: stats.names[s]!, version } }));
    }
    return out;
  });
  preformattedStats(
    registry,
    'counter',
    'kafka_network_requestmetrics_errors_total',
    'Error codes in responses, by API and error (Kafka ErrorsPerSec; NONE counts successes)',
    () => {
      const out: Sample[] = [];
      for (let s = 0; s < API_SLOTS; s++) {
        if (stats.names[s] === '') continue;
        stats.forEachError(s, (code, value) => out.push({ value, labels: { request: stats.names[s]!, error: errorName(code) } }));
      }
      return out;
    },
  );

  TIME_PARTS.forEach((part, i) => {
    const h = stats.times[i]!;
    const jmx = `kafka_network_requestmetrics_${JMX_NAMES[part]}`;
    preformattedStats(
      registry,
      'summary',
      jmx,
      `Request ${HELP[part]}, ms (Kafka ${JMX_NAMES[part]}; quantiles over the last 1-2 minutes)`,
      () => {
        const out: Sample[] = [];
        const recent = windows[i]!.recent();
        for (const s of seen()) {
          const request = stats.names[s]!;
          for (const [q, label] of QUANTILES) out.push({ value: quantile(recent, s, q), labels: { request, quantile: label } });
          out.push({ metricName: `${jmx}_sum`, value: h.sums[s]!, labels: { request } });
          out.push({ metricName: `${jmx}_count`, value: h.count(s), labels: { request } });
        }
        return out;
      },
      () => {
        // The same lines written directly: a scrape builds no Sample objects for these families.
        const out: string[] = [];
        const recent = windows[i]!.recent();
        for (const s of seen()) {
          const request = `request="${labelText(stats.names[s]!)}"`;
          for (const [q, label] of QUANTILES) out.push(`${jmx}{${request},quantile="${label}"} ${valueText(quantile(recent, s, q))}`);
          out.push(`${jmx}_sum{${request}} ${valueText(h.sums[s]!)}`, `${jmx}_count{${request}} ${valueText(h.count(s))}`);
        }
        return out.join('\n');
      },
    );
    const hist = `fjord_network_request_${HISTOGRAM_NAMES[part]}_time_seconds`;
    preformattedStats(
      registry,
      'histogram',
      hist,
      `Request ${HELP[part]}, seconds`,
      () => {
        const out: Sample[] = [];
        for (const s of seen()) {
          const request = stats.names[s]!;
          let cumulative = 0;
          for (let b = 0; b < BUCKETS; b++) {
            cumulative += h.counts[s * BUCKETS + b]!;
            out.push({ metricName: `${hist}_bucket`, value: cumulative, labels: { request, le: LE_SECONDS[b]! } });
          }
          out.push({ metricName: `${hist}_sum`, value: h.sums[s]! / 1000, labels: { request } });
          out.push({ metricName: `${hist}_count`, value: cumulative, labels: { request } });
        }
        return out;
      },
      () => {
        const out: string[] = [];
        for (const s of seen()) {
          const request = `request="${labelText(stats.names[s]!)}"`;
          let cumulative = 0;
          for (let b = 0; b < BUCKETS; b++) {
            cumulative += h.counts[s * BUCKETS + b]!;
            out.push(`${hist}_bucket{${request},le="${LE_SECONDS[b]!}"} ${valueText(cumulative)}`);
          }
          out.push(`${hist}_sum{${request}} ${valueText(h.sums[s]! / 1000)}`, `${hist}_count{${request}} ${valueText(cumulative)}`);
        }
        return out.join('\n');
      },
    );
  });

  preformattedStats(registry, 'counter', 'fjord_network_request_bytes_total', 'Request bytes received, by API (without the size prefix)', () =>
    seen().map((s) => ({ value: stats.requestBytes[s]!, labels: { request: stats.names[s]! } })),
  );
  preformattedStats(registry, 'counter', 'fjord_network_response_bytes_total', 'Response bytes sent, by API (without the size prefix)', () =>
    seen().map((s) => ({ value: stats.responseBytes[s]!, labels: { request: stats.names[s]! } })),
  );
}

/** Recent bucket counts of one part: now minus a snapshot one to two minutes old. */
class QuantileWindow {
  private older: Float64Array;
  private newer: Float64Array;
  private newerAt: number;
  private readonly delta: Float64Array;

  constructor(
    private readonly h: TimeHistograms,
    private readonly now: () => number,
  ) {
    this.older = new Float64Array(h.counts.length);
    this.newer = new Float64Array(h.counts.length);
    this.delta = new Float64Array(h.counts.length);
    this.newerAt = now();
  }

  recent(): Float64Array {
    const t = this.now();
    if (t - this.newerAt >= WINDOW_MS) {
      const recycled = this.older;
      this.older = this.newer;
      recycled.set(this.h.counts);
      this.newer = recycled;
      this.newerAt = t;
    }
    const c = this.h.counts;
    for (let i = 0; i < c.length; i++) this.delta[i] = c[i]! - this.older[i]!;
    return this.delta;
  }
}

/** The q-quantile of slot `s`'s buckets, interpolated linearly within its bucket (0 with no requests). */
export function quantile(counts: Float64Array, s: number, q: number): number {
  const base = s * BUCKETS;
  let n = 0;
  for (let b = 0; b < BUCKETS; b++) n += counts[base + b]!;
  if (n === 0) return 0;
  const rank = q * n;
  let seen = 0;
  for (let b = 0; b < BUCKETS; b++) {
    const inBucket = counts[base + b]!;
    if (inBucket > 0 && seen + inBucket >= rank) {
      const lower = b === 0 ? 0 : BUCKET_BOUNDS_MS[b - 1]!;
      if (b >= BUCKET_BOUNDS_MS.length) return lower; // above the last bound: its lower edge
      const upper = BUCKET_BOUNDS_MS[b]!;
      return lower + ((upper - lower) * (rank - seen)) / inBucket;
    }
    seen += inBucket;
  }
  return BUCKET_BOUNDS_MS[BUCKET_BOUNDS_MS.length - 1]!;
}
