/**
 * What the consumer group coordinator works with besides its records: its settings (Kafka 4's
 * `group.consumer.*` keys), its server-side assignors, and a view of the cluster's topics (names,
 * ids, partition counts, replica racks) that subscriptions are resolved against.
 */
import type { ServerAssignor } from '../assignors/types.js';
import { type SubscriptionRegex, compileSubscriptionRegex } from '../subscription-regex.js';

export interface ConsumerGroupSettings {
  /** group.consumer.session.timeout.ms */
  readonly sessionTimeoutMs: number;
  /** group.consumer.heartbeat.interval.ms */
  readonly heartbeatIntervalMs: number;
  /** group.consumer.max.size */
  readonly maxSize: number;
  /** group.consumer.assignors, in order: the first is the default. */
  readonly assignors: readonly ServerAssignor[];
  /** group.consumer.migration.policy; Kafka 4's default (bidirectional) when not given. */
  readonly migrationPolicy?: MigrationPolicy;
}

/** group.consumer.migration.policy: which online conversions of a group with members are allowed. */
export type MigrationPolicy = 'disabled' | 'upgrade' | 'downgrade' | 'bidirectional';
export const MIGRATION_POLICIES: readonly MigrationPolicy[] = ['disabled', 'upgrade', 'downgrade', 'bidirectional'];

/** A policy as written in the config (any case, as Kafka parses it); unknown values disable migration. */
export function parseMigrationPolicy(text: string | undefined): MigrationPolicy {
  if (text === undefined) return 'bidirectional';
  const lower = text.toLowerCase();
  return MIGRATION_POLICIES.find((p) => p === lower) ?? 'disabled';
}

export const upgradeEnabled = (s: ConsumerGroupSettings): boolean =>
  (s.migrationPolicy ?? 'bidirectional') === 'bidirectional' || s.migrationPolicy === 'upgrade';
export const downgradeEnabled = (s: ConsumerGroupSettings): boolean =>
  (s.migrationPolicy ?? 'bidirectional') === 'bidirectional' || s.migrationPolicy === 'downgrade';

/** A topic as subscriptions see it. */
export interface ClusterTopic {
  readonly topicId: string;
  readonly name: string;
  readonly partitionCount: number;
  /** Racks of the partition's replicas, sorted, distinct; empty when no broker has a rack. */
  racks(partition: number): readonly string[];
}

export interface ClusterTopics {
  byName(name: string): ClusterTopic | undefined;
  /** Every topic name (regex subscriptions match against these). */
  names(): Iterable<string>;
  /** Changes whenever a topic is created, deleted or changed: regex matches are kept until then. */
  generation(): number;
}

export const NO_TOPICS: ClusterTopics = { byName: () => undefined, names: () => [], generation: () => 0 };

/** Compiles a SubscribedTopicRegex (RE2J's dialect: subscription-regex.ts). */
export type RegexCompiler = (pattern: string) => SubscriptionRegex;

/** A group's own configs (Kafka 4's GROUP config resource), where set: they win over the broker's. */
export interface GroupConfigOverrides {
  /** consumer.session.timeout.ms */
  readonly sessionTimeoutMs?: number;
  /** consumer.heartbeat.interval.ms */
  readonly heartbeatIntervalMs?: number;
}

/** Looks a group's configs up (the broker keeps them); read at each heartbeat, so changes apply at the next one. */
export type GroupConfigLookup = (groupId: string) => GroupConfigOverrides | undefined;

/** Everything a shard's consumer groups need from outside their records. */
export interface ConsumerGroupEnv {
  readonly settings: ConsumerGroupSettings;
  readonly topics: ClusterTopics;
  readonly compileRegex: RegexCompiler;
  /** Per-group configs; none: every group has the broker's settings. */
  readonly groupConfigs?: GroupConfigLookup;
}

/** The session timeout a consumer-protocol member of the group gets: the group's own, or the broker's. */
export const groupSessionTimeoutMs = (env: ConsumerGroupEnv, groupId: string): number =>
  env.groupConfigs?.(groupId)?.sessionTimeoutMs ?? env.settings.sessionTimeoutMs;

/** The heartbeat interval a consumer-protocol member of the group is told: the group's own, or the broker's. */
export const groupHeartbeatIntervalMs = (env: ConsumerGroupEnv, groupId: string): number =>
  env.groupConfigs?.(groupId)?.heartbeatIntervalMs ?? env.settings.heartbeatIntervalMs;

/** Kafka 4's defaults; no assignor: the broker passes its `group.consumer.assignors`. */
export const DEFAULT_CONSUMER_ENV: ConsumerGroupEnv = {
  settings: { sessionTimeoutMs: 45_000, heartbeatIntervalMs: 5_000, maxSize: 2_147_483_647, assignors: [] },
  topics: NO_TOPICS,
  compileRegex: compileSubscriptionRegex,
};
