/**
 * What replication/ reads of the broker's configuration: its id and log directories, the broker
 * defaults of topics' log configs, the ISR, produce and fetcher settings. server/config's
 * BrokerConfig has every field under the same name; server/broker.ts hands it over as this slice.
 */
import type { ClientSecurity } from '../security/client-security.js';

/** The broker defaults a topic's log config and min.insync.replicas start from (log-config.ts). */
export interface LogDefaultsConfig {
  logSegmentBytes: number;
  logRollMs: number;
  logIndexSizeMaxBytes: number;
  logIndexIntervalBytes: number;
  messageMaxBytes: number;
  logMessageTimestampType: 'CreateTime' | 'LogAppendTime';
  logFlushIntervalMessages: number;
  logFlushIntervalMs: number;
  logRetentionMs: number;
  logRetentionBytes: number;
  logCleanupPolicy: readonly string[];
  logCleanerDeleteRetentionMs: number;
  logCleanerMinCleanableRatio: number;
  logCleanerMinCompactionLagMs: number;
  logCleanerMaxCompactionLagMs: number;
  logSegmentDeleteDelayMs: number;
  minInsyncReplicas: number;
}

export interface ReplicationConfig extends LogDefaultsConfig {
  brokerId: number;
  logDirs: readonly string[];
  /** Appends: the inflation cap of produced batches, the default timestamp skew, acks=all waits. */
  messageMaxDecompressionRatio: number;
  logMessageTimestampDifferenceMaxMs: number;
  offsetsCommitTimeoutMs: number;
  requestTimeoutMs: number;
  /** The ISR: replica.lag.time.max.ms; producer state: producer.id.expiration.ms. */
  replicaLagTimeMaxMs: number;
  producerIdExpirationMs: number;
  /** The replica fetchers (cluster mode). */
  numReplicaFetchers: number;
  replicaFetchMaxBytes: number;
  replicaFetchResponseMaxBytes: number;
  replicaFetchMinBytes: number;
  replicaFetchWaitMaxMs: number;
  replicaFetchBackoffMs: number;
  replicaSocketTimeoutMs: number;
  /** How the fetchers secure their connections to leaders; undefined = PLAINTEXT. */
  interBrokerSecurity?: ClientSecurity;
}
