/**
 * DescribeConfigs / AlterConfigs / IncrementalAlterConfigs for TOPIC and BROKER resources.
 * Topic overrides live in the metadata store; dynamic broker configs in DynamicBrokerConfigs.
 * Changes are applied to the running logs at once (Log.updateConfig).
 */
import type { Logger } from 'pino';
import type { MetadataStore } from '../../metadata/metadata-store.js';
import { topicNameError } from '../../metadata/topic-names.js';
import { ErrorCode, KafkaError } from '../../protocol/errors.js';
import { logConfigFromProps, type LogConfig } from '../../storage/config.js';
import type { BrokerConfig } from '../config/index.js';
import { CONFIG_SOURCE_CODES, CONFIG_TYPE_CODES } from '../../config/index.js';
import { effectiveTopicConfigs, topicConfigDef, validateTopicConfigs } from '../../config/topic-configs.js';
import { applyIncrementalOps, replaceAll, type IncrementalOp, type KeyInfo } from './config-alteration.js';
import { describeBrokerConfigEntries, describeClusterDefaultEntries, describeTopicConfigEntries, type ConfigEntry } from './config-describer.js';
import { dynamicKeyDef, validateDynamicBrokerConfigs } from '../../config/dynamic-broker-keys.js';
import type { DynamicBrokerConfigs } from './dynamic-broker-configs.js';
import type { PartitionAccess } from './partition-access.js';
import { alterGroupConfigs, describeGroupConfigEntries, groupConfigKeyInfo, type GroupConfigsStore } from './group-configs.js';
import { alterClientMetrics, clientMetricsKeyInfo, describeClientMetrics, type ClientMetricsStore } from '../telemetry/client-metrics-configs.js';

/** Kafka's ConfigResource.Type codes (GROUP 3 is the ACL resource code; the GROUP config resource is GROUP_CONFIG, 32). */
export const ResourceType = { UNKNOWN: 0, ANY: 1, TOPIC: 2, GROUP: 3, BROKER: 4, CLIENT_METRICS: 16, BROKER_LOGGER: 8, GROUP_CONFIG: 32 } as const;

const topicKeyInfo: KeyInfo = (name) => topicConfigDef(name);
const brokerKeyInfo: KeyInfo = (name) => dynamicKeyDef(name);
/** The keys' types by resource type (IncrementalAlterConfigs' APPEND and SUBTRACT); others are broker keys. */
const KEY_INFO: Partial<Record<number, KeyInfo>> = {
  [ResourceType.TOPIC]: topicKeyInfo,
  [ResourceType.CLIENT_METRICS]: clientMetricsKeyInfo,
  [ResourceType.GROUP_CONFIG]: groupConfigKeyInfo,
};

/**
 * Something the broker reconfigures from its dynamic configs (TLS listeners' certificates): told
 * of the proposed per-broker and cluster-default layers before they are stored (throw to refuse,
 * answered INVALID_REQUEST) and after.
 */
export interface BrokerReconfigurable {
  validate(layers: { perBroker: ReadonlyMap<string, string>; clusterDefault: ReadonlyMap<string, string> }): void;
  apply(layers: { perBroker: ReadonlyMap<string, string>; clusterDefault: ReadonlyMap<string, string> }): void;
}

export class ConfigAdmin {
  private readonly reconfigurables: BrokerReconfigurable[] = [];
  /** KIP-714 subscriptions (CLIENT_METRICS resources), once the broker opened them (server/telemetry). */
  clientMetrics: ClientMetricsStore | undefined;
  /** Groups' own configs (GROUP resources), once the broker opened them (group-config-store.ts). */
  groupConfigs: GroupConfigsStore | undefined;

  /** Registers something to reconfigure on dynamic broker config changes. */
  addReconfigurable(r: BrokerReconfigurable): void {
    this.reconfigurables.push(r);
    // Dynamic configs stored before this start apply now.
    if (!this.dynamic.isEmpty) {
      try {
        r.apply(this.dynamicLayers());
      } catch (err) {
        this.logger.warn({ err: (err as Error).message }, 'stored dynamic broker config not applied');
      }
    }
  }

  private dynamicLayers(
    scope?: string,
    entries?: ReadonlyMap<string, string>,
  ): { perBroker: ReadonlyMap<string, string>; clusterDefault: ReadonlyMap<string, string> } {
    const self = this.dynamic.selfScope;
    return {
      perBroker: scope === self && entries ? entries : this.dynamic.get(self),
      clusterDefault: scope === '' && entries ? entries : this.dynamic.get(''),
    };
  }

