/**
 * Per-log configuration with Kafka's topic-level names and defaults.
 * Sizes and times are JS numbers; Kafka's "Long.MAX_VALUE" defaults become Number.MAX_SAFE_INTEGER.
 */
export type TimestampType = 'CreateTime' | 'LogAppendTime';
export type CleanupPolicy = 'delete' | 'compact';

export interface LogConfig {
  segmentBytes: number;
  segmentMs: number;
  segmentIndexBytes: number;
  indexIntervalBytes: number;
  maxMessageBytes: number;
  messageTimestampType: TimestampType;
  flushMessages: number;
  flushMs: number;
  retentionMs: number;
  retentionBytes: number;
  cleanupPolicy: CleanupPolicy[];
  deleteRetentionMs: number;
  minCleanableDirtyRatio: number;
  minCompactionLagMs: number;
  maxCompactionLagMs: number;
  fileDeleteDelayMs: number;
}

const NEVER = Number.MAX_SAFE_INTEGER;

export function defaultLogConfig(): LogConfig {
  return {
    segmentBytes: 1024 * 1024 * 1024,
    segmentMs: 7 * 24 * 3600 * 1000,
    segmentIndexBytes: 10 * 1024 * 1024,
    indexIntervalBytes: 4096,
    maxMessageBytes: 1048588,
    messageTimestampType: 'CreateTime',
    flushMessages: NEVER,
    flushMs: NEVER,
    retentionMs: 7 * 24 * 3600 * 1000,
    retentionBytes: -1,
    cleanupPolicy: ['delete'],
    deleteRetentionMs: 86400000,
    minCleanableDirtyRatio: 0.5,
    minCompactionLagMs: 0,
    maxCompactionLagMs: NEVER,
    fileDeleteDelayMs: 60000,
  };
}

type NumericKey = {
  [K in keyof LogConfig]: LogConfig[K] extends number ? K : never;
}[keyof LogConfig];

/** Kafka topic config name → numeric LogConfig field. */
const NUMERIC_PROPS: Record<string, NumericKey> = {
  'segment.bytes': 'segmentBytes',
  'segment.ms': 'segmentMs',
  'segment.index.bytes': 'segmentIndexBytes',
  'index.interval.bytes': 'indexIntervalBytes',
  'max.message.bytes': 'maxMessageBytes',
  'flush.messages': 'flushMessages',
  'flush.ms': 'flushMs',
  'retention.ms': 'retentionMs',
  'retention.bytes': 'retentionBytes',
  'delete.retention.ms': 'deleteRetentionMs',
  'min.cleanable.dirty.ratio': 'minCleanableDirtyRatio',
  'min.compaction.lag.ms': 'minCompactionLagMs',
  'max.compaction.lag.ms': 'maxCompactionLagMs',
  'file.delete.delay.ms': 'fileDeleteDelayMs',
};

/** Broker-level (server.properties) names for the same settings, e.g. log.segment.bytes. */
const BROKER_ALIASES: Record<string, string> = {
  'log.segment.bytes': 'segment.bytes',
  'log.roll.ms': 'segment.ms',
  'log.index.size.max.bytes': 'segment.index.bytes',
  'log.index.interval.bytes': 'index.interval.bytes',
  'message.max.bytes': 'max.message.bytes',
  'log.flush.interval.messages': 'flush.messages',
  'log.flush.interval.ms': 'flush.ms',
  'log.retention.ms': 'retention.ms',
  'log.retention.bytes': 'retention.bytes',
  'log.cleaner.delete.retention.ms': 'delete.retention.ms',
  'log.cleaner.min.cleanable.ratio': 'min.cleanable.dirty.ratio',
  'log.cleaner.min.compaction.lag.ms': 'min.compaction.lag.ms',
  'log.cleaner.max.compaction.lag.ms': 'max.compaction.lag.ms',
  'log.segment.delete.delay.ms': 'file.delete.delay.ms',
  'log.message.timestamp.type': 'message.timestamp.type',
  'log.cleanup.policy': 'cleanup.policy',
};

export class InvalidConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'InvalidConfigError';
  }
}

function parseNumber(name: string, raw: string): number {
  const value = Number(raw.trim());
  if (raw.trim() === '' || !Number.isFinite(value)) throw new InvalidConfigError(`invalid value "${raw}" for ${name}`);
  // Kafka's Long.MAX_VALUE and friends do not fit a double exactly; clamp to the safe range.
  return Math.min(value, NEVER);
}

/**
 * Builds a LogConfig from Kafka-named properties (topic names like `segment.bytes`, or broker
 * names like `log.segment.bytes`). Unknown names are ignored: they belong to other modules.
 */
export function logConfigFromProps(props: Record<string, string>, defaults: LogConfig = defaultLogConfig()): LogConfig {
  const cfg: LogConfig = { ...defaults, cleanupPolicy: [...defaults.cleanupPolicy] };
  const entries = Object.entries(props).map(([k, v]) => [BROKER_ALIASES[k] ?? k, v] as const);
  // log.retention.hours / minutes are broker-only conveniences; the ms form wins when both are set.
  for (const [k, v] of Object.entries(props)) {
    if (k === 'log.retention.hours' && props['log.retention.ms'] === undefined && props['log.retention.minutes'] === undefined)
      cfg.retentionMs = parseNumber(k, v) * 3600000;
    if (k === 'log.retention.minutes' && props['log.retention.ms'] === undefined) cfg.retentionMs = parseNumber(k, v) * 60000;
    if (k === 'log.roll.hours' && props['log.roll.ms'] === undefined) cfg.segmentMs = parseNumber(k, v) * 3600000;
  }
  for (const [name, raw] of entries) {
    const key = NUMERIC_PROPS[name];
    if (key) {
      cfg[key] = parseNumber(name, raw);
    } else if (name === 'message.timestamp.type') {
      if (raw !== 'CreateTime' && raw !== 'LogAppendTime') throw new InvalidConfigError(`invalid value "${raw}" for ${name}`);
      cfg.messageTimestampType = raw;
    } else if (name === 'cleanup.policy') {
      const parts = raw
        .split(',')
        .map((p) => p.trim())
        .filter((p) => p !== '');
      const policies: CleanupPolicy[] = [];
      for (const p of parts) {
        if (p !== 'delete' && p !== 'compact') throw new InvalidConfigError(`invalid value "${raw}" for ${name}`);
        if (!policies.includes(p)) policies.push(p);
      }
      cfg.cleanupPolicy = policies;
    }
  }
  validateLogConfig(cfg);
  return cfg;
}

export function validateLogConfig(cfg: LogConfig): void {
  if (cfg.segmentBytes < 14) throw new InvalidConfigError('segment.bytes must be at least 14');
  if (cfg.segmentIndexBytes < 8) throw new InvalidConfigError('segment.index.bytes must be at least 8');
  if (cfg.indexIntervalBytes < 0) throw new InvalidConfigError('index.interval.bytes must be >= 0');
  if (cfg.maxMessageBytes < 0) throw new InvalidConfigError('max.message.bytes must be >= 0');
  if (cfg.minCleanableDirtyRatio < 0 || cfg.minCleanableDirtyRatio > 1) throw new InvalidConfigError('min.cleanable.dirty.ratio must be in [0, 1]');
}

export function isCompacted(cfg: LogConfig): boolean {
  return cfg.cleanupPolicy.includes('compact');
}
export function isDeleteRetained(cfg: LogConfig): boolean {
  return cfg.cleanupPolicy.includes('delete');
}
