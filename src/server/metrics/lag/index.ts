/**
 * kafka-exporter's families on the broker's own endpoint, wired from the broker's configuration:
 * consumer lag (consumer-lag-metrics.ts, with its background refresh) and the topic and broker
 * families (topic-partition-metrics.ts). What Broker.start() calls.
 */
import type { BrokerConfig } from '../../config/index.js';
import type { MetricsRegistry } from '../registry.js';
import { registerConsumerLagMetrics, type ConsumerLagMetrics } from '../consumer-lag-metrics.js';
import { registerTopicPartitionMetrics } from '../topic-partition-metrics.js';
import type { LagSources } from './lag-refresh.js';

export type { ConsumerLagMetrics } from '../consumer-lag-metrics.js';

export interface KafkaExporterSources extends Omit<LagSources, 'brokerId' | 'requestTimeoutMs' | 'connections'> {
  connections: LagSources['connections'] | undefined;
  /** Whether this broker speaks for the whole cluster (the active controller; embedded: always). */
  isActiveController(): boolean;
}

export function registerKafkaExporterMetrics(registry: MetricsRegistry, cfg: BrokerConfig, src: KafkaExporterSources): ConsumerLagMetrics {
  const partitionLevel = cfg.metricsPartitionLevelEnable;
  const { connections, isActiveController, ...rest } = src;
  registerTopicPartitionMetrics(registry, {
    brokerId: cfg.brokerId,
    metadata: src.metadata,
    replicaManager: src.replicaManager,
    shards: src.shards,
    isActiveController,
    partitionLevel,
  });
  return registerConsumerLagMetrics(registry, {
    ...rest,
    isActiveController,
    ...(connections ? { connections } : {}),
    brokerId: cfg.brokerId,
    requestTimeoutMs: cfg.requestTimeoutMs,
    partitionLevel,
    refreshMs: Number(cfg.values.get('metrics.consumer.lag.refresh.ms') ?? 15000),
  });
}
