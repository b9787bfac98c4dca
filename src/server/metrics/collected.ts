/**
 * Metric families whose samples are read at scrape time from plain stats (the broker-state
 * metrics: replica manager, controller, logs, ZooKeeper, coordinators). Each is a prom-client
 * Gauge, Counter or Summary whose get() returns the samples a callback builds, so a scrape pays
 * one pass over the source and no label hashing: with 10,000 partitions, setting labelled gauge
 * children would hash 10,000 label sets per family per scrape (prom-client's hashObject), where
 * this builds one plain object per sample, which the registry formats as it does any other.
 */
import { Counter, Gauge, Summary } from 'prom-client';
import type { MetricsRegistry } from './registry.js';

/** One line of a family: its labels and value (metricName for a summary's `_sum` / `_count`). */
export interface Sample {
  value: number;
  labels: Record<string, string | number>;
  metricName?: string;
}

const NO_LABELS: Record<string, string | number> = Object.freeze({}) as Record<string, string | number>;

/** A single unlabelled sample. */
export function one(value: number): Sample[] {
  return [{ value, labels: NO_LABELS }];
}

interface Family {
  name: string;
  help: string;
  samples: () => Sample[];
}

class CollectedGauge extends Gauge<string> {
  constructor(
    registry: MetricsRegistry,
    private readonly family: Family,
  ) {
    super({ name: family.name, help: family.help, registers: [registry] });
  }

  override async get(): ReturnType<Gauge<string>['get']> {
    return { ...(await super.get()), values: this.family.samples() };
  }
}

class CollectedCounter extends Counter<string> {
  constructor(
    registry: MetricsRegistry,
    private readonly family: Family,
  ) {
    super({ name: family.name, help: family.help, registers: [registry] });
  }

  override async get(): ReturnType<Counter<string>['get']> {
    return { ...(await super.get()), values: this.family.samples() };
  }
}

class CollectedSummary extends Summary<string> {
  constructor(
    registry: MetricsRegistry,
    private readonly family: Family,
  ) {
    super({ name: family.name, help: family.help, registers: [registry], percentiles: [] });
  }

  override async get(): ReturnType<Summary<string>['get']> {
    return { ...(await super.get()), values: this.family.samples() };
  }
}

export function collectedGauge(registry: MetricsRegistry, name: string, help: string, samples: () => Sample[]): void {
  new CollectedGauge(registry, { name, help, samples });
}

/** A counter whose value is a running total kept elsewhere (name ends in `_total`, as the JMX exporter's meters). */
export function collectedCounter(registry: MetricsRegistry, name: string, help: string, samples: () => Sample[]): void {
  new CollectedCounter(registry, { name, help, samples });
}

/** A count and a sum of milliseconds kept elsewhere, as a summary without quantiles (`name_count`, `name_sum`). */
export function collectedTimer(registry: MetricsRegistry, name: string, help: string, totals: () => { count: number; sumMs: number }): void {
  new CollectedSummary(registry, {
    name,
    help,
    samples: () => {
      const t = totals();
      return [
        { metricName: `${name}_sum`, value: t.sumMs, labels: NO_LABELS },
        { metricName: `${name}_count`, value: t.count, labels: NO_LABELS },
      ];
    },
  });
}
