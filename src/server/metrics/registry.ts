/**
 * The broker's metrics registry (prom-client). One Registry per Broker, never prom-client's
 * global one: tests run several brokers in one process, and each must serve only its own.
 *
 * The rule every metrics file follows: prom-client is imported under src/server/metrics/ only.
 * Hot paths in lower layers (storage, replication, coordinators, controller) keep plain number
 * fields or small stats objects that they update without allocating; the files here read them
 * when Prometheus scrapes (a collect() callback, or a gauge's collect), so a request pays no
 * label hashing or map lookup for metrics.
 */
import { Registry } from 'prom-client';

export type MetricsRegistry = Registry;

export function createMetricsRegistry(): MetricsRegistry {
  return new Registry();
}
