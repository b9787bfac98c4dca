/**
 * The replication config a shard worker gets in its workerData: every field of
 * ReplicationConfig but the inter-broker security (cluster mode's, which embedded mode's shards
 * never use; its TLS material need not cross). BrokerConfig, which the broker passes as its
 * ReplicationConfig, holds more than structured clone takes, so the fields are named here.
 */
import type { ReplicationConfig } from '../../replication-config.js';

export function cloneableReplicationConfig(c: ReplicationConfig): ReplicationConfig {
  return {
    brokerId: c.brokerId,
    logDirs: [...c.logDirs],
    logSegmentBytes: c.logSegmentBytes,
    logRollMs: c.logRollMs,
    logIndexSizeMaxBytes: c.logIndexSizeMaxBytes,
    logIndexIntervalBytes: c.logIndexIntervalBytes,
    messageMaxBytes: c.messageMaxBytes,
    logMessageTimestampType: c.logMessageTimestampType,
    logFlushIntervalMessages: c.logFlushIntervalMessages,
    logFlushIntervalMs: c.logFlushIntervalMs,
    logRetentionMs: c.logRetentionMs,
    logRetentionBytes: c.logRetentionBytes,
    logCleanupPolicy: [...c.logCleanupPolicy],
    logCleanerDeleteRetentionMs: c.logCleanerDeleteRetentionMs,
    logCleanerMinCleanableRatio: c.logCleanerMinCleanableRatio,
    logCleanerMinCompactionLagMs: c.logCleanerMinCompactionLagMs,
    logCleanerMaxCompactionLagMs: c.logCleanerMaxCompactionLagMs,
    logSegmentDeleteDelayMs: c.logSegmentDeleteDelayMs,
    minInsyncReplicas: c.minInsyncReplicas,
    messageMaxDecompressionRatio: c.messageMaxDecompressionRatio,
    logMessageTimestampDifferenceMaxMs: c.logMessageTimestampDifferenceMaxMs,
    offsetsCommitTimeoutMs: c.offsetsCommitTimeoutMs,
    requestTimeoutMs: c.requestTimeoutMs,
    replicaLagTimeMaxMs: c.replicaLagTimeMaxMs,
    producerIdExpirationMs: c.producerIdExpirationMs,
    numReplicaFetchers: c.numReplicaFetchers,
    replicaFetchMaxBytes: c.replicaFetchMaxBytes,
    replicaFetchResponseMaxBytes: c.replicaFetchResponseMaxBytes,
    replicaFetchMinBytes: c.replicaFetchMinBytes,
    replicaFetchWaitMaxMs: c.replicaFetchWaitMaxMs,
    replicaFetchBackoffMs: c.replicaFetchBackoffMs,
    replicaSocketTimeoutMs: c.replicaSocketTimeoutMs,
  };
}
