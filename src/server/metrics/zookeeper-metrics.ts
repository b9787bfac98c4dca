/**
 * The broker's ZooKeeper session metrics (cluster mode), named as the JMX exporter's Kafka rules
 * name Kafka's MBeans: kafka.server:type=SessionExpireListener (the session state, Kafka's
 * SessionState, as a gauge per state: 1 for the current one; expiries, disconnects and
 * connections as `_total` counters) and kafka.server:type=ZooKeeperClientMetrics
 * (ZooKeeperRequestLatencyMs: every request's round trip, as a Kafka timer: quantiles and count).
 */
import type { ZkSessionStats } from '../../metadata/zk/zk-session.js';
import type { MetricsRegistry } from './registry.js';
import { statsCounter, statsGauge, one } from './stats-families.js';
import { statsQuantileTimer } from './timer-metrics.js';

const STATES: readonly ZkSessionStats['state'][] = ['CONNECTED', 'CONNECTING', 'CLOSED'];

export function registerZookeeperMetrics(registry: MetricsRegistry, stats: ZkSessionStats): void {
  const prefix = 'kafka_server_sessionexpirelistener_';
  statsGauge(registry, `${prefix}sessionstate`, "The ZooKeeper client's state: 1 for the current one (Kafka's SessionState).", () =>
    STATES.map((state) => ({ value: stats.state === state ? 1 : 0, labels: { state } })),
  );
  statsCounter(registry, `${prefix}zookeeperexpires_total`, 'ZooKeeper sessions that expired (the broker re-registered).', () => one(stats.expires));
  statsCounter(registry, `${prefix}zookeeperdisconnects_total`, 'Connections to ZooKeeper lost.', () => one(stats.disconnects));
  statsCounter(registry, `${prefix}zookeepersyncconnects_total`, 'Connections to ZooKeeper made (the first and every reconnect).', () => one(stats.connects));
  statsQuantileTimer(
    registry,
    'kafka_server_zookeeperclientmetrics_zookeeperrequestlatencyms',
    'ZooKeeper requests: round-trip time in ms, quantiles and count (ZooKeeperRequestLatencyMs).',
    () => stats.requestLatency,
  );
}
