/**
 * KIP-714 on the metrics endpoint: the number of client instances (Kafka's client-metrics
 * instance-count, as the JMX exporter names it), the series dropped by
 * metrics.client.telemetry.max.series, and every client's latest pushed metrics re-exported as
 * Prometheus families (server/telemetry/pushed-metrics.ts has the naming and type rules).
 *
 * The pushed families' names are only known at scrape time, so they are written by the
 * instance-count family after its own lines (registry.ts, PreformattedFamily). A pushed name
 * that is one of the broker's own families or sample names is left out: two families of one name
 * would make the whole scrape invalid.
 */
import { Gauge } from 'prom-client';
import type { ClientTelemetry } from '../telemetry/client-instances.js';
import type { ExportedFamily, ExportedSeries, PushedMetrics } from '../telemetry/pushed-metrics.js';
import type { MetricsRegistry, PreformattedFamily } from './registry.js';
import { one, statsCounter } from './stats-families.js';

const INSTANCE_COUNT = 'kafka_server_client_metrics_instance_count';
const INSTANCE_HELP = 'Client instances known to this broker through GetTelemetrySubscriptions and PushTelemetry (client-metrics instance-count).';

function escapeLabel(value: string): string {
  return value.replace(/\\/g, '\\\\').replace(/\n/g, '\\n').replace(/"/g, '\\"');
}

function escapeHelp(help: string): string {
  return help.replace(/\\/g, '\\\\').replace(/\n/g, '\\n');
}

function number(value: number): string {
  if (Number.isNaN(value)) return 'NaN';
  if (value === Number.POSITIVE_INFINITY) return '+Inf';
  if (value === Number.NEGATIVE_INFINITY) return '-Inf';
  return String(value);
}

function labelText(labels: readonly (readonly [string, string])[], extra?: readonly [string, string]): string {
  const all = extra ? [...labels, extra] : labels;
  return `{${all.map(([k, v]) => `${k}="${escapeLabel(v)}"`).join(',')}}`;
}

function seriesLines(name: string, s: ExportedSeries): string[] {
  const h = s.histogram;
  if (!h) return [`${name}${labelText(s.labels)} ${number(s.value)}`];
  const lines = h.bounds.map((le, i) => `${name}_bucket${labelText(s.labels, ['le', number(le)])} ${h.counts[i] ?? 0}`);
  lines.push(`${name}_bucket${labelText(s.labels, ['le', '+Inf'])} ${h.count}`);
  lines.push(`${name}_sum${labelText(s.labels)} ${number(h.sum)}`);
  lines.push(`${name}_count${labelText(s.labels)} ${h.count}`);
  return lines;
}

/** A family's exposition text, without a trailing newline. */
export function familyText(f: ExportedFamily): string {
  const lines = [`# HELP ${f.name} ${escapeHelp(f.help)}`, `# TYPE ${f.name} ${f.type}`];
  for (const s of f.series) lines.push(...seriesLines(f.name, s));
  return lines.join('\n');
}

class ClientTelemetryFamilies extends Gauge<string> implements PreformattedFamily {
  constructor(
    private readonly registry: MetricsRegistry,
    private readonly telemetry: ClientTelemetry,
    private readonly pushed: PushedMetrics,
  ) {
    super({ name: INSTANCE_COUNT, help: INSTANCE_HELP, registers: [registry] });
  }

  async preformattedText(): Promise<string> {
    const own = `# HELP ${INSTANCE_COUNT} ${INSTANCE_HELP}\n# TYPE ${INSTANCE_COUNT} gauge\n${INSTANCE_COUNT} ${this.telemetry.instanceCount}`;
    const pushed = this.pushed.families(Date.now()).filter((f) => !this.isBrokerName(f.name));
    return [own, ...pushed.map(familyText)].join('\n\n');
  }

  /** A broker family's name, or one of its sample names (a histogram's `_bucket`, a summary's `_sum`...). */
  private isBrokerName(name: string): boolean {
    return (
      this.registry.getSingleMetric(name) !== undefined || this.registry.getSingleMetric(name.replace(/_(bucket|sum|count|total|created)$/, '')) !== undefined
    );
  }

  override async get(): ReturnType<Gauge<string>['get']> {
    return { ...(await super.get()), values: one(this.telemetry.instanceCount) };
  }
}

export function registerClientTelemetryMetrics(registry: MetricsRegistry, telemetry: ClientTelemetry, pushed: PushedMetrics): void {
  new ClientTelemetryFamilies(registry, telemetry, pushed);
  statsCounter(
    registry,
    'fjord_client_telemetry_series_dropped_total',
    "Series of clients' pushed metrics left out at metrics.client.telemetry.max.series.",
    () => one(pushed.droppedSeries),
  );
}
