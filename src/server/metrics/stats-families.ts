/**
 * Metric families whose samples are built at scrape time from plain stats (request, topic,
 * connection and quota metrics; the broker-state ones: replica manager, controller, logs,
 * ZooKeeper, coordinators): prom-client Counter, Gauge, Summary and Histogram subclasses
 * whose get() returns what a callback builds, so a request pays nothing for metrics and a scrape
 * does one pass over the stats without label hashing. Their text is written by formatSamples
 * below (as prom-client writes it, with far less garbage per scrape); get() serves the JSON view.
 */
import { Counter, Gauge, Histogram, Summary } from 'prom-client';
import type { MetricsRegistry } from './registry.js';
import type { PreformattedFamily } from './registry.js';

/** One line of a family: labels and value (metricName for a summary's or histogram's `_sum`, `_count`, `_bucket`). */
export interface Sample {
  value: number;
  labels: Record<string, string | number>;
  metricName?: string;
}

/** Built at scrape time; a promise where they come from other threads (num.io.threads > 1: replica-metrics.ts). */
type Samples = () => Sample[] | Promise<Sample[]>;

class StatsGauge extends Gauge<string> {
  constructor(
    registry: MetricsRegistry,
    name: string,
    help: string,
    private readonly samples: Samples,
  ) {
    super({ name, help, registers: [registry] });
  }

  override async get(): ReturnType<Gauge<string>['get']> {
    return { ...(await super.get()), values: await this.samples() };
  }
}

class StatsCounter extends Counter<string> {
  constructor(
    registry: MetricsRegistry,
    name: string,
    help: string,
    private readonly samples: Samples,
  ) {
    super({ name, help, registers: [registry] });
  }

  override async get(): ReturnType<Counter<string>['get']> {
    return { ...(await super.get()), values: await this.samples() };
  }
}

class StatsSummary extends Summary<string> {
  constructor(
    registry: MetricsRegistry,
    name: string,
    help: string,
    private readonly samples: Samples,
  ) {
    super({ name, help, registers: [registry], percentiles: [] });
  }

  override async get(): ReturnType<Summary<string>['get']> {
    return { ...(await super.get()), values: await this.samples() };
  }
}

const HISTOGRAM_FOR_PROM_STRING: unknown = (Histogram.prototype as unknown as { getForPromString: unknown }).getForPromString;

class StatsHistogram extends Histogram<string> {
  constructor(
    registry: MetricsRegistry,
    name: string,
    help: string,
    private readonly samples: Samples,
  ) {
    super({ name, help, registers: [registry], buckets: [] });
  }

  /**
   * The registry formats a histogram from this (prom-client's own, absent from its types), and
   * get() builds on it: the base's family with our samples.
   */
  async getForPromString(): ReturnType<Histogram<string>['get']> {
    const base = await (HISTOGRAM_FOR_PROM_STRING as (this: Histogram<string>) => ReturnType<Histogram<string>['get']>).call(this);
    return { ...base, values: await this.samples() };
  }

  /** The JSON view (getMetricsAsJSON): our samples carry their labels whole, with no sharedLabels for the base's get() to splay. */
  override async get(): ReturnType<Histogram<string>['get']> {
    return this.getForPromString();
  }
}

// Every family built here writes its text with formatSamples (registry.ts, PreformattedFamily):
// prom-client's generic formatting made about ten times the garbage per line, which a broker
// scraped every few seconds keeps paying while it serves traffic.

export function statsGauge(registry: MetricsRegistry, name: string, help: string, samples: Samples): void {
  preformattedStats(registry, 'gauge', name, help, samples);
}

/** A running total kept elsewhere (the JMX exporter's `_total` meters). */
export function statsCounter(registry: MetricsRegistry, name: string, help: string, samples: Samples): void {
  preformattedStats(registry, 'counter', name, help, samples);
}

/** Quantile lines (`name{quantile=..}`) with `name_sum` and `name_count`. */
export function statsSummary(registry: MetricsRegistry, name: string, help: string, samples: Samples): void {
  preformattedStats(registry, 'summary', name, help, samples);
}

