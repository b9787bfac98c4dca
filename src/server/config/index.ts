export { loadBrokerConfig, buildBrokerConfig, defaultBrokerConfig, type WarnSink } from './build-broker-config.js';
export type { BrokerConfig } from './broker-config.js';
