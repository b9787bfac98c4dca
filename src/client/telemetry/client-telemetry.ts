/**
 * KIP-714 for one Fjord client (producer, consumer or admin): the TelemetryReporter talking
 * through the client's Cluster (any live broker; a broker without APIs 71/72 switches it off),
 * pushing what the Cluster's ClientStats measured, as Kafka's standard metric names. Created by
 * the client's constructor unless `enable.metrics.push=false`, it starts once the client itself
 * has connected; closed (terminating push) before the client closes its connections.
 */
import { Api } from '../apis.js';
import type { ClientOptions, Cluster } from '../cluster.js';
import { TelemetryCollector, type ClientKind } from './collector.js';
import { encodePayload, toMetricsData } from './otlp-payload.js';
import { TelemetryReporter, systemClock, type TelemetryClock, type TelemetryTransport } from './telemetry-reporter.js';

/** How long close() waits for the terminating push (Kafka bounds it by the close timeout). */
const TERMINATING_PUSH_TIMEOUT_MS = 5000;

export function clusterTransport(cluster: Cluster): TelemetryTransport {
  return {
    supported: async () => {
      const conn = await cluster.anyConnection();
      return conn.supports(Api.GetTelemetrySubscriptions) && conn.supports(Api.PushTelemetry);
    },
    getSubscriptions: async (clientInstanceId) => (await cluster.anyConnection()).send(Api.GetTelemetrySubscriptions, { clientInstanceId }),
    push: async (request) => (await cluster.anyConnection()).send(Api.PushTelemetry, request),
  };
}

export class ClientTelemetry {
  readonly reporter: TelemetryReporter;
  readonly collector: TelemetryCollector;

  constructor(
    kind: ClientKind,
    cluster: Cluster,
    /** KIP-714's client resource labels the client knows (a consumer's group_id, ...). */
    resource: Record<string, string> = {},
    clock: TelemetryClock = systemClock,
    transport: TelemetryTransport = clusterTransport(cluster),
  ) {
    this.collector = new TelemetryCollector(kind, cluster.stats, (address) => nodeIdOf(cluster, address), clock.now());
    this.reporter = new TelemetryReporter({
      transport,
      clock,
      retryBackoffMs: cluster.retryBackoffMs,
      payload: (sub) => encodePayload(toMetricsData(this.collector.collect(clock.now(), sub), resource), sub.acceptedCompressionTypes),
    });
    cluster.stats.onFirstConnection(() => this.reporter.start());
  }

  /** The instance id the broker assigned (Kafka's clientInstanceId()); the zero uuid until then. */
  get clientInstanceId(): string {
    return this.reporter.clientInstanceId;
  }

  close(): Promise<void> {
    return this.reporter.close(TERMINATING_PUSH_TIMEOUT_MS);
  }
}

/** Starts telemetry for a client unless its options turned it off (`enable.metrics.push`, default true). */
export function startClientTelemetry(kind: ClientKind, cluster: Cluster, options: ClientOptions, resource?: Record<string, string>): ClientTelemetry | null {
  return options.enableMetricsPush === false ? null : new ClientTelemetry(kind, cluster, resource);
}

function nodeIdOf(cluster: Cluster, address: string): number {
  for (const b of cluster.current.brokers.values()) if (`${b.host}:${b.port}` === address) return b.nodeId;
  return -1; // a bootstrap address not (yet) in the metadata
}
