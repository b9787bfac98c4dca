// The table of TOPIC-level configs: Kafka's names, types, validators and the broker configs
// ("synonyms") their defaults come from. CreateTopics/AlterConfigs validate against it and
// DescribeConfigs resolves a topic's effective values through it.
import { ErrorCode, KafkaError } from '../protocol/errors.js';
import type { ConfigDef, ConfigType, ConfigValidator } from './config-def.js';
import { configDef } from './defs.js';
import { ConfigError } from './errors.js';
import { parseConfigValue } from './values.js';
import { CONFIG_SOURCE_CODES } from './describe.js';
import { configSynonyms, mergedBrokerValue, type BrokerConfigLayers, type ConfigSynonymValue } from './config-synonyms.js';

/** A broker config that supplies a topic config's default; `toTopic` converts units (hours → ms). */
export interface TopicConfigSynonym {
  brokerKey: string;
  toTopic?: (brokerText: string) => string;
}

export interface TopicConfigDef extends ConfigDef {
  /** Broker keys in precedence order (e.g. log.retention.ms before log.retention.hours). */
  synonyms: readonly TopicConfigSynonym[];
}

const LONG_MAX = '9223372036854775807';
const COMPRESSION_TYPES = ['uncompressed', 'zstd', 'lz4', 'snappy', 'gzip', 'producer'] as const;

const times =
  (factor: number) =>
  (text: string): string => {
    const n = Number(text.trim());
    return Number.isFinite(n) ? String(n * factor) : text;
  };
const syn = (brokerKey: string, toTopic?: (t: string) => string): TopicConfigSynonym => ({ brokerKey, toTopic });

function topicDef(
  name: string,
  type: ConfigType,
  defaultValue: string | null,
  doc: string,
  synonyms: readonly TopicConfigSynonym[],
  validator?: ConfigValidator,
): TopicConfigDef {
  return { name, type, default: defaultValue, doc, sensitive: false, validator, synonyms };
}

