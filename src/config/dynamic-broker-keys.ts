/**
 * Which broker keys may change at run time (AlterConfigs on a BROKER resource, or
 * kafka-configs.sh --zookeeper), the definitions they are checked with, and the check itself.
 * Pure: the broker's DynamicBrokerConfigs (server/admin) and the tools both use it.
 */
import { ErrorCode, KafkaError } from '../protocol/errors.js';
import type { ConfigDef } from './config-def.js';
import { configDef } from './defs.js';
import { ConfigError } from './errors.js';
import { parseConfigValue } from './values.js';

/** Kafka 3.9's DynamicListenerConfig and SSL reconfigurable keys: per listener, SSL and SASL. */
const LISTENER_RECONFIGURABLE_KEYS = [
  'advertised.listeners',
  'listeners',
  'listener.security.protocol.map',
  'principal.builder.class',
  'ssl.protocol',
  'ssl.provider',
  'ssl.cipher.suites',
  'ssl.enabled.protocols',
  'ssl.keystore.type',
  'ssl.keystore.location',
  'ssl.keystore.password',
  'ssl.keystore.key',
  'ssl.keystore.certificate.chain',
  'ssl.key.password',
  'ssl.truststore.type',
  'ssl.truststore.location',
  'ssl.truststore.password',
  'ssl.truststore.certificates',
  'ssl.keymanager.algorithm',
  'ssl.trustmanager.algorithm',
  'ssl.endpoint.identification.algorithm',
  'ssl.secure.random.implementation',
  'ssl.client.auth',
  'ssl.engine.factory.class',
  'sasl.mechanism.inter.broker.protocol',
  'sasl.jaas.config',
  'sasl.enabled.mechanisms',
  'sasl.kerberos.service.name',
  'sasl.kerberos.kinit.cmd',
  'sasl.kerberos.ticket.renew.window.factor',
  'sasl.kerberos.ticket.renew.jitter',
  'sasl.kerberos.min.time.before.relogin',
  'sasl.kerberos.principal.to.local.rules',
  'sasl.login.refresh.window.factor',
  'sasl.login.refresh.window.jitter',
  'sasl.login.refresh.min.period.seconds',
  'sasl.login.refresh.buffer.seconds',
  'max.connections',
  'max.connection.creation.rate',
  'num.network.threads',
];

/** SASL keys a listener sets per mechanism: listener.name.<listener>.<mechanism>.<key>. */
const LISTENER_MECHANISM_KEYS = new Set([
  'sasl.jaas.config',
  'sasl.login.callback.handler.class',
  'sasl.login.class',
  'sasl.server.callback.handler.class',
  'connections.max.reauth.ms',
]);

/**
 * The broker keys AlterConfigs may change at run time: every key Kafka 3.9 lists as dynamic
 * (DynamicBrokerConfig: log configs, log cleaner, thread pools, listeners/SSL/SASL, socket server
 * limits, producer state, remote log, metric reporters), plus log.roll.hours,
 * log.roll.jitter.hours, log.retention.minutes and log.retention.hours, which Fjord has always let
 * change. Which ones Fjord acts on is in docs/configuration.md; the others are stored and
 * described only (their defs are marked noEffect).
 */
export const DYNAMIC_BROKER_KEYS: ReadonlySet<string> = new Set([
  // DynamicLogConfig: broker defaults of topic configs.
  'log.segment.bytes',
  'log.roll.ms',
  'log.roll.hours',
  'log.roll.jitter.ms',
  'log.roll.jitter.hours',
  'log.index.size.max.bytes',
  'log.flush.interval.messages',
  'log.flush.interval.ms',
  'log.retention.bytes',
  'log.retention.ms',
  'log.retention.minutes',
  'log.retention.hours',
  'log.index.interval.bytes',
  'log.cleaner.delete.retention.ms',
  'log.cleaner.min.compaction.lag.ms',
  'log.cleaner.max.compaction.lag.ms',
  'log.segment.delete.delay.ms',
  'log.cleaner.min.cleanable.ratio',
  'log.cleanup.policy',
  'unclean.leader.election.enable',
  'min.insync.replicas',
  'compression.type',
  'compression.gzip.level',
  'compression.lz4.level',
  'compression.zstd.level',
  'log.preallocate',
  'message.max.bytes',
  'log.message.timestamp.type',
  'log.message.timestamp.difference.max.ms',
  'log.message.timestamp.before.max.ms',
  'log.message.timestamp.after.max.ms',
  'log.message.downconversion.enable',
  'log.local.retention.ms',
  'log.local.retention.bytes',
  // LogCleaner.
  'log.cleaner.threads',
  'log.cleaner.backoff.ms',
  'log.cleaner.dedupe.buffer.size',
  'log.cleaner.io.buffer.load.factor',
  'log.cleaner.io.buffer.size',
  'log.cleaner.io.max.bytes.per.second',
  // DynamicThreadPool.
  'num.io.threads',
  'num.replica.fetchers',
  'num.recovery.threads.per.data.dir',
  'background.threads',
  // DynamicConfig.Broker: replication quotas.
  'leader.replication.throttled.rate',
  'follower.replication.throttled.rate',
  'replica.alter.log.dirs.io.max.bytes.per.second',
  // Metric reporters, socket server, producer state, remote log.
  'metric.reporters',
  'max.connections.per.ip',
  'max.connections.per.ip.overrides',
  'producer.id.expiration.ms',
  'transaction.partition.verification.enable',
  'remote.log.index.file.cache.total.size.bytes',
  'remote.fetch.max.wait.ms',
  'remote.log.manager.copy.max.bytes.per.second',
  'remote.log.manager.fetch.max.bytes.per.second',
  // DynamicListenerConfig (listeners, SSL, SASL, connection limits, network threads).
  ...LISTENER_RECONFIGURABLE_KEYS,
]);

