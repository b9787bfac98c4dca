// Builds the typed broker configuration from server.properties and overrides, with Kafka's
// defaults and precedence rules (log.retention.ms > minutes > hours, log.roll.ms > hours, log.dirs
// > log.dir, broker.id > node.id).
import fs from 'node:fs';
import type { ConfigDef } from '../../config/config-def.js';
import { BROKER_CONFIG_DEFS, configDef } from '../../config/defs.js';
import { ConfigError } from '../../config/errors.js';
import { parseOverride, parseProperties } from '../../config/properties.js';
import { defaultConfigValue, parseConfigValue, type ConfigValue } from '../../config/values.js';
import type { ClientSecurity } from '../../security/client-security.js';
import { saslServerConfig } from '../../security/sasl/config.js';
import { interBrokerClientSecurity } from '../../security/tls/inter-broker.js';
import { deriveAdvertisedListeners, parseListeners, parseSecurityProtocolMap } from '../network/listeners.js';
import { connectionQuotaSettings } from '../network/connection-quota-config.js';
import { buildListenerTls, listenerSettings, type ListenerTls } from '../../security/tls/server-tls.js';
import { usesTls } from '../../security/security-protocol.js';
import type { BrokerConfig } from './broker-config.js';
import { metricsListenerConfig } from '../metrics/listener-config.js';

export interface WarnSink {
  warn(msg: string): void;
}