export const TOPIC_CONFIG_DEFS: readonly TopicConfigDef[] = [
  topicDef('cleanup.policy', 'list', 'delete', 'Retention policy of old segments: delete and/or compact.', [syn('log.cleanup.policy')], {
    oneOf: ['delete', 'compact'],
  }),
  topicDef('compression.type', 'string', 'producer', "Final compression of the topic; producer keeps the producer's codec.", [syn('compression.type')], {
    oneOf: COMPRESSION_TYPES,
  }),
  topicDef('delete.retention.ms', 'long', '86400000', 'How long tombstones are retained in compacted topics.', [syn('log.cleaner.delete.retention.ms')], {
    min: 0,
  }),
  topicDef('file.delete.delay.ms', 'long', '60000', 'Wait before a deleted segment file is removed.', [syn('log.segment.delete.delay.ms')], { min: 0 }),
  topicDef('flush.messages', 'long', LONG_MAX, 'Fsync the log after this many messages.', [syn('log.flush.interval.messages')], { min: 1 }),
  topicDef('flush.ms', 'long', LONG_MAX, 'Fsync the log after this long.', [syn('log.flush.interval.ms'), syn('log.flush.scheduler.interval.ms')], { min: 0 }),
  topicDef('follower.replication.throttled.replicas', 'list', '', 'Replicas throttled on the follower side (accepted, not enforced).', []),
  topicDef('index.interval.bytes', 'int', '4096', 'Bytes between offset index entries.', [syn('log.index.interval.bytes')], { min: 0 }),
  topicDef('leader.replication.throttled.replicas', 'list', '', 'Replicas throttled on the leader side (accepted, not enforced).', []),
  topicDef('local.retention.bytes', 'long', '-2', 'Tiered storage local retention size (no tiered storage in Fjord).', [syn('log.local.retention.bytes')], {
    min: -2,
  }),
  topicDef('local.retention.ms', 'long', '-2', 'Tiered storage local retention time (no tiered storage in Fjord).', [syn('log.local.retention.ms')], {
    min: -2,
  }),
  topicDef('max.compaction.lag.ms', 'long', LONG_MAX, 'Maximum time a record stays ineligible for compaction.', [syn('log.cleaner.max.compaction.lag.ms')], {
    min: 1,
  }),
  topicDef('max.message.bytes', 'int', '1048588', 'Largest record batch size accepted.', [syn('message.max.bytes')], { min: 0 }),
  topicDef('message.downconversion.enable', 'boolean', 'true', 'Down-convert batches for old fetch versions.', [syn('log.message.downconversion.enable')]),
  topicDef('message.format.version', 'string', '3.0-IV1', 'Legacy message format version (ignored since Kafka 3.0).', [syn('log.message.format.version')]),
  topicDef(
    'message.timestamp.after.max.ms',
    'long',
    LONG_MAX,
    'Max allowed time a record timestamp may be ahead of the broker.',
    [syn('log.message.timestamp.after.max.ms')],
    { min: 0 },
  ),
  topicDef(
    'message.timestamp.before.max.ms',
    'long',
    LONG_MAX,
    'Max allowed time a record timestamp may be behind the broker.',
    [syn('log.message.timestamp.before.max.ms')],
    { min: 0 },
  ),
  topicDef(
    'message.timestamp.difference.max.ms',
    'long',
    LONG_MAX,
    'Max allowed gap between record and broker time.',
    [syn('log.message.timestamp.difference.max.ms')],
    { min: 0 },
  ),
  topicDef('message.timestamp.type', 'string', 'CreateTime', 'CreateTime or LogAppendTime.', [syn('log.message.timestamp.type')], {
    oneOf: ['CreateTime', 'LogAppendTime'],
  }),
  topicDef('min.cleanable.dirty.ratio', 'double', '0.5', 'Dirty ratio that makes a log eligible for compaction.', [syn('log.cleaner.min.cleanable.ratio')], {
    min: 0,
    max: 1,
  }),
  topicDef('min.compaction.lag.ms', 'long', '0', 'Minimum time a record stays uncompacted.', [syn('log.cleaner.min.compaction.lag.ms')], { min: 0 }),
  topicDef('min.insync.replicas', 'int', '1', 'Replicas that must acknowledge an acks=all write.', [syn('min.insync.replicas')], { min: 1 }),
  topicDef('preallocate', 'boolean', 'false', 'Preallocate segment files (accepted, not acted on).', [syn('log.preallocate')]),
  topicDef('remote.storage.enable', 'boolean', 'false', 'Tiered storage (not supported by Fjord).', []),
  topicDef('retention.bytes', 'long', '-1', 'Partition size above which old segments are deleted; -1 = no limit.', [syn('log.retention.bytes')]),
  topicDef(
    'retention.ms',
    'long',
    '604800000',
    'Age after which old segments are deleted; -1 = no limit.',
    [syn('log.retention.ms'), syn('log.retention.minutes', times(60_000)), syn('log.retention.hours', times(3_600_000))],
    { min: -1 },
  ),
  topicDef('segment.bytes', 'int', '1073741824', 'Segment file size before rolling.', [syn('log.segment.bytes')], { min: 14 }),
  topicDef('segment.index.bytes', 'int', '10485760', 'Size of the offset index of a segment.', [syn('log.index.size.max.bytes')], { min: 4 }),
  topicDef(
    'segment.jitter.ms',
    'long',
    '0',
    'Random jitter subtracted from the roll time.',
    [syn('log.roll.jitter.ms'), syn('log.roll.jitter.hours', times(3_600_000))],
    { min: 0 },
  ),
  topicDef('segment.ms', 'long', '604800000', 'Roll a segment after this age.', [syn('log.roll.ms'), syn('log.roll.hours', times(3_600_000))], { min: 1 }),
  topicDef('unclean.leader.election.enable', 'boolean', 'false', 'Allow out-of-sync replicas to become leader.', [syn('unclean.leader.election.enable')]),
];

