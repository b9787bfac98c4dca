/**
 * The consumer group (KIP-848) operations as the group coordinator serves them: each runs on the
 * shard (offsets partition) of its group through the coordinator runtime. Also what the shards
 * need from outside: the cluster's topics, seen through the metadata store.
 */
import type { MetadataStore } from '../../../metadata/metadata-store.js';
import { ErrorCode, KafkaError } from '../../../protocol/errors.js';
import type { CoordinatorRuntime } from '../../runtime/runtime.js';
import type { GroupShard } from '../group-shard.js';
import type { CoordinatorRecord } from '../records.js';
import { type ConsumerGroupDescription, describeConsumerGroup } from './describe.js';
import { type ConsumerHeartbeatRequest, type ConsumerHeartbeatResponse, consumerGroupHeartbeat } from './heartbeat.js';
import { type ClusterTopic, type ClusterTopics, type ConsumerGroupEnv, type GroupConfigLookup, type RegexCompiler, parseMigrationPolicy } from './settings.js';
import type { GroupCoordinatorBrokerConfig } from '../config.js';
import { assignorsByName } from '../assignors/index.js';
import { compileSubscriptionRegex } from '../subscription-regex.js';
import { prepareRegexMatches, prepareStaleRegexMatches } from './target-assignment.js';

const codeOf = (err: unknown): number => (err instanceof KafkaError ? err.code : ErrorCode.UNKNOWN_SERVER_ERROR);

export class ConsumerGroupService {
  constructor(
    private readonly runtime: () => CoordinatorRuntime<GroupShard, CoordinatorRecord>,
    private readonly partitionFor: (groupId: string) => number,
    /** The shards' environment: a subscription regex is matched against its topics before the operation. */
    private readonly env: () => ConsumerGroupEnv | null = () => null,
  ) {}

  async heartbeat(req: ConsumerHeartbeatRequest): Promise<ConsumerHeartbeatResponse> {
    try {
      const env = this.env();
      if (req.subscribedTopicRegex !== null && env) await prepareRegexMatches(req.subscribedTopicRegex, env);
      return await this.runtime().write(this.partitionFor(req.groupId), (s, now) => consumerGroupHeartbeat(s, req, now));
    } catch (err) {
      return { errorCode: codeOf(err), errorMessage: null, memberId: null, memberEpoch: 0, heartbeatIntervalMs: 0, assignment: null };
    }
  }

  async describe(groupId: string): Promise<ConsumerGroupDescription> {
    try {
      return await this.runtime().read(this.partitionFor(groupId), (s) => describeConsumerGroup(s, groupId));
    } catch (err) {
      return { errorCode: codeOf(err), errorMessage: null, groupId, groupState: '', groupEpoch: 0, assignmentEpoch: 0, assignorName: '', members: [] };
    }
  }
}

/** The consumer groups' settings from the broker's `group.consumer.*` keys, topics from the metadata. */
export function consumerGroupEnv(
  cfg: GroupCoordinatorBrokerConfig,
  metadata: MetadataStore,
  compileRegex: RegexCompiler = compileSubscriptionRegex,
  groupConfigs?: GroupConfigLookup,
): ConsumerGroupEnv {
  const env: ConsumerGroupEnv = {
    settings: {
      sessionTimeoutMs: cfg.groupConsumerSessionTimeoutMs,
      heartbeatIntervalMs: cfg.groupConsumerHeartbeatIntervalMs,
      maxSize: cfg.groupConsumerMaxSize,
      assignors: assignorsByName(cfg.groupConsumerAssignors),
      migrationPolicy: parseMigrationPolicy(cfg.groupConsumerMigrationPolicy),
    },
    topics: metadataTopics(metadata),
    compileRegex,
    ...(groupConfigs ? { groupConfigs } : {}),
  };
  // Topics changed: regex subscriptions are matched again in slices, before their groups' next
  // heartbeats need them (one pass per burst of changes).
  let pending: NodeJS.Timeout | null = null;
  metadata.onChange(() => {
    if (pending !== null) return;
    pending = setTimeout(() => {
      pending = null;
      void prepareStaleRegexMatches(env);
    }, 10).unref();
  });
  return env;
}

/** The cluster's (non-internal) topics as subscriptions resolve them, racks from the brokers'. */
export function metadataTopics(metadata: MetadataStore): ClusterTopics {
  let generation = 0;
  metadata.onChange(() => void generation++);
  return {
    generation: () => generation,
    byName(name: string): ClusterTopic | undefined {
      const t = metadata.topic(name);
      if (!t || t.internal) return undefined;
      let racksByBroker: Map<number, string> | undefined;
      return {
        topicId: t.topicId,
        name: t.name,
        partitionCount: t.partitions.length,
        racks(partition: number): readonly string[] {
          racksByBroker ??= new Map(metadata.brokers().flatMap((b) => (b.rack === null ? [] : [[b.id, b.rack] as [number, string]])));
          if (racksByBroker.size === 0) return [];
          const racks = new Set<string>();
          for (const r of t.partitions[partition]?.replicas ?? []) {
            const rack = racksByBroker.get(r);
            if (rack !== undefined) racks.add(rack);
          }
          return [...racks].sort();
        },
      };
    },
    names: () => metadata.topics().flatMap((t) => (t.internal ? [] : [t.name])),
  };
}
