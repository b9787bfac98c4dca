export { ConfigError } from './errors.js';
export { parseProperties, parseOverride } from './properties.js';
export { BROKER_CONFIG_DEFS, CONFIG_TYPE_CODES, configDef, type ConfigDef, type ConfigType, type ConfigValidator } from './defs.js';
export { parseConfigValue, defaultConfigValue, type ConfigValue } from './values.js';
export {
  describeBrokerConfigs,
  topicConfigDefaults,
  TOPIC_CONFIG_SYNONYMS,
  CONFIG_SOURCE_CODES,
  type BrokerConfigEntry,
  type ConfigSourceName,
  type StaticConfigSource,
  type TopicDefaultsSource,
} from './describe.js';
