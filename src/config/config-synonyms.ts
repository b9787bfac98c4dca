/**
 * Kafka's DescribeConfigs synonym rules (ConfigHelper.configSynonyms in Kafka 3.9), shared by the
 * TOPIC and BROKER resources: a config's synonym chain (log.retention.ms, .minutes, .hours), the
 * values each source holds for the keys of the chain, and which of them are reported.
 *
 * The rule that clients' tests notice: the sources are walked in precedence order (dynamic
 * per-broker, dynamic cluster default, static server.properties, Kafka's default), each over the
 * whole chain, and everything before the first entry for the described key itself is dropped.
 * So a topic's retention.ms lists no synonym at all (source DEFAULT_CONFIG) while neither it nor
 * log.retention.ms is set, even where log.retention.hours is set in server.properties; a key
 * without a default is not a DEFAULT_CONFIG synonym.
 */
import { CONFIG_SOURCE_CODES } from './describe.js';
import { configDef } from './defs.js';

/** Where the broker keeps configs, by precedence: dynamic per-broker, dynamic cluster default, static. */
export interface BrokerConfigLayers {
  dynamicBroker: ReadonlyMap<string, string>;
  dynamicDefault: ReadonlyMap<string, string>;
  static: ReadonlyMap<string, string>;
}

export interface ConfigSynonymValue {
  name: string;
  value: string | null;
  source: number;
}

const LISTENER_KEY = /^listener\.name\.[^.]+\.(.+)$/;

/** Kafka's DynamicBrokerConfig.brokerConfigSynonyms: the broker keys that give `name` its value, first wins. */
export function brokerConfigSynonyms(name: string): string[] {
  switch (name) {
    case 'log.roll.ms':
    case 'log.roll.hours':
      return ['log.roll.ms', 'log.roll.hours'];
    case 'log.roll.jitter.ms':
    case 'log.roll.jitter.hours':
      return ['log.roll.jitter.ms', 'log.roll.jitter.hours'];
    case 'log.flush.interval.ms':
      return ['log.flush.interval.ms', 'log.flush.scheduler.interval.ms'];
    case 'log.retention.ms':
    case 'log.retention.minutes':
    case 'log.retention.hours':
      return ['log.retention.ms', 'log.retention.minutes', 'log.retention.hours'];
  }
  const m = LISTENER_KEY.exec(name);
  if (m) {
    // listener.name.<l>.<key>, or .<mechanism>.<key> for SASL keys: the base key (and the key
    // without its mechanism) are synonyms too.
    const base = m[1]!;
    return [...new Set([name, base, base.slice(base.indexOf('.') + 1)])];
  }
  return [name];
}

/** Kafka's staticDefaultConfigs: a key's default text, when it has one. */
function defaultText(key: string): string | undefined {
  return configDef(key)?.default ?? undefined;
}

/**
 * The synonyms of `name` over `chain` (a topic's broker keys, or brokerConfigSynonyms(name)):
 * each source's values in precedence order, from the first entry for `name` on.
 */
export function configSynonyms(name: string, chain: readonly string[], layers: BrokerConfigLayers, sensitive: boolean): ConfigSynonymValue[] {
  const all: ConfigSynonymValue[] = [];
  const sources: [(key: string) => string | undefined, number][] = [
    [(k) => layers.dynamicBroker.get(k), CONFIG_SOURCE_CODES.DYNAMIC_BROKER_CONFIG],
    [(k) => layers.dynamicDefault.get(k), CONFIG_SOURCE_CODES.DYNAMIC_DEFAULT_BROKER_CONFIG],
    [(k) => layers.static.get(k)?.trim(), CONFIG_SOURCE_CODES.STATIC_BROKER_CONFIG],
    [defaultText, CONFIG_SOURCE_CODES.DEFAULT_CONFIG],
  ];
  for (const [get, source] of sources) {
    for (const key of chain) {
      const value = get(key);
      if (value !== undefined) all.push({ name: key, value: sensitive ? null : value, source });
    }
  }
  const first = all.findIndex((s) => s.name === name);
  return first < 0 ? [] : all.slice(first);
}

/** A broker key's value as the broker runs with it: the highest layer that sets it, else its default. */
export function mergedBrokerValue(key: string, layers: BrokerConfigLayers): string | undefined {
  return layers.dynamicBroker.get(key) ?? layers.dynamicDefault.get(key) ?? layers.static.get(key)?.trim();
}
