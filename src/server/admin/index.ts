/**
 * The topic administration service: topic lifecycle, configs (topic and dynamic broker) and
 * log administration, as the admin API handlers call them.
 */
import type { Logger } from 'pino';
import type { MetadataStore } from '../../metadata/metadata-store.js';
import { ErrorCode, KafkaError, errorName } from '../../protocol/errors.js';
import type { BrokerConfig } from '../config/index.js';
import { ConfigAdmin } from './config-admin.js';
import { FeatureAdmin, type SupportedRange } from './feature-admin.js';
import { EmbeddedFeatureStore, type FeatureStore } from '../../metadata/feature-store.js';
import { DynamicBrokerConfigs, type SharedConfigStore } from './dynamic-broker-configs.js';
import { LogAdmin } from './log-admin.js';
import type { PartitionAccess } from './partition-access.js';
import { TopicAdmin } from './topic-admin.js';
import { messageOf } from '../../common/errors.js';

export { ConfigAdmin, ResourceType } from './config-admin.js';
export { TopicAdmin, type CreateTopicSpec, type CreatedTopic } from './topic-admin.js';
export { LogAdmin, type DeleteRecordsOutcome, type LogDirReport } from './log-admin.js';
export { DynamicBrokerConfigs, type SharedConfigStore } from './dynamic-broker-configs.js';
export type { PartitionAccess, LocalPartition } from './partition-access.js';
export type { ConfigEntry } from './config-describer.js';
export { AlterConfigOp } from './config-alteration.js';
export { openGroupConfigStore } from './group-config-store.js';
export { FeatureAdmin, UpgradeType, type SupportedRange } from './feature-admin.js';

export interface AdminServices {
  readonly topics: TopicAdmin;
  readonly configs: ConfigAdmin;
  readonly logs: LogAdmin;
  readonly dynamicConfigs: DynamicBrokerConfigs;
  /** Feature flags: supported, finalized (UpdateFeatures, ApiVersions). */
  readonly features: FeatureAdmin;
  close(): Promise<void>;
}

export interface AdminServicesOptions {
  config: BrokerConfig;
  metadata: MetadataStore;
  logger: Logger;
  /** The data plane, looked up on each use (it may be started after the admin service). */
  partitions: () => PartitionAccess | undefined;
  /** Where dynamic broker configs are persisted (null: in memory only). */
  stateDir: string | null;
  /** Cluster mode: dynamic broker configs live here (ZooKeeper), not in stateDir. */
  sharedConfigs?: SharedConfigStore;
  /** Cluster mode: the finalized features live here (ZooKeeper's /feature), not in stateDir. */
  featureStore?: FeatureStore;
  /** Test seam: the features this broker claims to support (default: Fjord's, none). */
  supportedFeatures?: ReadonlyMap<string, SupportedRange>;
}

export async function createAdminServices(opts: AdminServicesOptions): Promise<AdminServices> {
  const dynamicConfigs = opts.sharedConfigs
    ? await DynamicBrokerConfigs.openShared(opts.sharedConfigs, opts.config.brokerId)
    : await DynamicBrokerConfigs.open(opts.stateDir, opts.config.brokerId);
  const configs = new ConfigAdmin(opts.config, opts.metadata, dynamicConfigs, opts.logger, opts.partitions);
  const features = new FeatureAdmin(opts.featureStore ?? (await EmbeddedFeatureStore.open(opts.stateDir)), opts.supportedFeatures);
  return {
    topics: new TopicAdmin(opts.config, opts.metadata, opts.logger, opts.partitions),
    configs,
    logs: new LogAdmin(opts.metadata, opts.partitions),
    dynamicConfigs,
    features,
    close: async () => {
      await dynamicConfigs.close();
      await features.close();
    },
  };
}

/** A failure as the (errorCode, errorMessage) pair admin responses carry. */
export function errorOutcome(err: unknown): { errorCode: number; errorMessage: string } {
  if (err instanceof KafkaError) return { errorCode: err.code, errorMessage: err.message || errorName(err.code) };
  return { errorCode: ErrorCode.UNKNOWN_SERVER_ERROR, errorMessage: messageOf(err) };
}
