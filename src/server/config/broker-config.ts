// The typed broker configuration: Kafka key names mapped to camelCase fields (built by
// build-broker-config.ts). It stays in server/ because it is the assembled whole: listeners' TLS
// contexts and SASL logins (security/), connection limits (server/network); the layers below
// server/ take narrow slices of it (ReplicationConfig, the coordinators' configs), which
// broker.ts maps.
import type { ConfigValue } from '../../config/values.js';
import type { ClientSecurity } from '../../security/client-security.js';
import type { SaslServerConfig } from '../../security/sasl/config.js';
import type { ListenerSpec } from '../network/listeners.js';
import type { ListenerTls } from '../../security/tls/server-tls.js';
import type { SecurityProtocol } from '../../security/security-protocol.js';
import type { MetricsListenerConfig } from '../metrics/listener-config.js';

export interface BrokerConfig {
  /** Keys as given in the file and overrides (after `--override`), unparsed. */
  raw: Map<string, string>;
  /** Every known key with its typed value (default or configured). */
  values: Map<string, ConfigValue>;

  brokerId: number;
  clusterId: string | null;
  brokerRack: string | null;
  /** null = embedded single-broker mode. */
  zookeeperConnect: string | null;
  zookeeperSessionTimeoutMs: number;
  zookeeperConnectionTimeoutMs: number;

  listeners: ListenerSpec[];
  advertisedListeners: ListenerSpec[];
  interBrokerListenerName: string;
  /** The protocol of the inter-broker listener (security.inter.broker.protocol, or the listener's). */
  interBrokerSecurityProtocol: SecurityProtocol;
  /** TLS of each SSL / SASL_SSL listener, by listener name (ssl.* with listener.name.<l>. overrides). */
  listenerTls: ReadonlyMap<string, ListenerTls>;
  /** SASL listeners' mechanisms and users, the broker's own SASL login (src/security/sasl). */
  sasl: SaslServerConfig;
  /**
   * How this broker secures its own connections to other brokers (controller, fetchers, markers,
   * controlled shutdown): the inter-broker listener's TLS as a client, and its SASL login;
   * undefined = PLAINTEXT.
   */
  interBrokerSecurity?: ClientSecurity;
  socketRequestMaxBytes: number;
  socketListenBacklogSize: number;
  connectionsMaxIdleMs: number;
  /** Client quotas: quota.window.num samples of quota.window.size.seconds. */
  quotaWindowNum: number;
  quotaWindowSizeSeconds: number;
  maxConnections: number;
  maxConnectionsPerIp: number;
  queuedMaxRequests: number;
  /** queued.max.request.bytes; -1 = unbounded. */
  queuedMaxRequestBytes: number;
  /** socket.request.receive.timeout.ms; 0 = no deadline. */
  socketRequestReceiveTimeoutMs: number;
  requestTimeoutMs: number;
  /** metrics.partition.level.enable: whether per-partition metric families are exported. */
  metricsPartitionLevelEnable: boolean;
  /** telemetry.max.bytes and metrics.client.telemetry.max.series (KIP-714, server/telemetry). */
  telemetryMaxBytes: number;
  metricsClientTelemetryMaxSeries: number;
  /** metrics.recording.enable: whether requests and produce/fetch record request and topic metrics. */
  metricsRecordingEnable: boolean;

