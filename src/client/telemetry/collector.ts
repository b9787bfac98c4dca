/**
 * Turns a client's ClientStats into KIP-714's standard metrics at push time: Kafka's telemetry
 * names (`org.apache.kafka.<producer|consumer|admin.client>.<group>.<name>`, as Java's clients
 * and librdkafka send them), only those the subscription's prefixes ask for, sums in the
 * temporality it asks for. Metrics Fjord's client does not measure are not sent (no invented
 * zeros); a window with no observation since the last push sends nothing either.
 */
import type { ClientStats, LatencyWindow } from './client-stats.js';

export type ClientKind = 'producer' | 'consumer' | 'admin';

export interface TelemetryPoint {
  value: number;
  /** Sent as asInt (counts, whole milliseconds of a max) or asDouble (averages, ratios). */
  isInt: boolean;
  attributes: Record<string, string>;
}

export interface TelemetryMetric {
  name: string;
  description: string;
  unit: string;
  /** Gauges are sent as they are; sums (monotonic counters) cumulative or as deltas. */
  kind: 'gauge' | 'sum';
  points: TelemetryPoint[];
}

/** What was collected, with the time window the values cover. */
export interface TelemetryBatch {
  metrics: TelemetryMetric[];
  /** Sums' start: the client's start (cumulative) or the previous collection (delta). */
  startTimeMs: number;
  timeMs: number;
  deltaTemporality: boolean;
}

export interface SubscriptionFilter {
  /** Kafka's RequestedMetrics: [] none, [''] all, else name prefixes. */
  requestedMetrics: readonly string[];
  deltaTemporality: boolean;
}

export const METRIC_PREFIX: Record<ClientKind, string> = {
  producer: 'org.apache.kafka.producer.',
  consumer: 'org.apache.kafka.consumer.',
  admin: 'org.apache.kafka.admin.client.',
};

/** Whether a subscription's prefix list asks for `name`. */
export function isRequested(name: string, requestedMetrics: readonly string[]): boolean {
  for (const prefix of requestedMetrics) if (prefix === '' || name.startsWith(prefix)) return true;
  return false;
}

export class TelemetryCollector {
  private previousAt: number;
  /** Connections counted at the previous collection: connection.creation.rate's window. */
  private previousConnections = 0;
  /** Cumulative values of sums at the previous collection, for delta temporality. */
  private readonly previousSums = new Map<string, number>();

  constructor(
    private readonly kind: ClientKind,
    private readonly stats: ClientStats,
    /** The node id of a broker address (Kafka labels per-node metrics `node.id`); -1 if unknown. */
    private readonly nodeIdOf: (address: string) => number,
    private readonly startedAtMs: number,
  ) {
    this.previousAt = startedAtMs;
  }

  /**
   * Reads (and resets) the stats' windows into the metrics the subscription asks for. Windows of
   * metrics not asked for are reset too, so that a later subscription does not see stale values.
   */
  collect(nowMs: number, filter: SubscriptionFilter): TelemetryBatch {
    const all: TelemetryMetric[] = [];
    const p = METRIC_PREFIX[this.kind];
    const s = this.stats;
    this.sum(all, `${p}connection.creation.total`, 'The total number of connections established.', '1', s.connectionCreations, filter);
    const seconds = (nowMs - this.previousAt) / 1000;
    if (seconds > 0) {
      const rate = (s.connectionCreations - this.previousConnections) / seconds;
      gauge(all, `${p}connection.creation.rate`, 'The rate of connections established per second.', '1', [point(rate, false)]);
    }
    this.previousConnections = s.connectionCreations;
    const perNodeAvg: TelemetryPoint[] = [];
    const perNodeMax: TelemetryPoint[] = [];
    for (const [address, window] of s.requestLatency) {
      const w = window.take();
      if (w === null) continue;
      const attributes = { 'node.id': String(this.nodeIdOf(address)) };
      perNodeAvg.push({ value: w.avg, isInt: false, attributes });
      perNodeMax.push({ value: Math.round(w.max), isInt: true, attributes });
    }
    gauge(all, `${p}node.request.latency.avg`, 'The average request latency in ms for a node.', 'ms', perNodeAvg);
    gauge(all, `${p}node.request.latency.max`, 'The maximum request latency in ms for a node.', 'ms', perNodeMax);
    if (this.kind === 'producer') {
      avgMax(all, `${p}produce.throttle.time`, 'throttle time in ms reported by brokers for Produce', s.produceThrottleTime);
      avgMax(all, `${p}record.queue.time`, 'time in ms record batches spent in the send buffer', s.recordQueueTime);
    } else if (this.kind === 'consumer') {
      avgMax(all, `${p}fetch.manager.fetch.latency`, 'time in ms taken for a fetch request', s.fetchLatency);
      avgMax(all, `${p}coordinator.commit.latency`, 'time in ms taken for a commit request', s.commitLatency);
      const idle = s.pollIdle.take();
      if (idle !== null) gauge(all, `${p}poll.idle.ratio.avg`, 'The average fraction of time the consumer spent inside poll().', '1', [point(idle, false)]);
      if (s.assignedPartitions !== null)
        gauge(all, `${p}coordinator.assigned.partitions`, 'The number of partitions currently assigned to this consumer.', '1', [
          point(s.assignedPartitions(), true),
        ]);
    }
    const startTimeMs = filter.deltaTemporality ? this.previousAt : this.startedAtMs;
    this.previousAt = nowMs;
    return {
      metrics: all.filter((m) => isRequested(m.name, filter.requestedMetrics)),
      startTimeMs,
      timeMs: nowMs,
      deltaTemporality: filter.deltaTemporality,
    };
  }

  private sum(out: TelemetryMetric[], name: string, description: string, unit: string, cumulative: number, filter: SubscriptionFilter): void {
    const before = this.previousSums.get(name) ?? 0;
    this.previousSums.set(name, cumulative);
    const value = filter.deltaTemporality ? cumulative - before : cumulative;
    out.push({ name, description, unit, kind: 'sum', points: [point(value, true)] });
  }
}

function point(value: number, isInt: boolean): TelemetryPoint {
  return { value, isInt, attributes: {} };
}

function gauge(out: TelemetryMetric[], name: string, description: string, unit: string, points: TelemetryPoint[]): void {
  if (points.length > 0) out.push({ name, description, unit, kind: 'gauge', points });
}

/** `<name>.avg` and `<name>.max` from one window, when it saw anything since the last push. */
function avgMax(out: TelemetryMetric[], name: string, what: string, window: LatencyWindow): void {
  const w = window.take();
  if (w === null) return;
  gauge(out, `${name}.avg`, `The average ${what}.`, 'ms', [point(w.avg, false)]);
  gauge(out, `${name}.max`, `The maximum ${what}.`, 'ms', [point(Math.round(w.max), true)]);
}
