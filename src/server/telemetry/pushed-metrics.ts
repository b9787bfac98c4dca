/**
 * The latest telemetry each client pushed, turned into Prometheus series for the broker's
 * metrics endpoint (metrics/client-telemetry-metrics.ts writes them out):
 * - names: the OTLP name with every character Prometheus does not allow (dots first of all)
 *   made an underscore, e.g. org.apache.kafka.producer.record.queue.time.avg ->
 *   org_apache_kafka_producer_record_queue_time_avg;
 * - gauges stay gauges; monotonic sums become counters (delta pushes, which Kafka's
 *   GetTelemetrySubscriptions asks for, are accumulated here; cumulative ones taken as pushed);
 *   non-monotonic sums become gauges; explicit-bucket histograms become histograms;
 * - labels: client_id and client_instance_id, then the data point's attributes (names made
 *   Prometheus-safe; one that would shadow those two, or `le`, is left out).
 * A client's series go after a terminating push, when its instance expires, or when no push came
 * for 3 push intervals. At most `maxSeries` series are kept over all clients: a push that would
 * pass it keeps what fits, and the rest is counted in droppedSeries.
 */
import type { AnyValue, KeyValue, Metric, MetricsData, NumberDataPoint } from '../../protocol/otlp/index.js';
import type { TelemetrySink } from './client-instances.js';

export type ExportedType = 'gauge' | 'counter' | 'histogram';

/** One series: its label pairs (escaped later) and value; histograms carry their buckets. */
export interface ExportedSeries {
  readonly labels: readonly (readonly [string, string])[];
  readonly value: number;
  readonly histogram?: { readonly bounds: readonly number[]; readonly counts: readonly number[]; readonly sum: number; readonly count: number };
}

export interface ExportedFamily {
  readonly name: string;
  readonly type: ExportedType;
  readonly help: string;
  readonly series: readonly ExportedSeries[];
}

interface Family {
  type: ExportedType;
  help: string;
  series: Map<string, ExportedSeries>;
}

interface ClientState {
  clientId: string;
  lastPushAt: number;
  pushIntervalMs: number;
  families: Map<string, Family>;
  seriesCount: number;
}

const RESERVED_LABELS = new Set(['client_id', 'client_instance_id', 'le']);

/** An OTLP metric name as a Prometheus metric name. */
export function prometheusName(otlpName: string): string {
  const name = otlpName.replace(/[^a-zA-Z0-9_:]/g, '_');
  return /^[0-9]/.test(name) ? `_${name}` : name;
}

/** An attribute key as a Prometheus label name (no leading "__": reserved for Prometheus). */
export function prometheusLabel(key: string): string {
  const name = key.replace(/[^a-zA-Z0-9_]/g, '_').replace(/^_+/, '_');
  return /^[0-9]/.test(name) ? `_${name}` : name;
}

function attributeText(value: AnyValue): string {
  if (value === null) return '';
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'bigint' || typeof value === 'boolean') return String(value);
  if (value instanceof Uint8Array) return Buffer.from(value).toString('base64');
  if (Array.isArray(value)) return `[${(value as readonly AnyValue[]).map(attributeText).join(',')}]`;
  return `{${(value as { kvlist: readonly KeyValue[] }).kvlist.map((kv) => `${kv.key}=${attributeText(kv.value)}`).join(',')}}`;
}

export class PushedMetrics implements TelemetrySink {
  private readonly clients = new Map<string, ClientState>();
  private totalSeries = 0;
  /** Series left out because the cap was reached (since start). */
  droppedSeries = 0;

  constructor(private readonly maxSeries: number) {}

  record(instance: { clientInstanceId: string; clientId: string; pushIntervalMs: number }, data: MetricsData, now: number): void {
    const previous = this.clients.get(instance.clientInstanceId);
    const budget = this.maxSeries - (this.totalSeries - (previous?.seriesCount ?? 0));
    const base: [string, string][] = [
      ['client_id', instance.clientId],
      ['client_instance_id', instance.clientInstanceId],
    ];
    const state: ClientState = { clientId: instance.clientId, lastPushAt: now, pushIntervalMs: instance.pushIntervalMs, families: new Map(), seriesCount: 0 };
    for (const rm of data.resourceMetrics) {
      for (const sm of rm.scopeMetrics) {
        for (const metric of sm.metrics) {
          state.seriesCount += this.addMetric(state, previous, metric, base, budget - state.seriesCount);
        }
      }
    }
    this.forget(instance.clientInstanceId);
    this.clients.set(instance.clientInstanceId, state);
    this.totalSeries += state.seriesCount;
  }

