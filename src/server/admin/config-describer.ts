/**
 * DescribeConfigs entries for TOPIC and BROKER resources: effective values with their source,
 * Kafka's synonym chains, config types and documentation, independent of the wire format.
 */
import type { BrokerConfig } from '../config/index.js';
import { BROKER_CONFIG_DEFS, CONFIG_SOURCE_CODES, CONFIG_TYPE_CODES, configDef, type ConfigDef } from '../../config/index.js';
import { TOPIC_CONFIG_DEFS, resolveTopicConfig, type BrokerConfigLayers, type ConfigSynonymValue } from '../../config/topic-configs.js';
import { DYNAMIC_BROKER_KEYS, dynamicKeyDef, listenerConfigDef } from '../../config/dynamic-broker-keys.js';

export interface ConfigEntry {
  name: string;
  value: string | null;
  readOnly: boolean;
  isDefault: boolean;
  source: number;
  sensitive: boolean;
  synonyms: ConfigSynonymValue[];
  configType: number;
  documentation: string;
}

/** Every topic config (or only `keys`; unknown keys are left out, as Kafka does). */
export function describeTopicConfigEntries(
  overrides: Readonly<Record<string, string>>,
  layers: BrokerConfigLayers,
  keys: readonly string[] | null,
): ConfigEntry[] {
  const wanted = keys === null ? null : new Set(keys);
  return TOPIC_CONFIG_DEFS.filter((d) => wanted === null || wanted.has(d.name)).map((def) => {
    const r = resolveTopicConfig(def, overrides, layers);
    return {
      name: def.name,
      value: r.value,
      readOnly: false,
      isDefault: r.source === CONFIG_SOURCE_CODES.DEFAULT_CONFIG,
      source: r.source,
      sensitive: false,
      synonyms: r.synonyms,
      configType: CONFIG_TYPE_CODES[def.type],
      documentation: def.doc,
    };
  });
}

/**
 * Broker configs of this broker: dynamic per-broker, dynamic default, static, default — the
 * first that is set gives the value; the others are its synonyms.
 */
export function describeBrokerConfigEntries(config: BrokerConfig, layers: BrokerConfigLayers, keys: readonly string[] | null): ConfigEntry[] {
  const defs = keys === null ? BROKER_CONFIG_DEFS : keys.flatMap((k) => configDef(k) ?? []);
  // Per-listener keys (listener.name.<listener>.<key>) are listed when set, as Kafka does.
  const listenerKeys = new Set<string>();
  for (const map of [layers.dynamicBroker, layers.dynamicDefault, config.raw]) {
    for (const name of map.keys()) if (listenerConfigDef(name) !== undefined && (keys === null || keys.includes(name))) listenerKeys.add(name);
  }
  const all: ConfigDef[] = [...defs, ...[...listenerKeys].sort().map((name) => ({ ...listenerConfigDef(name)!, name, default: null }))];
  return all.map((def) => {
    const synonyms: ConfigSynonymValue[] = [];
    const levels: [ReadonlyMap<string, string>, number][] = [
      [layers.dynamicBroker, CONFIG_SOURCE_CODES.DYNAMIC_BROKER_CONFIG],
      [layers.dynamicDefault, CONFIG_SOURCE_CODES.DYNAMIC_DEFAULT_BROKER_CONFIG],
      [config.raw, CONFIG_SOURCE_CODES.STATIC_BROKER_CONFIG],
    ];
    for (const [map, source] of levels) {
      const text = map.get(def.name);
      if (text !== undefined) synonyms.push({ name: def.name, value: def.sensitive ? null : text.trim(), source });
    }
    if (def.default !== null) synonyms.push({ name: def.name, value: def.default, source: CONFIG_SOURCE_CODES.DEFAULT_CONFIG });
    const first = synonyms[0];
    const source = first?.source ?? CONFIG_SOURCE_CODES.DEFAULT_CONFIG;
    return {
      name: def.name,
      value: def.sensitive ? null : (first?.value ?? null),
      readOnly: !DYNAMIC_BROKER_KEYS.has(def.name) && !listenerKeys.has(def.name),
      isDefault: source === CONFIG_SOURCE_CODES.DEFAULT_CONFIG,
      source,
      sensitive: def.sensitive,
      synonyms,
      configType: CONFIG_TYPE_CODES[def.type],
      documentation: def.doc,
    };
  });
}

/** The cluster-wide dynamic defaults (BROKER resource ""): Kafka lists only what is set. */
export function describeClusterDefaultEntries(dynamicDefault: ReadonlyMap<string, string>, keys: readonly string[] | null): ConfigEntry[] {
  const wanted = keys === null ? null : new Set(keys);
  return [...dynamicDefault]
    .filter(([k]) => wanted === null || wanted.has(k))
    .map(([name, value]) => {
      const def = dynamicKeyDef(name);
      const source = CONFIG_SOURCE_CODES.DYNAMIC_DEFAULT_BROKER_CONFIG;
      return {
        name,
        value: def?.sensitive ? null : value,
        readOnly: false,
        isDefault: false,
        source,
        sensitive: def?.sensitive ?? false,
        synonyms: [{ name, value: def?.sensitive ? null : value, source }],
        configType: def ? CONFIG_TYPE_CODES[def.type] : 0,
        documentation: def?.doc ?? '',
      };
    });
}