/** `name_bucket{le=..}`, `name_sum`, `name_count`. */
export function statsHistogram(registry: MetricsRegistry, name: string, help: string, samples: Samples): void {
  preformattedStats(registry, 'histogram', name, help, samples);
}

const NO_LABELS: Record<string, string | number> = Object.freeze({}) as Record<string, string | number>;

/** A single unlabelled sample. */
export function one(value: number): Sample[] {
  return [{ value, labels: NO_LABELS }];
}

/** A count and a sum of milliseconds kept elsewhere, as a summary without quantiles (`name_count`, `name_sum`). */
export function statsTimer(registry: MetricsRegistry, name: string, help: string, totals: () => { count: number; sumMs: number }): void {
  statsSummary(registry, name, help, () => {
    const t = totals();
    return [
      { metricName: `${name}_sum`, value: t.sumMs, labels: NO_LABELS },
      { metricName: `${name}_count`, value: t.count, labels: NO_LABELS },
    ];
  });
}

/** A family's text as prom-client's registry writes it (Prometheus format), without its per-line generic label code. */
export function formatSamples(name: string, help: string, type: string, samples: readonly Sample[]): string {
  let out = `# HELP ${name} ${escapeText(help)}\n# TYPE ${name} ${type}`;
  for (const s of samples) {
    out += `\n${s.metricName ?? name}`;
    let labelled = false;
    for (const label in s.labels) {
      const v = s.labels[label]!;
      out += `${labelled ? ',' : '{'}${label}="${typeof v === 'string' ? labelText(v) : v}"`;
      labelled = true;
    }
    out += `${labelled ? '}' : ''} ${valueText(s.value)}`;
  }
  return out;
}

const escapeText = (s: string): string => (s.includes('\\') || s.includes('\n') ? s.replace(/\\/g, '\\\\').replace(/\n/g, '\\n') : s);
/** A label value as the text format quotes it (backslash, newline and double quote escaped). */
export const labelText = (v: string): string => (v.includes('"') ? escapeText(v).replace(/"/g, '\\"') : escapeText(v));
/** A sample's value as prom-client writes it. */
export const valueText = (v: number): string => (Number.isNaN(v) ? 'Nan' : v === Infinity ? '+Inf' : v === -Infinity ? '-Inf' : `${v}`);

/**
 * A stats family whose text the registry takes from formatSamples (registry.ts,
 * PreformattedFamily), about ten times faster than prom-client's formatting and with a tenth of
 * its garbage; the JSON view is the same family's get(). `lines`, when given (families of
 * thousands of lines, e.g. request metrics: a histogram per API and time part), writes the sample
 * lines (joined by newlines) straight from the stats, without building Sample objects: it must
 * write what formatSamples would write of `samples`.
 */
export function preformattedStats(
  registry: MetricsRegistry,
  type: 'gauge' | 'counter' | 'summary' | 'histogram',
  name: string,
  help: string,
  samples: Samples,
  lines?: () => string,
): void {
  const family =
    type === 'gauge'
      ? new StatsGauge(registry, name, help, samples)
      : type === 'counter'
        ? new StatsCounter(registry, name, help, samples)
        : type === 'summary'
          ? new StatsSummary(registry, name, help, samples)
          : new StatsHistogram(registry, name, help, samples);
  const header = `# HELP ${name} ${escapeText(help)}\n# TYPE ${name} ${type}`;
  const written = (): string => {
    const body = lines!();
    return body === '' ? header : `${header}\n${body}`;
  };
  const text: PreformattedFamily = {
    preformattedText: () => {
      if (lines) return Promise.resolve(written());
      const got = samples();
      // Only the families fed by shard workers wait; the others format in the same call, as before.
      return got instanceof Promise ? got.then((s) => formatSamples(name, help, type, s)) : Promise.resolve(formatSamples(name, help, type, got));
    },
  };
  Object.assign(family, text);
}
