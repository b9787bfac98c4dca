/**
 * Connections, SASL authentications and client quotas as the JMX exporter's Kafka rules name
 * Kafka's MBeans, read at scrape:
 * - kafka.server:type=socket-server-metrics,listener=X,networkProcessor=N attributes
 *   connection-count, connection-creation-total, connection-close-total,
 *   successful-authentication-total, failed-authentication-total become
 *   kafka_server_socket_server_metrics_<attribute>{listener,networkProcessor}. Fjord has one
 *   event loop, so one network processor: networkProcessor="0".
 * - kafka.server:type=Produce|Fetch|Request,user=U,client-id=C attributes throttle-time,
 *   byte-rate, request-time become kafka_server_quota_<attribute>{resource,user,clientId}, one
 *   series per quota sharing group (user "" or client id "" where the quota is not by it).
 */
import type { ListenerConnectionStats } from '../network/index.js';
import type { SaslAuthenticationStats } from '../../security/sasl/authentication-stats.js';
import type { QuotaManagers, QuotaSensor } from '../quotas/quota-manager.js';
import type { MetricsRegistry } from './registry.js';
import { type Sample, statsCounter, statsGauge } from './stats-families.js';

export interface ConnectionMetricSources {
  listeners: ReadonlyMap<string, ListenerConnectionStats>;
  sasl?: SaslAuthenticationStats;
  quotas?: QuotaManagers;
  now?: () => number;
}

const SOCKET = 'kafka_server_socket_server_metrics';

export function registerConnectionMetrics(registry: MetricsRegistry, src: ConnectionMetricSources): void {
  const perListener = (value: (s: ListenerConnectionStats) => number) => (): Sample[] =>
    [...src.listeners].map(([listener, s]) => ({ value: value(s), labels: { listener, networkProcessor: '0' } }));
  statsGauge(
    registry,
    `${SOCKET}_connection_count`,
    'Open client connections per listener',
    perListener((s) => s.created - s.closed),
  );
  statsCounter(
    registry,
    `${SOCKET}_connection_creation_total`,
    'Connections accepted and served per listener',
    perListener((s) => s.created),
  );
  statsCounter(
    registry,
    `${SOCKET}_connection_close_total`,
    'Connections closed per listener',
    perListener((s) => s.closed),
  );
  const sasl = (field: 'successful' | 'failed') => (): Sample[] =>
    src.sasl ? [...src.sasl.byListener].map(([listener, s]) => ({ value: s[field], labels: { listener, networkProcessor: '0' } })) : [];
  statsCounter(registry, `${SOCKET}_successful_authentication_total`, 'SASL authentications that succeeded, per listener', sasl('successful'));
  statsCounter(registry, `${SOCKET}_failed_authentication_total`, 'SASL authentications that failed, per listener', sasl('failed'));

  const quotas = src.quotas;
  if (quotas === undefined) return;
  const now = src.now ?? Date.now;
  const managers: readonly [string, 'produce' | 'fetch' | 'request'][] = [
    ['Produce', 'produce'],
    ['Fetch', 'fetch'],
    ['Request', 'request'],
  ];
  const each = (pick: (resource: string) => boolean, value: (s: QuotaSensor, t: number) => number) => (): Sample[] => {
    const out: Sample[] = [];
    const t = now();
    for (const [resource, type] of managers) {
      if (!pick(resource)) continue;
      for (const s of quotas[type].sensorList()) out.push({ value: value(s, t), labels: { resource, user: s.user, clientId: s.clientId } });
    }
    return out;
  };
  statsGauge(
    registry,
    'kafka_server_quota_throttle_time',
    'Throttle time (ms) the last request of a quota group got (0: within quota)',
    each(
      () => true,
      (s) => s.throttleMs,
    ),
  );
  statsCounter(
    registry,
    'fjord_server_quota_throttle_time_ms_total',
    'Throttle time (ms) given to a quota group, added up',
    each(
      () => true,
      (s) => s.throttleMsTotal,
    ),
  );
  statsGauge(
    registry,
    'kafka_server_quota_byte_rate',
    'Bytes per second a quota group produces or fetches, over the quota window',
    each(
      (r) => r !== 'Request',
      (s, t) => s.rate.measure(t),
    ),
  );
  statsGauge(
    registry,
    'kafka_server_quota_request_time',
    'Handler time of a quota group, percent of the event loop, over the quota window',
    each(
      (r) => r === 'Request',
      (s, t) => s.rate.measure(t),
    ),
  );
}
