/**
 * Broker defaults → per-log configuration. A topic's own overrides (Kafka topic config names,
 * as stored in metadata) are merged over these when its logs are created or reconfigured.
 */
import type { LogDefaultsConfig } from './replication-config.js';
import { defaultLogConfig, logConfigFromProps, type CleanupPolicy, type LogConfig } from '../storage/config.js';

const NEVER = Number.MAX_SAFE_INTEGER;

export function brokerLogDefaults(cfg: LogDefaultsConfig): LogConfig {
  const base = defaultLogConfig();
  const policies = cfg.logCleanupPolicy.filter((p): p is CleanupPolicy => p === 'delete' || p === 'compact');
  return {
    ...base,
    segmentBytes: cfg.logSegmentBytes,
    segmentMs: cfg.logRollMs,
    segmentIndexBytes: cfg.logIndexSizeMaxBytes,
    indexIntervalBytes: cfg.logIndexIntervalBytes,
    maxMessageBytes: cfg.messageMaxBytes,
    messageTimestampType: cfg.logMessageTimestampType,
    flushMessages: Math.min(cfg.logFlushIntervalMessages, NEVER),
    flushMs: Math.min(cfg.logFlushIntervalMs, NEVER),
    retentionMs: cfg.logRetentionMs,
    retentionBytes: cfg.logRetentionBytes,
    cleanupPolicy: policies.length > 0 ? policies : base.cleanupPolicy,
    deleteRetentionMs: cfg.logCleanerDeleteRetentionMs,
    minCleanableDirtyRatio: cfg.logCleanerMinCleanableRatio,
    minCompactionLagMs: cfg.logCleanerMinCompactionLagMs,
    maxCompactionLagMs: Math.min(cfg.logCleanerMaxCompactionLagMs, NEVER),
    fileDeleteDelayMs: cfg.logSegmentDeleteDelayMs,
  };
}

/** The effective config of a topic's logs: its overrides over the broker defaults. */
export function topicLogConfig(defaults: LogConfig, overrides: Record<string, string>): LogConfig {
  return logConfigFromProps(overrides, defaults);
}

/** min.insync.replicas of a topic (topic override, else broker default). */
export function topicMinInsync(cfg: LogDefaultsConfig, overrides: Record<string, string>): number {
  const raw = overrides['min.insync.replicas'];
  const n = raw === undefined ? NaN : Number(raw);
  return Number.isInteger(n) && n > 0 ? n : cfg.minInsyncReplicas;
}
