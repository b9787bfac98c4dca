/**
 * The process's own metrics: prom-client's default set (process_cpu_seconds_total,
 * process_resident_memory_bytes, process_open_fds, process_max_fds, process_start_time_seconds,
 * nodejs_eventloop_lag_*_seconds, nodejs_gc_duration_seconds{kind}, nodejs_heap_*_bytes,
 * nodejs_external_memory_bytes, nodejs_active_*, nodejs_version_info), unprefixed so that the
 * usual Node.js dashboards work, plus nodejs_eventloop_utilization_ratio (the share of time the
 * event loop was busy since this registry's previous scrape: performance.eventLoopUtilization).
 *
 * prom-client's GC observer and event-loop histogram cannot be stopped once started, and they
 * hold their metrics, which hold the registry they were created with: created on a broker's
 * registry they would keep every stopped broker (and what its collect callbacks reach) alive in
 * a process that starts many (the tests). So they are created once per process, on a private
 * registry, and each broker's registry registers the same metric objects. They describe the
 * process, which is the same for every broker in it.
 */
import { performance, type EventLoopUtilization } from 'node:perf_hooks';
import { collectDefaultMetrics, Gauge, Registry } from 'prom-client';
import type { MetricsRegistry } from './registry.js';

export const EVENT_LOOP_UTILIZATION = 'nodejs_eventloop_utilization_ratio';

let processRegistry: Registry | undefined;

function processWide(): Registry {
  if (!processRegistry) {
    processRegistry = new Registry();
    collectDefaultMetrics({ register: processRegistry });
  }
  return processRegistry;
}

/** Registers the process metrics on a broker's registry (again on the same registry: nothing). */
export function registerProcessMetrics(registry: MetricsRegistry): void {
  if (registry.getSingleMetric(EVENT_LOOP_UTILIZATION)) return;
  const shared = processWide();
  for (const { name } of shared.getMetricsAsArray()) {
    const metric = shared.getSingleMetric(name);
    if (metric) registry.registerMetric(metric);
  }
  // Per registry: "since the previous scrape" is this registry's scrapes.
  let last: EventLoopUtilization = performance.eventLoopUtilization();
  new Gauge({
    name: EVENT_LOOP_UTILIZATION,
    help: 'Share of the time since the previous scrape the event loop spent running callbacks (0 to 1).',
    registers: [registry],
    collect() {
      const now = performance.eventLoopUtilization();
      this.set(performance.eventLoopUtilization(now, last).utilization);
      last = now;
    },
  });
}
