export { ConfigError } from './errors.js';
export { parseProperties, parseOverride } from './properties.js';
export { BROKER_CONFIG_DEFS, CONFIG_TYPE_CODES, configDef, type ConfigDef, type ConfigType, type ConfigValidator } from './defs.js';
export { parseConfigValue, defaultConfigValue, type ConfigValue } from './values.js';
export { loadBrokerConfig, buildBrokerConfig, defaultBrokerConfig, type BrokerConfig, type WarnSink } from './broker-config.js';
export {
  describeBrokerConfigs, topicConfigDefaults, TOPIC_CONFIG_SYNONYMS, CONFIG_SOURCE_CODES,
  type BrokerConfigEntry, type ConfigSourceName,
} from './describe.js';