  forget(clientInstanceId: string): void {
    const state = this.clients.get(clientInstanceId);
    if (!state) return;
    this.totalSeries -= state.seriesCount;
    this.clients.delete(clientInstanceId);
  }

  /** Clients whose series are exported now. */
  get clientCount(): number {
    return this.clients.size;
  }

  /** Every client's current families, merged by name (a name pushed with two types keeps the first). */
  families(now: number): ExportedFamily[] {
    const merged = new Map<string, { type: ExportedType; help: string; series: ExportedSeries[] }>();
    for (const [id, state] of this.clients) {
      if (now - state.lastPushAt > 3 * state.pushIntervalMs) {
        this.forget(id);
        continue;
      }
      for (const [name, family] of state.families) {
        const into = merged.get(name) ?? { type: family.type, help: family.help, series: [] };
        if (into.type !== family.type) continue;
        merged.set(name, into);
        into.series.push(...family.series.values());
      }
    }
    return [...merged].map(([name, f]) => ({ name, ...f }));
  }

  /** Adds one OTLP metric's points (at most `room` series); returns how many series it added. */
  private addMetric(state: ClientState, previous: ClientState | undefined, metric: Metric, base: readonly [string, string][], room: number): number {
    const data = metric.data;
    if (data === undefined || data.dataPoints.length === 0) return 0;
    const name = prometheusName(metric.name);
    const type: ExportedType = data.type === 'histogram' ? 'histogram' : data.type === 'sum' && data.isMonotonic ? 'counter' : 'gauge';
    const existing = state.families.get(name);
    if (existing && existing.type !== type) return 0;
    const family: Family = existing ?? { type, help: metric.description || `Client telemetry metric ${metric.name}.`, series: new Map() };
    state.families.set(name, family);
    const before = previous?.families.get(name);
    const accumulate = data.type !== 'gauge' && data.aggregationTemporality === 'delta';
    let added = 0;
    for (const point of data.dataPoints) {
      // Past the cap nothing is built for a point: a large push costs little more than its decoding.
      if (added >= room) {
        this.droppedSeries++;
        continue;
      }
      const labels = labelsOf(base, point.attributes);
      const key = labels.map(([k, v]) => `${k}=${v}`).join('\u0000');
      const old = accumulate && before?.type === type ? before.series.get(key) : undefined;
      if (!family.series.has(key)) added++;
      if (data.type === 'histogram') {
        const p = point as (typeof data.dataPoints)[number];
        let counts = cumulative(p.bucketCounts);
        let sum = p.sum ?? 0;
        let count = p.count;
        const prior = old?.histogram;
        if (prior && sameBounds(prior.bounds, p.explicitBounds)) {
          counts = counts.map((c, i) => c + (prior.counts[i] ?? 0));
          sum += prior.sum;
          count += prior.count;
        }
        family.series.set(key, { labels, value: count, histogram: { bounds: [...p.explicitBounds], counts, sum, count } });
      } else {
        const value = Number((point as NumberDataPoint).value);
        family.series.set(key, { labels, value: (old?.value ?? 0) + value });
      }
    }
    if (family.series.size === 0) state.families.delete(name);
    return added;
  }
}

function labelsOf(base: readonly [string, string][], attributes: readonly KeyValue[]): [string, string][] {
  const labels: [string, string][] = [...base];
  const seen = new Set<string>(RESERVED_LABELS);
  for (const kv of attributes) {
    const name = prometheusLabel(kv.key);
    if (seen.has(name)) continue;
    seen.add(name);
    labels.push([name, attributeText(kv.value)]);
  }
  return labels;
}

/** OTLP's per-bucket counts as Prometheus's cumulative `le` counts. */
function cumulative(counts: readonly number[]): number[] {
  let total = 0;
  return counts.map((c) => (total += c));
}

function sameBounds(a: readonly number[], b: readonly number[]): boolean {
  return a.length === b.length && a.every((x, i) => x === b[i]);
}