const LISTENER_PREFIX = /^listener\.name\.([^.]+)\.(.+)$/;

/**
 * A per-listener key (listener.name.<listener>.<key>, or .<mechanism>.<key> for SASL mechanism
 * keys): the definition of the key it overrides, or undefined when it is not one.
 */
export function listenerConfigDef(name: string): ConfigDef | undefined {
  const m = LISTENER_PREFIX.exec(name);
  if (!m) return undefined;
  const rest = m[2]!;
  if (LISTENER_RECONFIGURABLE_KEYS.includes(rest)) return configDef(rest);
  const dot = rest.indexOf('.');
  const base = dot > 0 ? rest.slice(dot + 1) : '';
  if (LISTENER_MECHANISM_KEYS.has(base)) return configDef(base);
  if (LISTENER_MECHANISM_KEYS.has(rest)) return configDef(rest);
  return undefined;
}

/** The definition a dynamic broker key is checked and described with (plain or per-listener). */
export function dynamicKeyDef(name: string): ConfigDef | undefined {
  return configDef(name) ?? listenerConfigDef(name);
}

/**
 * Checks proposed dynamic broker configs as Kafka 3.9's DynamicBrokerConfig.validateConfigs does;
 * throws KafkaError(INVALID_REQUEST) worded like Kafka's ("Cannot update these configs
 * dynamically: Set(broker.id)"). Only KNOWN keys that are not dynamic are refused: a key the
 * broker does not know (cleanup.policy, which is a topic key; log.cleanup.policy is the broker's)
 * is a custom property, stored and described back but read by nothing, as Kafka keeps it.
 */
export function validateDynamicBrokerConfigs(resourceName: string, entries: ReadonlyMap<string, string>): void {
  const prefix = `Invalid config value for resource ConfigResource(type=BROKER, name='${resourceName}'): `;
  const nonDynamic = [...entries.keys()].filter((k) => configDef(k) !== undefined && !DYNAMIC_BROKER_KEYS.has(k));
  if (nonDynamic.length > 0) {
    throw new KafkaError(ErrorCode.INVALID_REQUEST, `${prefix}Cannot update these configs dynamically: Set(${nonDynamic.join(', ')})`);
  }
  const unprefixed = [...entries.keys()].filter((k) => SECURITY_KEYS_PER_LISTENER_ONLY.has(k));
  if (unprefixed.length > 0) {
    throw new KafkaError(
      ErrorCode.INVALID_REQUEST,
      `${prefix}These security configs can be dynamically updated only per-listener using the listener prefix: Set(${unprefixed.join(', ')})`,
    );
  }
  if (resourceName === '') {
    const perBroker = [...entries.keys()].filter(isPerBrokerKey);
    if (perBroker.length > 0) {
      throw new KafkaError(
        ErrorCode.INVALID_REQUEST,
        `${prefix}Cannot update these configs at default cluster level, broker id must be specified: Set(${perBroker.join(', ')})`,
      );
    }
  }
  for (const [key, value] of entries) {
    const def = dynamicKeyDef(key);
    if (def === undefined) continue; // a custom property: Kafka does not check its value
    try {
      parseConfigValue({ ...def, name: key }, value);
    } catch (err) {
      if (err instanceof ConfigError) throw new KafkaError(ErrorCode.INVALID_REQUEST, prefix + err.message);
      throw err;
    }
  }
}

/**
 * Kafka's DynamicSecurityConfigs (SslConfigs.RECONFIGURABLE_CONFIGS): a broker's keystore and
 * truststore change at run time only per listener (listener.name.<l>.ssl.keystore.location).
 */
const SECURITY_KEYS_PER_LISTENER_ONLY: ReadonlySet<string> = new Set([
  'ssl.keystore.type',
  'ssl.keystore.location',
  'ssl.keystore.password',
  'ssl.key.password',
  'ssl.keystore.key',
  'ssl.keystore.certificate.chain',
  'ssl.truststore.type',
  'ssl.truststore.location',
  'ssl.truststore.password',
  'ssl.truststore.certificates',
]);

/** Listener keys Kafka lets the cluster default set; every other listener, SSL or SASL key is per broker. */
const CLUSTER_LEVEL_LISTENER_KEYS = new Set(['max.connections', 'max.connection.creation.rate', 'num.network.threads']);

/** Kafka's PerBrokerConfigs (listener, SSL and SASL keys) and their per-listener forms: refused at the cluster default. */
function isPerBrokerKey(name: string): boolean {
  const m = LISTENER_PREFIX.exec(name);
  if (m) return !CLUSTER_LEVEL_LISTENER_KEYS.has(m[2]!);
  return LISTENER_RECONFIGURABLE_KEYS.includes(name) && !CLUSTER_LEVEL_LISTENER_KEYS.has(name);
}

/** Whether `name` is a custom broker property: neither a broker key nor a per-listener override of one. */
export function isCustomBrokerKey(name: string): boolean {
  return dynamicKeyDef(name) === undefined;
}