const TOPIC_DEFS_BY_NAME = new Map(TOPIC_CONFIG_DEFS.map((d) => [d.name, d]));

export function topicConfigDef(name: string): TopicConfigDef | undefined {
  return TOPIC_DEFS_BY_NAME.get(name);
}

/**
 * Checks one topic config; throws KafkaError(INVALID_CONFIG) with Kafka's wording
 * ("Unknown topic config name: x", "Invalid value abc for configuration retention.ms: ...").
 */
export function validateTopicConfig(name: string, value: string | null): void {
  const def = topicConfigDef(name);
  if (!def) throw new KafkaError(ErrorCode.INVALID_CONFIG, `Unknown topic config name: ${name}`);
  if (value === null) {
    throw new KafkaError(ErrorCode.INVALID_CONFIG, `Null value not supported for topic configs: ${name}`);
  }
  try {
    parseConfigValue(def, value);
  } catch (err) {
    if (err instanceof ConfigError) throw new KafkaError(ErrorCode.INVALID_CONFIG, err.message);
    throw err;
  }
}

export function validateTopicConfigs(configs: Readonly<Record<string, string | null>>): void {
  for (const [name, value] of Object.entries(configs)) validateTopicConfig(name, value);
}

export type { BrokerConfigLayers, ConfigSynonymValue } from './config-synonyms.js';

export interface ResolvedTopicConfig {
  def: TopicConfigDef;
  /** Effective value in the topic config's units. */
  value: string | null;
  source: number;
  /** Kafka's synonym list: the topic override, then broker keys by source precedence (config-synonyms.ts). */
  synonyms: ConfigSynonymValue[];
}

/**
 * The effective value of topic config `def` given the topic's overrides and the broker's configs.
 * The value is Kafka's LogConfig's: the override, else the first broker key of the chain that any
 * layer sets (each key at its highest layer, so a static log.retention.ms beats a dynamic
 * log.retention.hours, as in KafkaConfig), else the chain's defaults. Source and synonyms follow
 * Kafka's DescribeConfigs (configSynonyms), which may drop synonyms that gave the value.
 */
export function resolveTopicConfig(def: TopicConfigDef, overrides: Readonly<Record<string, string>>, layers: BrokerConfigLayers): ResolvedTopicConfig {
  const chain = def.synonyms.map((s) => s.brokerKey);
  const synonyms: ConfigSynonymValue[] = chain.length > 0 ? configSynonyms(chain[0]!, chain, layers, false) : [];
  const override = overrides[def.name];
  if (override !== undefined) synonyms.unshift({ name: def.name, value: override, source: CONFIG_SOURCE_CODES.TOPIC_CONFIG });
  const source = synonyms[0]?.source ?? CONFIG_SOURCE_CODES.DEFAULT_CONFIG;
  return { def, value: override ?? brokerDefaultOf(def, layers), source, synonyms };
}

/** The value a topic without an override runs with, in the topic config's units. */
function brokerDefaultOf(def: TopicConfigDef, layers: BrokerConfigLayers): string | null {
  for (const s of def.synonyms) {
    const text = mergedBrokerValue(s.brokerKey, layers);
    if (text !== undefined) return s.toTopic ? s.toTopic(text) : text;
  }
  for (const s of def.synonyms) {
    const text = configDef(s.brokerKey)?.default;
    if (text !== undefined && text !== null) return s.toTopic ? s.toTopic(text) : text;
  }
  return def.default;
}

/** Every topic config's effective value as text (what logs should run with). */
export function effectiveTopicConfigs(overrides: Readonly<Record<string, string>>, layers: BrokerConfigLayers): Record<string, string> {
  const out: Record<string, string> = {};
  for (const def of TOPIC_CONFIG_DEFS) {
    const r = resolveTopicConfig(def, overrides, layers);
    if (r.value !== null) out[def.name] = r.value;
  }
  return out;
}
