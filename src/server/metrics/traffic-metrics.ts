/**
 * Registers the traffic metrics of a broker: requests (request-metrics.ts), broker topic metrics
 * (topic-metrics.ts), connections, SASL and quotas (connection-metrics.ts), over the stats the
 * services and the network keep. Called once from Broker.start, after the network is built.
 */
import type { BrokerServices } from '../broker-services.js';
import type { BrokerNetwork } from '../broker-network.js';
import type { MetricsRegistry } from './registry.js';
import { registerRequestMetrics } from './request-metrics.js';
import { registerTopicMetrics } from './topic-metrics.js';
import { registerConnectionMetrics } from './connection-metrics.js';

export function registerTrafficMetrics(registry: MetricsRegistry, services: BrokerServices, network: BrokerNetwork): void {
  if (services.requestStats) {
    services.requestStats.nameApis(services.handlers);
    registerRequestMetrics(registry, services.requestStats);
  }
  if (services.topicStats) registerTopicMetrics(registry, services.topicStats, services.metadata);
  registerConnectionMetrics(registry, {
    listeners: network.server.listenerStats,
    sasl: network.saslStats,
    ...(services.quotas ? { quotas: services.quotas } : {}),
  });
}
