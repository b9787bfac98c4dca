// Helpers for DescribeConfigs: broker config entries with their source, and the topic-level
// config defaults that derive from broker configs (Kafka's "synonyms").
import { CONFIG_TYPE_CODES, type ConfigDef } from './config-def.js';
import { BROKER_CONFIG_DEFS, configDef } from './defs.js';

/** What describing needs of the broker's config: its keys as configured (BrokerConfig has them). */
export interface StaticConfigSource {
  raw: ReadonlyMap<string, string>;
}

/** The broker settings topic defaults derive from (BrokerConfig has them). */
export interface TopicDefaultsSource extends StaticConfigSource {
  logCleanupPolicy: readonly string[];
  logFlushIntervalMs: number;
  logRetentionMs: number;
  logRollMs: number;
  logRollJitterMs: number;
}

export type ConfigSourceName = 'STATIC_BROKER_CONFIG' | 'DEFAULT_CONFIG';
/** Kafka's DescribeConfigs source codes. */
export const CONFIG_SOURCE_CODES = {
  UNKNOWN: 0,
  TOPIC_CONFIG: 1,
  DYNAMIC_BROKER_CONFIG: 2,
  DYNAMIC_DEFAULT_BROKER_CONFIG: 3,
  STATIC_BROKER_CONFIG: 4,
  DEFAULT_CONFIG: 5,
  DYNAMIC_BROKER_LOGGER_CONFIG: 6,
} as const;

export interface BrokerConfigEntry {
  name: string;
  /** Text as configured or Kafka's default text; null when sensitive or without default. */
  value: string | null;
  source: ConfigSourceName;
  sourceCode: number;
  readOnly: boolean;
  isDefault: boolean;
  sensitive: boolean;
  /** DescribeConfigs configType code (BOOLEAN=1 ... PASSWORD=9). */
  configType: number;
  documentation: string;
}

/** All broker configs (or only `names`; unknown names are skipped), in table order. */
export function describeBrokerConfigs(config: StaticConfigSource, names?: readonly string[] | null): BrokerConfigEntry[] {
  const defs: ConfigDef[] = names == null ? [...BROKER_CONFIG_DEFS] : names.map((n) => configDef(n)).filter((d): d is ConfigDef => d !== undefined);
  return defs.map((def) => {
    const configured = config.raw.get(def.name);
    const source: ConfigSourceName = configured !== undefined ? 'STATIC_BROKER_CONFIG' : 'DEFAULT_CONFIG';
    const text = configured !== undefined ? configured.trim() : def.default;
    return {
      name: def.name,
      value: def.sensitive ? null : text,
      source,
      sourceCode: CONFIG_SOURCE_CODES[source],
      // Static configs cannot be changed at run time in Fjord (no dynamic broker configs).
      readOnly: true,
      isDefault: source === 'DEFAULT_CONFIG',
      sensitive: def.sensitive,
      configType: CONFIG_TYPE_CODES[def.type],
      documentation: def.doc,
    };
  });
}

/** Topic config name → the broker config that supplies its default. */
export const TOPIC_CONFIG_SYNONYMS: Readonly<Record<string, string>> = {
  'cleanup.policy': 'log.cleanup.policy',
  'compression.type': 'compression.type',
  'delete.retention.ms': 'log.cleaner.delete.retention.ms',
  'file.delete.delay.ms': 'log.segment.delete.delay.ms',
  'flush.messages': 'log.flush.interval.messages',
  'flush.ms': 'log.flush.interval.ms',
  'index.interval.bytes': 'log.index.interval.bytes',
  'max.compaction.lag.ms': 'log.cleaner.max.compaction.lag.ms',
  'max.message.bytes': 'message.max.bytes',
  'message.downconversion.enable': 'log.message.downconversion.enable',
  'message.timestamp.difference.max.ms': 'log.message.timestamp.difference.max.ms',
  'message.timestamp.type': 'log.message.timestamp.type',
  'min.cleanable.dirty.ratio': 'log.cleaner.min.cleanable.ratio',
  'min.compaction.lag.ms': 'log.cleaner.min.compaction.lag.ms',
  'min.insync.replicas': 'min.insync.replicas',
  preallocate: 'log.preallocate',
  'retention.bytes': 'log.retention.bytes',
  'retention.ms': 'log.retention.ms',
  'segment.bytes': 'log.segment.bytes',
  'segment.index.bytes': 'log.index.size.max.bytes',
  'segment.jitter.ms': 'log.roll.jitter.ms',
  'segment.ms': 'log.roll.ms',
  'unclean.leader.election.enable': 'unclean.leader.election.enable',
};

/**
 * Effective defaults of topic-level configs for this broker (after precedence rules, e.g.
 * retention.ms from log.retention.hours), as the strings DescribeConfigs returns.
 */
export function topicConfigDefaults(config: TopicDefaultsSource): Map<string, string> {
  const resolved: Record<string, string | number | boolean | string[]> = {
    'cleanup.policy': config.logCleanupPolicy.join(','),
    'flush.ms': longText(config.logFlushIntervalMs),
    'retention.ms': config.logRetentionMs,
    'segment.ms': config.logRollMs,
    'segment.jitter.ms': config.logRollJitterMs,
  };
  const out = new Map<string, string>();
  for (const [topicKey, brokerKey] of Object.entries(TOPIC_CONFIG_SYNONYMS)) {
    const direct = resolved[topicKey];
    if (direct !== undefined) {
      out.set(topicKey, String(direct));
      continue;
    }
    const raw = config.raw.get(brokerKey);
    out.set(topicKey, raw !== undefined ? raw.trim() : (configDef(brokerKey)?.default ?? ''));
  }
  return out;
}

/** Long.MAX_VALUE does not survive the trip through a JS number; print it as Kafka does. */
function longText(n: number): string {
  return n >= 2 ** 63 - 1 ? '9223372036854775807' : String(n);
}
