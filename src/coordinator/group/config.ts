/**
 * The group coordinator's settings: the broker settings it reads (a slice of the broker's
 * config, which the broker's config fits as it is: the broker passes its own) and the settings
 * its shards work with, derived from them.
 */
import type { CoordinatorBrokerConfig } from '../runtime/coordinator-shell.js';

/** The broker settings the group coordinator reads, under the broker config's names. */
export interface GroupCoordinatorBrokerConfig extends CoordinatorBrokerConfig {
  readonly groupMinSessionTimeoutMs: number;
  readonly groupMaxSessionTimeoutMs: number;
  readonly groupInitialRebalanceDelayMs: number;
  readonly groupMaxSize: number;
  readonly offsetMetadataMaxBytes: number;
  readonly offsetsRetentionMinutes: number;
  readonly offsetsRetentionCheckIntervalMs: number;
  readonly offsetsTopicNumPartitions: number;
  readonly offsetsTopicReplicationFactor: number;
  readonly offsetsTopicSegmentBytes: number;
  readonly groupConsumerSessionTimeoutMs: number;
  readonly groupConsumerHeartbeatIntervalMs: number;
  readonly groupConsumerMaxSize: number;
  /** group.consumer.migration.policy; bidirectional (Kafka 4's default) when absent. */
  readonly groupConsumerMigrationPolicy?: string;
  /** group.consumer.assignors as written (names or class names). */
  readonly groupConsumerAssignors: readonly string[];
}

export interface GroupCoordinatorConfig {
  minSessionTimeoutMs: number;
  maxSessionTimeoutMs: number;
  initialRebalanceDelayMs: number;
  maxGroupSize: number;
  offsetMetadataMaxBytes: number;
  /** offsets.retention.minutes in ms. */
  offsetsRetentionMs: number;
  offsetsRetentionCheckIntervalMs: number;
}

export function groupConfigFrom(cfg: GroupCoordinatorBrokerConfig): GroupCoordinatorConfig {
  return {
    minSessionTimeoutMs: cfg.groupMinSessionTimeoutMs,
    maxSessionTimeoutMs: cfg.groupMaxSessionTimeoutMs,
    initialRebalanceDelayMs: cfg.groupInitialRebalanceDelayMs,
    maxGroupSize: cfg.groupMaxSize,
    offsetMetadataMaxBytes: cfg.offsetMetadataMaxBytes,
    offsetsRetentionMs: cfg.offsetsRetentionMinutes * 60_000,
    offsetsRetentionCheckIntervalMs: cfg.offsetsRetentionCheckIntervalMs,
  };
}