  private applyReconfigurables(): void {
    for (const r of this.reconfigurables) {
      try {
        r.apply(this.dynamicLayers());
      } catch (err) {
        this.logger.warn({ err: (err as Error).message }, 'dynamic broker config not applied');
      }
    }
  }

  constructor(
    private readonly config: BrokerConfig,
    private readonly metadata: MetadataStore,
    private readonly dynamic: DynamicBrokerConfigs,
    private readonly logger: Logger,
    /** Resolved lazily: the data plane may start after this service. */
    private readonly partitions: () => PartitionAccess | undefined,
  ) {}

  describe(resourceType: number, resourceName: string, keys: readonly string[] | null): ConfigEntry[] {
    const layers = this.dynamic.layers(this.config);
    switch (resourceType) {
      case ResourceType.TOPIC:
        return describeTopicConfigEntries(this.existingTopic(resourceName).configs, layers, keys);
      case ResourceType.BROKER:
        if (this.brokerScope(resourceName) === '') return describeClusterDefaultEntries(layers, keys);
        return describeBrokerConfigEntries(this.config, layers, keys);
      case ResourceType.BROKER_LOGGER: {
        this.brokerScope(resourceName, false);
        const entry: ConfigEntry = {
          name: 'root',
          value: this.logger.level.toUpperCase(),
          readOnly: false,
          isDefault: false,
          source: CONFIG_SOURCE_CODES.DYNAMIC_BROKER_LOGGER_CONFIG,
          sensitive: false,
          synonyms: [],
          configType: CONFIG_TYPE_CODES.string,
          documentation: '',
        };
        return keys === null || keys.includes('root') ? [entry] : [];
      }
      case ResourceType.CLIENT_METRICS:
        if (this.clientMetrics) return describeClientMetrics(this.clientMetrics, resourceName, keys);
        throw new KafkaError(ErrorCode.INVALID_REQUEST, `Unsupported resource type: ${resourceType}`);
      case ResourceType.GROUP_CONFIG:
        if (this.groupConfigs) return describeGroupConfigEntries(resourceName, this.groupConfigs.get(resourceName), this.config, keys);
        throw new KafkaError(ErrorCode.INVALID_REQUEST, `Unsupported resource type: ${resourceType}`);
      default:
        throw new KafkaError(ErrorCode.INVALID_REQUEST, `Unsupported resource type: ${resourceType}`);
    }
  }

  /** Legacy AlterConfigs: the given entries replace all overrides of the resource. */
  async alter(resourceType: number, resourceName: string, entries: readonly { name: string; value: string | null }[], validateOnly: boolean): Promise<void> {
    const next = replaceAll(entries);
    await this.commit(resourceType, resourceName, () => next, validateOnly);
  }

  async incrementalAlter(resourceType: number, resourceName: string, ops: readonly IncrementalOp[], validateOnly: boolean): Promise<void> {
    const info = KEY_INFO[resourceType] ?? brokerKeyInfo;
    await this.commit(resourceType, resourceName, (current) => applyIncrementalOps(current, ops, info), validateOnly);
  }

