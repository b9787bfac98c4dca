/**
 * The broker's metrics registry (prom-client). One Registry per Broker, never prom-client's
 * global one: tests run several brokers in one process, and each must serve only its own.
 *
 * The rule every metrics file follows: prom-client is imported under src/server/metrics/ only.
 * Hot paths in lower layers (storage, replication, coordinators, controller) keep plain number
 * fields or small stats objects that they update without allocating; the files here read them
 * when Prometheus scrapes (a collect() callback, or a gauge's collect), so a request pays no
 * label hashing or map lookup for metrics.
 *
 * A family may write its own exposition text (PreformattedFamily): prom-client formats each
 * sample through generic label code (about 4 µs a line here), which at 10,000 partitions and
 * four per-partition families held the event loop 80-200 ms per scrape; the per-partition log
 * families write their lines directly, in slices between which the loop runs (log-metrics.ts,
 * bench/metrics-scrape.ts). Everything else is formatted by prom-client as usual.
 */
import { Registry } from 'prom-client';

export type MetricsRegistry = Registry;

/** A registered metric that writes its whole family (HELP, TYPE and sample lines, no trailing newline). */
export interface PreformattedFamily {
  preformattedText(): Promise<string>;
}

// prom-client 15's Registry.metrics() formats each family with this (undeclared) method.
const formatFamily = (Registry.prototype as unknown as { getMetricsAsString(metric: object): Promise<string> }).getMetricsAsString;

class BrokerRegistry extends Registry {
  getMetricsAsString(metric: object): Promise<string> {
    if ('preformattedText' in metric) return (metric as PreformattedFamily).preformattedText();
    return formatFamily.call(this, metric);
  }
}

export function createMetricsRegistry(): MetricsRegistry {
  return new BrokerRegistry();
}
