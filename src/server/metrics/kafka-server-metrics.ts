/**
 * kafka_server_kafkaserver_brokerstate (Kafka's kafka.server:type=KafkaServer,name=BrokerState,
 * as the JMX exporter names it), from what /health/ready reads (health.ts): 1 STARTING until
 * start-up is over (log recovery included: Fjord does not tell a recovery after an unclean
 * shutdown apart, Kafka's 2), 3 RUNNING, 7 SHUTTING_DOWN once the broker begins to stop.
 */
import type { BrokerHealth } from './health.js';
import type { MetricsRegistry } from './registry.js';
import { one, statsGauge } from './stats-families.js';

/** Kafka's BrokerState values that Fjord passes through. */
export const BrokerStateValue = { STARTING: 1, RUNNING: 3, SHUTTING_DOWN: 7 } as const;

export function brokerStateOf(health: Pick<BrokerHealth, 'started' | 'stopping'>): number {
  if (health.stopping) return BrokerStateValue.SHUTTING_DOWN;
  return health.started ? BrokerStateValue.RUNNING : BrokerStateValue.STARTING;
}

export function registerKafkaServerMetrics(registry: MetricsRegistry, health: BrokerHealth): void {
  statsGauge(
    registry,
    'kafka_server_kafkaserver_brokerstate',
    "The broker's state as Kafka numbers it: 1 starting, 3 running, 7 shutting down (BrokerState).",
    () => one(brokerStateOf(health)),
  );
}
