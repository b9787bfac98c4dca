// Broker configuration keys Kafka 3.9 lets AlterConfigs change (DynamicBrokerConfig) that sit
// outside the other areas: connection rates, TLS, SASL login and Kerberos, cleaner buffers,
// compression levels and tiered storage; many are accepted for compatibility only. One of the area
// tables that defs.ts assembles into the single list of every key.

import { def, atLeast, INT_MAX, LONG_MAX, NO_EFFECT, type ConfigDef } from './config-def.js';

export const ACCEPTED_ONLY_DEFS: readonly ConfigDef[] = [
  // Keys Kafka 3.9 lets AlterConfigs change on a broker (DynamicBrokerConfig) that Fjord does not
  // act on yet (and a few it now acts on, kept here in Kafka's list order): accepted, validated by
  // type, stored and described, so tools and client tests that set them work. Security (SSL/SASL)
  // keys also take the per-listener form listener.name.<listener>.<key> (and
  // listener.name.<listener>.<mechanism>.<key> for SASL mechanism keys).
  def(
    'max.connection.creation.rate',
    'int',
    INT_MAX,
    'Max new connections per second on the broker (inter-broker listener exempt) or, as listener.name.<l>.max.connection.creation.rate, on a listener; new connections wait. Dynamic.',
    atLeast(0),
  ),
  def('max.connections.per.ip.overrides', 'string', '', 'Per-IP or hostname overrides of max.connections.per.ip (host:count,...). Dynamic.'),
  def(
    'principal.builder.class',
    'class',
    'org.apache.kafka.common.security.authenticator.DefaultKafkaPrincipalBuilder',
    'Builds the principal of a connection.',
    NO_EFFECT,
  ),
  def('metric.reporters', 'list', '', 'Metric reporter classes.', NO_EFFECT),
  def(
    'ssl.protocol',
    'string',
    'TLSv1.3',
    'TLS protocol of the SSL context: TLSv1.2 caps the listener at TLS 1.2; TLSv1.3 (or TLS) allows every enabled protocol.',
    { validator: { oneOf: ['TLS', 'TLSv1', 'TLSv1.1', 'TLSv1.2', 'TLSv1.3'] } },
  ),
  def('ssl.provider', 'string', null, 'Security provider of the SSL context.', NO_EFFECT),
  def('ssl.cipher.suites', 'list', '', "Enabled cipher suites (IANA names as Kafka, or OpenSSL names); empty = Node's defaults."),
  def('ssl.enabled.protocols', 'list', 'TLSv1.2,TLSv1.3', 'Enabled TLS protocols (TLSv1.2, TLSv1.3; TLSv1 and TLSv1.1 also accepted).'),
  def('ssl.keystore.type', 'string', 'JKS', "Key store format: PEM or PKCS12 (JKS is refused at start-up; Kafka's default name is kept).", {
    validator: { oneOf: ['JKS', 'PKCS12', 'PEM', 'jks', 'pkcs12', 'pem'] },
  }),
  def('ssl.keystore.location', 'string', null, 'Key store file: with PEM one file holding the private key and the certificate chain; or a PKCS12 file.'),
  def('ssl.keystore.password', 'password', null, 'Password of a PKCS12 key store.', { sensitive: true }),
  def('ssl.keystore.key', 'password', null, 'Private key in PEM form (ssl.keystore.type=PEM), instead of ssl.keystore.location.', { sensitive: true }),
  def('ssl.keystore.certificate.chain', 'password', null, 'Certificate chain in PEM form (ssl.keystore.type=PEM), with ssl.keystore.key.', { sensitive: true }),
  def('ssl.key.password', 'password', null, 'Password of an encrypted PEM private key (or of the key in a PKCS12 store).', { sensitive: true }),
  def('ssl.truststore.type', 'string', 'JKS', 'Trust store format: PEM (JKS and PKCS12 are refused when a trust store is set).', {
    validator: { oneOf: ['JKS', 'PKCS12', 'PEM', 'jks', 'pkcs12', 'pem'] },
  }),
  def('ssl.truststore.location', 'string', null, 'PEM file of the CA certificates that client certificates (and, as a client, brokers) are checked against.'),
  def('ssl.truststore.password', 'password', null, 'Trust store password (not used by PEM trust stores).', { ...NO_EFFECT, sensitive: true }),
  def('ssl.truststore.certificates', 'password', null, 'Trusted certificates in PEM form, instead of ssl.truststore.location.', { sensitive: true }),
  def('ssl.keymanager.algorithm', 'string', 'SunX509', 'Key manager factory algorithm.', NO_EFFECT),
  def('ssl.trustmanager.algorithm', 'string', 'PKIX', 'Trust manager factory algorithm.', NO_EFFECT),
  def(
    'ssl.endpoint.identification.algorithm',
    'string',
    'https',
    "As a client of another broker's TLS listener: https checks its host name against its certificate; empty does not.",
  ),
  def('ssl.secure.random.implementation', 'string', null, 'SecureRandom implementation.', NO_EFFECT),
  def('ssl.client.auth', 'string', 'none', 'Client certificates on TLS listeners: required, requested (checked when given) or none.', {
    validator: { oneOf: ['required', 'requested', 'none'] },
  }),
  def(
    'ssl.principal.mapping.rules',
    'string',
    'DEFAULT',
    "Rules (RULE:pattern/replacement/[LU], DEFAULT) mapping a client certificate's RFC 2253 subject to the principal name.",
  ),
  def('ssl.engine.factory.class', 'class', null, 'Custom SSLEngine factory.', NO_EFFECT),
  def('sasl.login.class', 'class', null, 'Login class of SASL.', NO_EFFECT),
  def('sasl.login.callback.handler.class', 'class', null, 'Login callback handler of SASL.', NO_EFFECT),
  def('sasl.server.callback.handler.class', 'class', null, 'Server callback handler of SASL.', NO_EFFECT),
  def('sasl.kerberos.service.name', 'string', null, 'Kerberos principal name Kafka runs as.', NO_EFFECT),
  def('sasl.kerberos.kinit.cmd', 'string', '/usr/bin/kinit', 'Kerberos kinit command path.', NO_EFFECT),
  def('sasl.kerberos.ticket.renew.window.factor', 'double', '0.8', 'Renew the Kerberos ticket after this fraction of its lifetime.', NO_EFFECT),
  def('sasl.kerberos.ticket.renew.jitter', 'double', '0.05', 'Random jitter added to the renewal time.', NO_EFFECT),
  def('sasl.kerberos.min.time.before.relogin', 'long', '60000', 'Login thread sleep time between refresh attempts.', NO_EFFECT),
  def('sasl.kerberos.principal.to.local.rules', 'list', 'DEFAULT', 'Rules mapping principal names to short names.', NO_EFFECT),
  def('sasl.login.refresh.window.factor', 'double', '0.8', 'Refresh the login credential after this fraction of its lifetime.', {
    ...NO_EFFECT,
    validator: { min: 0.5, max: 1 },
  }),
  def('sasl.login.refresh.window.jitter', 'double', '0.05', 'Random jitter added to the refresh time.', { ...NO_EFFECT, validator: { min: 0, max: 0.25 } }),
  def('sasl.login.refresh.min.period.seconds', 'short', '60', 'Minimum wait before refreshing a login credential.', {
    ...NO_EFFECT,
    validator: { min: 0, max: 900 },
  }),
  def('sasl.login.refresh.buffer.seconds', 'short', '300', 'Buffer time before credential expiry when refreshing.', {
    ...NO_EFFECT,
    validator: { min: 0, max: 3600 },
  }),
  def('log.cleaner.dedupe.buffer.size', 'long', '134217728', 'Memory of all cleaner threads for deduplication.', NO_EFFECT),
  def('log.cleaner.io.buffer.load.factor', 'double', '0.9', "Load factor of the cleaner's dedupe buffer.", NO_EFFECT),
  def('log.cleaner.io.buffer.size', 'int', '524288', 'Memory of all cleaner threads for I/O buffers.', { ...atLeast(0), ...NO_EFFECT }),
  def('log.cleaner.io.max.bytes.per.second', 'double', '1.7976931348623157E308', 'I/O throttle of the log cleaner.', NO_EFFECT),
  def('compression.gzip.level', 'int', '-1', 'gzip level for broker-side compression.', NO_EFFECT),
  def('compression.lz4.level', 'int', '9', 'lz4 level for broker-side compression.', NO_EFFECT),
  def('compression.zstd.level', 'int', '3', 'zstd level for broker-side compression.', NO_EFFECT),
  def('log.message.timestamp.before.max.ms', 'long', LONG_MAX, 'Max age of a record timestamp behind the broker time.', { ...atLeast(0), ...NO_EFFECT }),
  def('log.message.timestamp.after.max.ms', 'long', LONG_MAX, 'Max lead of a record timestamp ahead of the broker time.', { ...atLeast(0), ...NO_EFFECT }),
  def('log.local.retention.ms', 'long', '-2', 'Local retention with tiered storage (-2: log.retention.ms).', NO_EFFECT),
  def('log.local.retention.bytes', 'long', '-2', 'Local retention bytes with tiered storage (-2: log.retention.bytes).', NO_EFFECT),
  def('remote.log.index.file.cache.total.size.bytes', 'long', '1073741824', 'Cache of remote log index files.', NO_EFFECT),
  def('remote.fetch.max.wait.ms', 'int', '500', 'Max wait of a remote fetch.', NO_EFFECT),
  def('remote.log.manager.copy.max.bytes.per.second', 'long', LONG_MAX, 'Throttle of copies to remote storage.', NO_EFFECT),
  def('remote.log.manager.fetch.max.bytes.per.second', 'long', LONG_MAX, 'Throttle of reads from remote storage.', NO_EFFECT),
];
