/**
 * The LogManager options of the broker's logs, one set for every place they open
 * (docs/threads.md "Step 1, wired"): the in-thread broker (num.io.threads=1, cluster mode), shard
 * 0 on the main thread and each shard worker build them here, so a log setting reaches all of
 * them or none. What comes from the broker config is `LogManagerSettings`, plain numbers and
 * booleans, so a worker gets it in its ShardInit (structured clone); what depends on the place
 * (the topic configs it knows, a shard's share of the directories) its caller adds.
 */
import { defaultOpenFileBudget } from '../../storage/segment/segment-file.js';
import type { LogManagerOptions } from '../../storage/manager/log-manager.js';
import { brokerLogDefaults } from '../log-config.js';
import type { LogDefaultsConfig } from '../replication-config.js';
import { cleanerSlotsOf, newSharedCleanerSlots, type SharedCleanerSlots } from '../../storage/cleaner/cleaner-slots.js';

/** The broker settings a LogManager takes (BrokerConfig has them under these names). */
export interface LogManagerConfig {
  logFlushOffsetCheckpointIntervalMs: number;
  logRetentionCheckIntervalMs: number;
  logFlushSchedulerIntervalMs: number;
  logCleanerEnable: boolean;
  logCleanerBackoffMs: number;
  /** log.segment.max.open.files for the whole broker; <= 0: the default budget. */
  logSegmentMaxOpenFiles: number;
  logCleanerThreads: number;
}

/** One shard's LogManager settings, as they cross to a worker. */
export interface LogManagerSettings {
  checkpointIntervalMs: number;
  retentionCheckIntervalMs: number;
  flushCheckIntervalMs: number;
  /** Each shard cleans its own compacted logs, one log at a time (storage/cleaner/log-cleaner.ts). */
  cleanerEnabled: boolean;
  cleanerBackoffMs: number;
  /** This shard's share of log.segment.max.open.files; 0: the default budget. */
  maxOpenSegmentFiles: number;
  /** Several shards: log.cleaner.threads, the logs cleaned at once over all of them (shared memory, the same for every shard). */
  cleanerSlots?: SharedCleanerSlots;
}

/** log.segment.max.open.files for one of `shards` shards; 0 (storage derives it) for the in-thread broker's default. */
export function openFilesPerShard(configured: number, shards: number): number {
  if (shards <= 1) return configured > 0 ? configured : 0;
  return Math.max(1, Math.floor((configured > 0 ? configured : defaultOpenFileBudget()) / shards));
}

/** The settings of each of `shards` shards (1: the in-thread broker). */
export function logManagerSettings(cfg: LogManagerConfig, shards = 1): LogManagerSettings {
  return {
    checkpointIntervalMs: cfg.logFlushOffsetCheckpointIntervalMs,
    retentionCheckIntervalMs: cfg.logRetentionCheckIntervalMs,
    // Kafka's default scheduler interval is Long.MAX; checking flush.ms once a second is cheap.
    flushCheckIntervalMs: Math.min(cfg.logFlushSchedulerIntervalMs, 1000),
    cleanerEnabled: cfg.logCleanerEnable,
    cleanerBackoffMs: cfg.logCleanerBackoffMs,
    // Each thread's segment-file cache is its own (storage's budget is per isolate): the total split
    // evenly, the derived default (half the descriptor limit) too, else every shard would take half.
    maxOpenSegmentFiles: openFilesPerShard(cfg.logSegmentMaxOpenFiles, shards),
    // One shard's cleaner cleans one log at a time already: the cap matters only across shards.
    ...(shards > 1 ? { cleanerSlots: newSharedCleanerSlots(cfg.logCleanerThreads, shards) } : {}),
  };
}

/** What the place a LogManager opens in decides: what it knows of topics, whether it is a shard (and which). */
export type PlaceOptions = Pick<LogManagerOptions, 'logger' | 'topicConfig'> &
  Partial<Pick<LogManagerOptions, 'shard' | 'metaProperties'>> & {
    /** The shard's index, which holds its cleaner slot (cleaner-slots.ts); 0 for the in-thread broker. */
    shardIndex?: number;
  };

/** The LogManager.open options of the broker's logs (or of one shard of them). */
export function logManagerOptions(
  config: LogDefaultsConfig & { logDirs: readonly string[] },
  settings: LogManagerSettings,
  place: PlaceOptions,
): LogManagerOptions {
  const { cleanerSlots, ...plain } = settings;
  const { shardIndex, ...where } = place;
  return {
    logDirs: [...config.logDirs],
    defaults: brokerLogDefaults(config),
    ...plain,
    ...(cleanerSlots ? { cleanerSlots: cleanerSlotsOf(cleanerSlots, shardIndex ?? 0) } : {}),
    // A log no partition hosts yet has no last stable offset: an open transaction's records
    // could be cleaned as if committed.
    highWatermarkSetByOwner: true,
    ...where,
  };
}