  logDirs: string[];
  numPartitions: number;
  defaultReplicationFactor: number;
  autoCreateTopicsEnable: boolean;
  /** auto.create.topics.max.per.request: topics one Metadata or Produce request may auto-create. */
  autoCreateTopicsMaxPerRequest: number;
  /** transaction.partition.verification.enable: KIP-890 verification of transactional produces (dynamic). */
  transactionPartitionVerificationEnable: boolean;
  /** max.request.partition.size.limit: partitions in one DescribeTopicPartitions response. */
  maxRequestPartitionSizeLimit: number;
  deleteTopicEnable: boolean;
  /** New partitions one CreateTopics/CreatePartitions request may add in total. */
  maxPartitionsPerRequest: number;
  /** KIP-578 max.broker.partitions: partitions hosted by this broker. */
  maxBrokerPartitions: number;
  /** KIP-578 max.partitions: partitions in the cluster. */
  maxPartitions: number;
  /** Open segment files at once; -1 = derived from the open-file limit. */
  logSegmentMaxOpenFiles: number;
  messageMaxBytes: number;
  /** message.max.decompression.ratio: produced batches inflate to at most max.message.bytes times this. */
  messageMaxDecompressionRatio: number;
  logSegmentBytes: number;
  logRollMs: number;
  logRollJitterMs: number;
  /** -1 = no time limit. */
  logRetentionMs: number;
  /** -1 = no size limit. */
  logRetentionBytes: number;
  logRetentionCheckIntervalMs: number;
  logSegmentDeleteDelayMs: number;
  logIndexIntervalBytes: number;
  logIndexSizeMaxBytes: number;
  logFlushIntervalMessages: number;
  logFlushIntervalMs: number;
  logFlushSchedulerIntervalMs: number;
  logFlushOffsetCheckpointIntervalMs: number;
  logCleanupPolicy: string[];
  logCleanerEnable: boolean;
  /** num.io.threads: threads hosting partitions (1 = the main thread only; N > 1 = N-1 shard workers, embedded and cluster mode). */
  numIoThreads: number;
  /** num.network.threads: threads owning client connections (1 = the main thread; M > 1 = M network threads, server/network/network-threads.ts). */
  numNetworkThreads: number;
  logCleanerBackoffMs: number;
  /** log.cleaner.threads: with shard workers, how many logs the broker cleans at once (each shard cleans one at a time). */
  logCleanerThreads: number;
  logCleanerDeleteRetentionMs: number;
  logCleanerMinCleanableRatio: number;
  logCleanerMinCompactionLagMs: number;
  logCleanerMaxCompactionLagMs: number;
  logMessageTimestampType: 'CreateTime' | 'LogAppendTime';
  logMessageTimestampDifferenceMaxMs: number;
  compressionType: string;
  minInsyncReplicas: number;
  fetchMaxBytes: number;

  replicaLagTimeMaxMs: number;
  numReplicaFetchers: number;
  replicaFetchMaxBytes: number;
  replicaFetchResponseMaxBytes: number;
  replicaFetchMinBytes: number;
  replicaFetchWaitMaxMs: number;
  replicaFetchBackoffMs: number;
  replicaSocketTimeoutMs: number;
  replicaHighWatermarkCheckpointIntervalMs: number;
  uncleanLeaderElectionEnable: boolean;
  autoLeaderRebalanceEnable: boolean;
  leaderImbalanceCheckIntervalSeconds: number;
  leaderImbalancePerBrokerPercentage: number;
  controlledShutdownEnable: boolean;
  controlledShutdownMaxRetries: number;
  controlledShutdownRetryBackoffMs: number;

  offsetsTopicNumPartitions: number;
  /** As configured (Kafka default 3); the broker caps it to the number of live brokers. */
  offsetsTopicReplicationFactor: number;
  offsetsTopicSegmentBytes: number;
  offsetsRetentionMinutes: number;
  offsetsRetentionCheckIntervalMs: number;
  /** offsets.history.*: the offset history (__consumer_offsets_history). */
  offsetsHistoryEnable: boolean;
  offsetsHistoryRetentionMs: number;
  offsetsHistoryAliveIntervalMs: number;
  offsetsCommitTimeoutMs: number;
  offsetMetadataMaxBytes: number;
  groupInitialRebalanceDelayMs: number;
  groupMinSessionTimeoutMs: number;
  groupMaxSessionTimeoutMs: number;
  groupMaxSize: number;
  /** group.coordinator.rebalance.protocols */
  groupCoordinatorRebalanceProtocols: string[];
  groupConsumerSessionTimeoutMs: number;
  groupConsumerHeartbeatIntervalMs: number;
  /** Bounds of consumer.session.timeout.ms and consumer.heartbeat.interval.ms (per-group configs) too. */
  groupConsumerMinSessionTimeoutMs: number;
  groupConsumerMaxSessionTimeoutMs: number;
  groupConsumerMinHeartbeatIntervalMs: number;
  groupConsumerMaxHeartbeatIntervalMs: number;
  groupConsumerMaxSize: number;
  /** group.consumer.migration.policy (KIP-848 online migration). */
  groupConsumerMigrationPolicy: string;
  /** group.consumer.assignors, as written (names or class names). */
  groupConsumerAssignors: string[];

  transactionalIdExpirationMs: number;
  transactionMaxTimeoutMs: number;
  transactionStateLogNumPartitions: number;
  transactionStateLogReplicationFactor: number;
  transactionStateLogMinIsr: number;
  transactionStateLogSegmentBytes: number;
  transactionAbortTimedOutTransactionCleanupIntervalMs: number;
  transactionRemoveExpiredTransactionCleanupIntervalMs: number;
  producerIdExpirationMs: number;
  /** metrics.listener and its TLS and basic auth; null = off. */
  metricsListener: MetricsListenerConfig | null;
}