  private async commit(
    resourceType: number,
    resourceName: string,
    change: (current: Record<string, string>) => Record<string, string>,
    validateOnly: boolean,
  ): Promise<void> {
    if (resourceType === ResourceType.TOPIC) {
      const t = this.existingTopic(resourceName);
      const next = change(t.configs);
      validateTopicConfigs(next);
      if (validateOnly) return;
      await this.metadata.setTopicConfigs(t.name, next);
      await this.partitions()?.syncTopic(t.name);
      this.logger.info({ topic: t.name, configs: next }, `configs of topic ${t.name} changed`);
      // After the sync: the data plane knows static broker defaults only, this adds dynamic ones.
      this.applyToLogs(t.name);
      return;
    }
    if (resourceType === ResourceType.BROKER) {
      const scope = this.brokerScope(resourceName);
      const next = change(Object.fromEntries(this.dynamic.get(scope)));
      const entries = new Map(Object.entries(next));
      validateDynamicBrokerConfigs(resourceName, entries);
      if (this.dynamic.follows(scope)) {
        for (const r of this.reconfigurables) {
          try {
            r.validate(this.dynamicLayers(scope, entries));
          } catch (err) {
            throw new KafkaError(
              ErrorCode.INVALID_REQUEST,
              `Invalid config value for resource ConfigResource(type=BROKER, name='${resourceName}'): ${(err as Error).message}`,
            );
          }
        }
      }
      if (validateOnly) return;
      await this.dynamic.replace(scope, entries);
      this.applyReconfigurables();
      this.logger.info(
        { scope: scope === '' ? '<default>' : scope, configs: redactSensitive(next) },
        `dynamic broker configs of ${scope === '' ? 'the cluster default' : `broker ${scope}`} changed`,
      );
      for (const t of this.metadata.topics()) this.applyToLogs(t.name);
      return;
    }
    if (resourceType === ResourceType.CLIENT_METRICS && this.clientMetrics) {
      const next = await alterClientMetrics(this.clientMetrics, resourceName, change, validateOnly);
      if (next) this.logger.info({ subscription: resourceName, configs: next }, `client-metrics subscription ${resourceName} changed`);
      return;
    }
    if (resourceType === ResourceType.GROUP_CONFIG && this.groupConfigs) {
      const next = await alterGroupConfigs(this.groupConfigs, resourceName, change, this.config, validateOnly);
      if (next) this.logger.info({ group: resourceName, configs: next }, `configs of group ${resourceName} changed`);
      return;
    }
    if (resourceType === ResourceType.BROKER_LOGGER) {
      throw new KafkaError(ErrorCode.INVALID_REQUEST, 'Changing logger levels is not supported by Fjord');
    }
    throw new KafkaError(ErrorCode.INVALID_REQUEST, `Unsupported resource type: ${resourceType}`);
  }

  /**
   * Cluster mode: dynamic broker configs of `scope` were changed elsewhere (another broker, or
   * kafka-configs.sh --zookeeper): re-read them and re-apply every topic's effective log config.
   */
  async onSharedBrokerConfigChange(scope: string): Promise<void> {
    if (!(await this.dynamic.reload(scope))) return;
    this.logger.info(
      { scope: scope === '' ? '<default>' : scope, configs: redactSensitive(Object.fromEntries(this.dynamic.get(scope))) },
      `dynamic broker configs of ${scope === '' ? 'the cluster default' : `broker ${scope}`} changed in ZooKeeper`,
    );
    this.applyReconfigurables();
    for (const t of this.metadata.topics()) this.applyToLogs(t.name);
  }

  /** The log config a topic's partitions should run with now (overrides over dynamic and static broker configs). */
  logConfigFor(topic: string): LogConfig | undefined {
    const t = this.metadata.topic(topic);
    if (!t) return undefined;
    return logConfigFromProps(effectiveTopicConfigs(t.configs, this.dynamic.layers(this.config)));
  }

  /** Re-applies the effective config to a topic's running logs (after the data plane reopened or reconfigured them). */
  applyToLogs(topic: string): void {
    const access = this.partitions();
    const t = this.metadata.topic(topic);
    const cfg = this.logConfigFor(topic);
    if (!access || !t || !cfg) return;
    for (const p of t.partitions) access.localPartition(topic, p.partition)?.log.updateConfig(cfg);
    access.reconfigure?.(topic);
  }

  private existingTopic(name: string) {
    const nameError = topicNameError(name);
    if (nameError) throw new KafkaError(ErrorCode.INVALID_TOPIC_EXCEPTION, nameError);
    const t = this.metadata.topic(name);
    if (!t) throw new KafkaError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, `The topic '${name}' does not exist.`);
    return t;
  }

  /** "" (cluster default) or this broker's id; other brokers cannot be addressed here. */
  private brokerScope(resourceName: string, allowDefault = true): string {
    if (allowDefault && resourceName === '') return '';
    if (resourceName !== String(this.config.brokerId)) {
      throw new KafkaError(
        ErrorCode.INVALID_REQUEST,
        `Unexpected broker id, expected ${this.config.brokerId}${allowDefault ? ' or empty string' : ''}, but received ${resourceName}`,
      );
    }
    return resourceName;
  }
}

/** Password-type values, and custom properties (whose type nobody knows, as Kafka), are never written to the log. */
function redactSensitive(configs: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(configs).map(([k, v]) => [k, (dynamicKeyDef(k)?.sensitive ?? true) ? '[hidden]' : v]));
}