/** Reads a properties file and applies overrides. Unreadable file → ConfigError with one line. */
export function loadBrokerConfig(path: string, overrides: string[] = [], warn?: WarnSink): BrokerConfig {
  let text: string;
  try {
    text = fs.readFileSync(path, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? 'error';
    throw new ConfigError(`Cannot read config file ${path}: ${code === 'ENOENT' ? 'no such file' : code}`);
  }
  const raw = parseProperties(text);
  for (const override of overrides) {
    const [key, value] = parseOverride(override);
    raw.set(key, value);
  }
  return buildBrokerConfig(raw, warn);
}

/** Builds the typed config from raw key/values; unknown keys are warned about, invalid values throw. */
export function buildBrokerConfig(raw: Map<string, string>, warn?: WarnSink): BrokerConfig {
  const values = new Map<string, ConfigValue>();
  for (const def of BROKER_CONFIG_DEFS) values.set(def.name, defaultConfigValue(def));
  for (const [key, text] of raw) {
    const def = configDef(key);
    if (def === undefined) {
      // listener.name.<listener>.<key> (or .<mechanism>.<key>): checked like <key>, read per listener.
      const base = listenerPrefixedDef(key);
      if (base !== undefined) parseConfigValue(base, text);
      else warn?.warn(`Unknown configuration ${key} is ignored`);
      continue;
    }
    values.set(key, parseConfigValue(def, text));
  }
  return assemble(new Map(raw), values);
}

const LISTENER_PREFIXED = /^listener\.name\.([^.]+)\.(.+)$/;

/** The definition of the key a listener.name.<listener>.[<mechanism>.]<key> overrides. */
function listenerPrefixedDef(key: string): ConfigDef | undefined {
  const m = LISTENER_PREFIXED.exec(key);
  if (m === null) return undefined;
  const rest = m[2]!;
  const dot = rest.indexOf('.');
  return configDef(rest) ?? (dot > 0 ? configDef(rest.slice(dot + 1)) : undefined);
}

class Values {
  constructor(private readonly values: Map<string, ConfigValue>) {}
  private get(name: string): ConfigValue {
    if (!this.values.has(name)) throw new Error(`BUG: config key ${name} is not in the table`);
    return this.values.get(name)!;
  }
  num(name: string): number {
    const v = this.get(name);
    if (typeof v !== 'number') throw new ConfigError(`Missing required configuration "${name}" which has no default value.`, name);
    return v;
  }
  numOrNull(name: string): number | null {
    const v = this.get(name);
    return typeof v === 'number' ? v : null;
  }
  bool(name: string): boolean {
    return this.get(name) === true;
  }
  str(name: string): string {
    const v = this.get(name);
    if (typeof v !== 'string') throw new ConfigError(`Missing required configuration "${name}" which has no default value.`, name);
    return v;
  }
  strOrNull(name: string): string | null {
    const v = this.get(name);
    return typeof v === 'string' ? v : null;
  }
  list(name: string): string[] | null {
    const v = this.get(name);
    return Array.isArray(v) ? v : null;
  }
}

function assemble(raw: Map<string, string>, values: Map<string, ConfigValue>): BrokerConfig {
  const v = new Values(values);
  const protocolMap = parseSecurityProtocolMap((v.list('listener.security.protocol.map') ?? []).join(','));
  const listeners = parseListeners((v.list('listeners') ?? []).join(','), protocolMap);
  if (listeners.length === 0) throw new ConfigError('Invalid value for configuration listeners: at least one listener is required', 'listeners');
  const advertisedRaw = v.list('advertised.listeners');
  const advertisedListeners = deriveAdvertisedListeners(listeners, advertisedRaw === null ? null : advertisedRaw.join(','), protocolMap);
  // As Kafka: inter.broker.listener.name, or the listener named after security.inter.broker.protocol;
  // never both. With neither set Fjord takes the first listener.
  if (raw.has('inter.broker.listener.name') && raw.has('security.inter.broker.protocol')) {
    throw new ConfigError('Only one of inter.broker.listener.name and security.inter.broker.protocol should be set.', 'inter.broker.listener.name');
  }
  const interBrokerListenerName = (
    v.strOrNull('inter.broker.listener.name') ?? (raw.has('security.inter.broker.protocol') ? v.str('security.inter.broker.protocol') : listeners[0]!.name)
  ).toUpperCase();
  const interBrokerListener = listeners.find((l) => l.name === interBrokerListenerName);
  if (interBrokerListener === undefined) {
    throw new ConfigError(
      raw.has('security.inter.broker.protocol') && !raw.has('inter.broker.listener.name')
        ? `security.inter.broker.protocol ${interBrokerListenerName} needs a listener named ${interBrokerListenerName} in listeners (or set inter.broker.listener.name)`
        : `inter.broker.listener.name must be a listener name defined in listeners, got ${interBrokerListenerName}`,
      'inter.broker.listener.name',
    );
  }
  const listenerTls = new Map<string, ListenerTls>();
  for (const l of listeners) {
    if (!usesTls(l.securityProtocol)) continue;
    const settings = listenerSettings(raw, l.name, (key) => configDef(key)?.default ?? null);
    // As Kafka (KIP-684): on SASL_SSL, ssl.client.auth counts only in its listener.name.<l>. form.
    const prefixedClientAuth = raw.get(`listener.name.${l.name.toLowerCase()}.ssl.client.auth`) ?? 'none';
    listenerTls.set(
      l.name,
      buildListenerTls(l.name, l.securityProtocol === 'SASL_SSL' ? (key) => (key === 'ssl.client.auth' ? prefixedClientAuth : settings(key)) : settings),
    );
  }

  // SASL: the broker logs in to the other brokers with its own JAAS username/password.
  const sasl = saslServerConfig(raw, values, listeners, interBrokerListenerName);
  const interBrokerTls = interBrokerClientSecurity({ interBrokerListenerName, interBrokerSecurityProtocol: interBrokerListener.securityProtocol, listenerTls });
  const interBrokerSecurity: ClientSecurity | undefined = sasl.interBrokerLogin
    ? { ...(interBrokerTls ?? {}), protocol: interBrokerListener.securityProtocol, sasl: sasl.interBrokerLogin }
    : interBrokerTls;

  const logDirs = v.list('log.dirs') ?? [v.str('log.dir')];
  if (logDirs.length === 0) throw new ConfigError('Invalid value for configuration log.dirs: at least one directory is required', 'log.dirs');

  const retentionMs =
    v.numOrNull('log.retention.ms') ??
    (v.numOrNull('log.retention.minutes') !== null ? v.num('log.retention.minutes') * 60_000 : v.num('log.retention.hours') * 3_600_000);
  const zookeeperSessionTimeoutMs = v.num('zookeeper.session.timeout.ms');
  const flushSchedulerMs = v.num('log.flush.scheduler.interval.ms');

  // As Kafka: a frame allowed by socket.request.max.bytes must fit in the request memory.
  const queuedMaxRequestBytes = v.num('queued.max.request.bytes');
  if (queuedMaxRequestBytes === 0 || (queuedMaxRequestBytes > 0 && queuedMaxRequestBytes < v.num('socket.request.max.bytes'))) {
    throw new ConfigError(
      `queued.max.request.bytes (${queuedMaxRequestBytes}) must be -1 (unbounded) or at least socket.request.max.bytes (${v.num('socket.request.max.bytes')})`,
      'queued.max.request.bytes',
    );
  }

  // The connection limits as the socket server will read them (max.connections.per.ip 0 needs overrides, ...).
  connectionQuotaSettings(
    (key) => raw.get(key) ?? null,
    listeners.map((l) => l.name),
  );

  const brokerId = raw.has('broker.id') || !raw.has('node.id') ? v.num('broker.id') : v.num('node.id');
  const groupMin = v.num('group.min.session.timeout.ms');
  const groupMax = v.num('group.max.session.timeout.ms');
  if (groupMax < groupMin) {
    throw new ConfigError(
      `group.max.session.timeout.ms (${groupMax}) must be at least group.min.session.timeout.ms (${groupMin})`,
      'group.max.session.timeout.ms',
    );
  }

  const consumerTimeouts = consumerGroupTimeouts((key) => v.num(key));

  // As Kafka: a replica fetch must be able to wait its max.wait without timing out.
  if (v.num('replica.fetch.wait.max.ms') > v.num('replica.socket.timeout.ms')) {
    throw new ConfigError(
      `replica.socket.timeout.ms (${v.num('replica.socket.timeout.ms')}) should always be at least replica.fetch.wait.max.ms (${v.num('replica.fetch.wait.max.ms')}) to prevent unnecessary socket timeouts`,
      'replica.socket.timeout.ms',
    );
  }

  return {
    raw,
    values,
    brokerId,
    clusterId: v.strOrNull('cluster.id'),
    brokerRack: v.strOrNull('broker.rack'),
    zookeeperConnect: v.strOrNull('zookeeper.connect'),
    zookeeperSessionTimeoutMs,
    zookeeperConnectionTimeoutMs: v.numOrNull('zookeeper.connection.timeout.ms') ?? zookeeperSessionTimeoutMs,

    listeners,
    advertisedListeners,
    interBrokerListenerName,
    interBrokerSecurityProtocol: interBrokerListener.securityProtocol,
    listenerTls,
    sasl,
    ...(interBrokerSecurity ? { interBrokerSecurity } : {}),
    socketRequestMaxBytes: v.num('socket.request.max.bytes'),
    socketListenBacklogSize: v.num('socket.listen.backlog.size'),
    connectionsMaxIdleMs: v.num('connections.max.idle.ms'),
    quotaWindowNum: v.num('quota.window.num'),
    quotaWindowSizeSeconds: v.num('quota.window.size.seconds'),
    maxConnections: v.num('max.connections'),
    maxConnectionsPerIp: v.num('max.connections.per.ip'),
    queuedMaxRequests: v.num('queued.max.requests'),
    queuedMaxRequestBytes,
    socketRequestReceiveTimeoutMs: v.num('socket.request.receive.timeout.ms'),
    requestTimeoutMs: v.num('request.timeout.ms'),
    metricsPartitionLevelEnable: v.bool('metrics.partition.level.enable'),
    telemetryMaxBytes: v.num('telemetry.max.bytes'),
    metricsClientTelemetryMaxSeries: v.num('metrics.client.telemetry.max.series'),
    metricsRecordingEnable: v.bool('metrics.recording.enable'),

    logDirs,
    numPartitions: v.num('num.partitions'),
    defaultReplicationFactor: v.num('default.replication.factor'),
    autoCreateTopicsEnable: v.bool('auto.create.topics.enable'),
    autoCreateTopicsMaxPerRequest: v.num('auto.create.topics.max.per.request'),
    maxRequestPartitionSizeLimit: v.num('max.request.partition.size.limit'),
    transactionPartitionVerificationEnable: v.bool('transaction.partition.verification.enable'),
    maxPartitionsPerRequest: v.num('max.partitions.per.request'),
    maxBrokerPartitions: v.num('max.broker.partitions'),
    maxPartitions: v.num('max.partitions'),
    logSegmentMaxOpenFiles: v.num('log.segment.max.open.files'),
    deleteTopicEnable: v.bool('delete.topic.enable'),
    messageMaxBytes: v.num('message.max.bytes'),
    messageMaxDecompressionRatio: v.num('message.max.decompression.ratio'),
    logSegmentBytes: v.num('log.segment.bytes'),
    logRollMs: v.numOrNull('log.roll.ms') ?? v.num('log.roll.hours') * 3_600_000,
    logRollJitterMs: v.numOrNull('log.roll.jitter.ms') ?? v.num('log.roll.jitter.hours') * 3_600_000,
    logRetentionMs: retentionMs < 0 ? -1 : retentionMs,
    logRetentionBytes: v.num('log.retention.bytes'),
    logRetentionCheckIntervalMs: v.num('log.retention.check.interval.ms'),
    logSegmentDeleteDelayMs: v.num('log.segment.delete.delay.ms'),
    logIndexIntervalBytes: v.num('log.index.interval.bytes'),
    logIndexSizeMaxBytes: v.num('log.index.size.max.bytes'),
    logFlushIntervalMessages: v.num('log.flush.interval.messages'),
    logFlushIntervalMs: v.numOrNull('log.flush.interval.ms') ?? flushSchedulerMs,
    logFlushSchedulerIntervalMs: flushSchedulerMs,
    logFlushOffsetCheckpointIntervalMs: v.num('log.flush.offset.checkpoint.interval.ms'),
    logCleanupPolicy: v.list('log.cleanup.policy') ?? ['delete'],
    logCleanerEnable: v.bool('log.cleaner.enable'),
    numIoThreads: v.num('num.io.threads'),
    numNetworkThreads: v.num('num.network.threads'),
    logCleanerBackoffMs: v.num('log.cleaner.backoff.ms'),
    logCleanerThreads: v.num('log.cleaner.threads'),
    logCleanerDeleteRetentionMs: v.num('log.cleaner.delete.retention.ms'),
    logCleanerMinCleanableRatio: v.num('log.cleaner.min.cleanable.ratio'),
    logCleanerMinCompactionLagMs: v.num('log.cleaner.min.compaction.lag.ms'),
    logCleanerMaxCompactionLagMs: v.num('log.cleaner.max.compaction.lag.ms'),
    logMessageTimestampType: v.str('log.message.timestamp.type') === 'LogAppendTime' ? 'LogAppendTime' : 'CreateTime',
    logMessageTimestampDifferenceMaxMs: v.num('log.message.timestamp.difference.max.ms'),
    compressionType: v.str('compression.type'),
    minInsyncReplicas: v.num('min.insync.replicas'),
    fetchMaxBytes: v.num('fetch.max.bytes'),

    replicaLagTimeMaxMs: v.num('replica.lag.time.max.ms'),
    numReplicaFetchers: v.num('num.replica.fetchers'),
    replicaFetchMaxBytes: v.num('replica.fetch.max.bytes'),
    replicaFetchResponseMaxBytes: v.num('replica.fetch.response.max.bytes'),
    replicaFetchMinBytes: v.num('replica.fetch.min.bytes'),
    replicaFetchWaitMaxMs: v.num('replica.fetch.wait.max.ms'),
    replicaFetchBackoffMs: v.num('replica.fetch.backoff.ms'),
    replicaSocketTimeoutMs: v.num('replica.socket.timeout.ms'),
    replicaHighWatermarkCheckpointIntervalMs: v.num('replica.high.watermark.checkpoint.interval.ms'),
    uncleanLeaderElectionEnable: v.bool('unclean.leader.election.enable'),
    autoLeaderRebalanceEnable: v.bool('auto.leader.rebalance.enable'),
    leaderImbalanceCheckIntervalSeconds: v.num('leader.imbalance.check.interval.seconds'),
    leaderImbalancePerBrokerPercentage: v.num('leader.imbalance.per.broker.percentage'),
    controlledShutdownEnable: v.bool('controlled.shutdown.enable'),
    controlledShutdownMaxRetries: v.num('controlled.shutdown.max.retries'),
    controlledShutdownRetryBackoffMs: v.num('controlled.shutdown.retry.backoff.ms'),

    offsetsTopicNumPartitions: v.num('offsets.topic.num.partitions'),
    offsetsTopicReplicationFactor: v.num('offsets.topic.replication.factor'),
    offsetsTopicSegmentBytes: v.num('offsets.topic.segment.bytes'),
    offsetsRetentionMinutes: v.num('offsets.retention.minutes'),
    offsetsRetentionCheckIntervalMs: v.num('offsets.retention.check.interval.ms'),
    offsetsHistoryEnable: v.bool('offsets.history.enable'),
    offsetsHistoryRetentionMs: v.num('offsets.history.retention.ms'),
    offsetsHistoryAliveIntervalMs: v.num('offsets.history.alive.interval.ms'),
    offsetsCommitTimeoutMs: v.num('offsets.commit.timeout.ms'),
    offsetMetadataMaxBytes: v.num('offset.metadata.max.bytes'),
    groupInitialRebalanceDelayMs: v.num('group.initial.rebalance.delay.ms'),
    groupMinSessionTimeoutMs: groupMin,
    groupMaxSessionTimeoutMs: groupMax,
    groupMaxSize: v.num('group.max.size'),
    groupCoordinatorRebalanceProtocols: v.list('group.coordinator.rebalance.protocols') ?? [],
    groupConsumerSessionTimeoutMs: consumerTimeouts.session,
    groupConsumerHeartbeatIntervalMs: consumerTimeouts.heartbeat,
    groupConsumerMinSessionTimeoutMs: v.num('group.consumer.min.session.timeout.ms'),
    groupConsumerMaxSessionTimeoutMs: v.num('group.consumer.max.session.timeout.ms'),
    groupConsumerMinHeartbeatIntervalMs: v.num('group.consumer.min.heartbeat.interval.ms'),
    groupConsumerMaxHeartbeatIntervalMs: v.num('group.consumer.max.heartbeat.interval.ms'),
    groupConsumerMaxSize: v.num('group.consumer.max.size'),
    groupConsumerMigrationPolicy: v.str('group.consumer.migration.policy'),
    groupConsumerAssignors: v.list('group.consumer.assignors') ?? [],

    transactionalIdExpirationMs: v.num('transactional.id.expiration.ms'),
    transactionMaxTimeoutMs: v.num('transaction.max.timeout.ms'),
    transactionStateLogNumPartitions: v.num('transaction.state.log.num.partitions'),
    transactionStateLogReplicationFactor: v.num('transaction.state.log.replication.factor'),
    transactionStateLogMinIsr: v.num('transaction.state.log.min.isr'),
    transactionStateLogSegmentBytes: v.num('transaction.state.log.segment.bytes'),
    transactionAbortTimedOutTransactionCleanupIntervalMs: v.num('transaction.abort.timed.out.transaction.cleanup.interval.ms'),
    transactionRemoveExpiredTransactionCleanupIntervalMs: v.num('transaction.remove.expired.transaction.cleanup.interval.ms'),
    producerIdExpirationMs: v.num('producer.id.expiration.ms'),
    metricsListener: metricsListenerConfig(raw),
  };
}

/** group.consumer.session.timeout.ms and heartbeat.interval.ms, checked against their bounds as Kafka 4 does. */
function consumerGroupTimeouts(num: (key: string) => number): { session: number; heartbeat: number } {
  const within = (key: string, min: string, max: string): number => {
    const value = num(key);
    if (value < num(min) || value > num(max)) throw new ConfigError(`${key} (${value}) must be between ${min} (${num(min)}) and ${max} (${num(max)})`, key);
    return value;
  };
  const session = within('group.consumer.session.timeout.ms', 'group.consumer.min.session.timeout.ms', 'group.consumer.max.session.timeout.ms');
  const heartbeat = within('group.consumer.heartbeat.interval.ms', 'group.consumer.min.heartbeat.interval.ms', 'group.consumer.max.heartbeat.interval.ms');
  if (heartbeat >= session) {
    throw new ConfigError(
      `group.consumer.heartbeat.interval.ms (${heartbeat}) must be less than group.consumer.session.timeout.ms (${session})`,
      'group.consumer.heartbeat.interval.ms',
    );
  }
  return { session, heartbeat };
}

/** Defaults only (no file), e.g. for tests: `defaultBrokerConfig({ 'log.dirs': dir, listeners: 'PLAINTEXT://127.0.0.1:0' })`. */
export function defaultBrokerConfig(overrides: Record<string, string> = {}, warn?: WarnSink): BrokerConfig {
  return buildBrokerConfig(new Map(Object.entries(overrides)), warn);
}
