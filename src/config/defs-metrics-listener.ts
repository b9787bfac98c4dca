// Broker configuration keys of the metrics HTTP listener (Fjord's own: Kafka has none; its
// metrics go through JMX): where it listens, its TLS (named as a Kafka listener's ssl.* keys,
// under metrics.) and its basic auth. Read by src/server/metrics/listener-config.ts.

import { def, type ConfigDef } from './config-def.js';

const STORE_TYPES = { validator: { oneOf: ['JKS', 'PKCS12', 'PEM', 'jks', 'pkcs12', 'pem'] } };

export const METRICS_LISTENER_DEFS: readonly ConfigDef[] = [
  def(
    'metrics.listener',
    'string',
    '',
    'Fjord: the HTTP listener serving /metrics (Prometheus) and /health/live, /health/ready, as http://host:port or https://host:port (empty host: every interface; port 0: any free port); empty = off.',
  ),
  def('metrics.ssl.keystore.type', 'string', 'JKS', 'Fjord: key store format of an https metrics.listener: PEM or PKCS12 (as ssl.keystore.type).', STORE_TYPES),
  def('metrics.ssl.keystore.location', 'string', null, 'Fjord: key store file of an https metrics.listener (as ssl.keystore.location).'),
  def('metrics.ssl.keystore.password', 'password', null, "Fjord: password of the metrics listener's PKCS12 key store.", { sensitive: true }),
  def('metrics.ssl.key.password', 'password', null, "Fjord: password of the metrics listener's encrypted PEM private key.", { sensitive: true }),
  def('metrics.ssl.truststore.type', 'string', 'JKS', 'Fjord: trust store format of the metrics listener: PEM (as ssl.truststore.type).', STORE_TYPES),
  def('metrics.ssl.truststore.location', 'string', null, "Fjord: PEM file of the CA certificates that scrapers' client certificates are checked against."),
  def('metrics.ssl.truststore.password', 'password', null, 'Fjord: trust store password (not used by PEM trust stores).', { sensitive: true }),
  def('metrics.ssl.client.auth', 'string', 'none', 'Fjord: client certificates on an https metrics.listener: required, requested or none.', {
    validator: { oneOf: ['required', 'requested', 'none'] },
  }),
  def('metrics.basic.auth.user', 'string', null, 'Fjord: the user HTTP basic auth asks of /metrics scrapes; unset = no authentication.'),
  def('metrics.basic.auth.password', 'password', null, 'Fjord: the password of metrics.basic.auth.user.', { sensitive: true }),
  def(
    'console.enable',
    'boolean',
    'true',
    'Fjord: serve the web console (docs/console.md) at / on metrics.listener, guarded by metrics.basic.auth.* when set.',
  ),
];
