/**
 * Wires KIP-714 client telemetry for the Broker: the client-metrics subscriptions where this
 * broker keeps dynamic entity configs (a file embedded; /config/client-metrics in ZooKeeper,
 * followed through /config/changes), the client instances, and the re-export on the metrics
 * endpoint.
 */
import type { Logger } from 'pino';
import type { ZkMode } from '../../metadata/zk/zk-mode.js';
import type { ConfigAdmin } from '../admin/index.js';
import type { BrokerConfig } from '../config/index.js';
import { registerClientTelemetryMetrics } from '../metrics/client-telemetry-metrics.js';
import type { MetricsRegistry } from '../metrics/registry.js';
import { ClientTelemetry } from './client-instances.js';
import { ClientMetricsResources, EmbeddedClientMetricsBackend, subscriptionNameOf, ZkClientMetricsBackend } from './client-metrics-resources.js';
import { PushedMetrics } from './pushed-metrics.js';

/** `configAdmin` then serves DescribeConfigs and (Incremental)AlterConfigs on CLIENT_METRICS resources from the subscriptions. */
export async function openClientTelemetry(
  cfg: BrokerConfig,
  zkMode: ZkMode | undefined,
  registry: MetricsRegistry,
  configAdmin: ConfigAdmin,
  brokerLogger: Logger,
): Promise<ClientTelemetry> {
  const logger = brokerLogger.child({ component: 'client-telemetry' });
  const backend = zkMode ? new ZkClientMetricsBackend(await zkMode.zkClient()) : new EmbeddedClientMetricsBackend(cfg.logDirs[0]!);
  const resources = await ClientMetricsResources.open(backend);
  configAdmin.clientMetrics = resources;
  zkMode?.onClientMetricsChange((name) => resources.reload(subscriptionNameOf(name)));
  const pushed = new PushedMetrics(cfg.metricsClientTelemetryMaxSeries);
  const telemetry = new ClientTelemetry(resources, { telemetryMaxBytes: cfg.telemetryMaxBytes, sink: pushed, logger });
  registerClientTelemetryMetrics(registry, telemetry, pushed);
  return telemetry;
}
