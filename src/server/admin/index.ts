/**
 * The topic administration service: topic lifecycle, configs (topic and dynamic broker) and
 * log administration, as the admin API handlers call them.
 */
import type { Logger } from 'pino';
import type { MetadataStore } from '../../metadata/metadata-store.js';
import { ErrorCode, KafkaError, errorName } from '../../protocol/errors.js';
import type { BrokerConfig } from '../config/index.js';
import { ConfigAdmin } from './config-admin.js';
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

export interface AdminServices {
  readonly topics: TopicAdmin;
  readonly configs: ConfigAdmin;
  readonly logs: LogAdmin;
  readonly dynamicConfigs: DynamicBrokerConfigs;
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
}

export async function createAdminServices(opts: AdminServicesOptions): Promise<AdminServices> {
  const dynamicConfigs = opts.sharedConfigs
    ? await DynamicBrokerConfigs.openShared(opts.sharedConfigs, opts.config.brokerId)
    : await DynamicBrokerConfigs.open(opts.stateDir, opts.config.brokerId);
  const configs = new ConfigAdmin(opts.config, opts.metadata, dynamicConfigs, opts.logger, opts.partitions);
  return {
    topics: new TopicAdmin(opts.config, opts.metadata, opts.logger, opts.partitions),
    configs,
    logs: new LogAdmin(opts.metadata, opts.partitions),
    dynamicConfigs,
    close: () => dynamicConfigs.close(),
  };
}

/** A failure as the (errorCode, errorMessage) pair admin responses carry. */
export function errorOutcome(err: unknown): { errorCode: number; errorMessage: string } {
  if (err instanceof KafkaError) return { errorCode: err.code, errorMessage: err.message || errorName(err.code) };
  return { errorCode: ErrorCode.UNKNOWN_SERVER_ERROR, errorMessage: messageOf(err) };
}
