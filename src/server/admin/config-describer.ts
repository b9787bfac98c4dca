/**
 * DescribeConfigs entries for TOPIC and BROKER resources: effective values with their source,
 * Kafka's synonym chains, config types and documentation, independent of the wire format.
 */
import type { BrokerConfig } from '../config/index.js';
import { BROKER_CONFIG_DEFS, CONFIG_SOURCE_CODES, CONFIG_TYPE_CODES, configDef, type ConfigDef } from '../../config/index.js';
import { TOPIC_CONFIG_DEFS, resolveTopicConfig, type BrokerConfigLayers, type ConfigSynonymValue } from '../../config/topic-configs.js';
import { brokerConfigSynonyms, configSynonyms, mergedBrokerValue } from '../../config/config-synonyms.js';
import { DYNAMIC_BROKER_KEYS, dynamicKeyDef, isCustomBrokerKey, listenerConfigDef } from '../../config/dynamic-broker-keys.js';

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
 * Broker configs of this broker, as Kafka's createBrokerConfigEntry: the value the broker runs with
 * (dynamic per-broker, dynamic default, static, default: the first that sets the key), the source
 * and synonyms by Kafka's rules (config/config-synonyms.ts). Per-listener keys and custom
 * properties (keys Fjord does not know) are listed where a layer sets them, as Kafka lists every
 * key its config was built from.
 */
export function describeBrokerConfigEntries(config: BrokerConfig, layers: BrokerConfigLayers, keys: readonly string[] | null): ConfigEntry[] {
  const defs = keys === null ? BROKER_CONFIG_DEFS : keys.flatMap((k) => configDef(k) ?? []);
  const extraKeys = new Set<string>();
  for (const map of [layers.dynamicBroker, layers.dynamicDefault, config.raw]) {
    for (const name of map.keys()) if (configDef(name) === undefined && (keys === null || keys.includes(name))) extraKeys.add(name);
  }
  const extra: ConfigDef[] = [...extraKeys].sort().map((name) => {
    const listenerDef = listenerConfigDef(name);
    // A custom property: Kafka cannot tell its type, so it describes it as sensitive (no value).
    return listenerDef ? { ...listenerDef, name, default: null } : { name, type: 'string', default: null, doc: '', sensitive: true };
  });
  return [...defs, ...extra].map((def) => {
    const custom = isCustomBrokerKey(def.name);
    const synonyms = configSynonyms(def.name, brokerConfigSynonyms(def.name), layers, def.sensitive);
    const source = synonyms[0]?.source ?? CONFIG_SOURCE_CODES.DEFAULT_CONFIG;
    return {
      name: def.name,
      value: def.sensitive ? null : (mergedBrokerValue(def.name, layers) ?? def.default),
      readOnly: !DYNAMIC_BROKER_KEYS.has(def.name) && listenerConfigDef(def.name) === undefined,
      isDefault: source === CONFIG_SOURCE_CODES.DEFAULT_CONFIG,
      source,
      sensitive: def.sensitive,
      synonyms,
      configType: custom ? CONFIG_TYPE_CODES_UNKNOWN : CONFIG_TYPE_CODES[def.type],
      documentation: def.doc,
    };
  });
}

/** Kafka's DescribeConfigs type of a key it has no definition for. */
const CONFIG_TYPE_CODES_UNKNOWN = 0;

/**
 * The cluster-wide dynamic defaults (BROKER resource ""): Kafka lists only what is set there,
 * custom properties included, with the DYNAMIC_DEFAULT_BROKER_CONFIG synonyms only.
 */
export function describeClusterDefaultEntries(layers: BrokerConfigLayers, keys: readonly string[] | null): ConfigEntry[] {
  const wanted = keys === null ? null : new Set(keys);
  return [...layers.dynamicDefault]
    .filter(([k]) => wanted === null || wanted.has(k))
    .map(([name, value]) => {
      const def = dynamicKeyDef(name);
      const sensitive = def?.sensitive ?? true;
      const synonyms = configSynonyms(name, brokerConfigSynonyms(name), layers, sensitive).filter(
        (s) => s.source === CONFIG_SOURCE_CODES.DYNAMIC_DEFAULT_BROKER_CONFIG,
      );
      return {
        name,
        value: sensitive ? null : value,
        readOnly: !DYNAMIC_BROKER_KEYS.has(name) && listenerConfigDef(name) === undefined,
        isDefault: false,
        source: synonyms[0]?.source ?? CONFIG_SOURCE_CODES.DEFAULT_CONFIG,
        sensitive,
        synonyms,
        configType: def ? CONFIG_TYPE_CODES[def.type] : CONFIG_TYPE_CODES_UNKNOWN,
        documentation: def?.doc ?? '',
      };
    });
}
