export { ConfigError } from './errors.js';
export { parseProperties, parseOverride } from './properties.js';
export { CONFIG_TYPE_CODES, type ConfigDef, type ConfigType, type ConfigValidator } from './config-def.js';
export { BROKER_CONFIG_DEFS, configDef } from './defs.js';
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
