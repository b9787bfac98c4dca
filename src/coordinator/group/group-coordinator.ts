/**
 * The group coordinator service the handlers call: finds the shard (offsets partition) of a
 * group, runs the operation through the coordinator runtime, and keeps the set of loaded
 * partitions in step with the `__consumer_offsets` partitions this broker leads.
 */
import type { Logger } from 'pino';
import type { BrokerConfig } from '../../server/config/index.js';
import type { MetadataStore } from '../../metadata/metadata-store.js';
import type { TopicInfo } from '../../metadata/cluster-model.js';
import type { ReplicaManager } from '../../replication/replica-manager.js';
import { ErrorCode, KafkaError } from '../../protocol/errors.js';
import { CoordinatorRuntime } from '../runtime/runtime.js';
import { ReplicaManagerCoordinatorLog } from '../runtime/partition-log.js';
import type { CoordinatorLog } from '../runtime/types.js';
import { GroupShard, joinError, syncError, type GroupCoordinatorConfig } from './group-shard.js';
import { decodeRecord, encodeRecord, type CoordinatorRecord } from './records.js';
import { partitionForGroup } from './partition-for-group.js';
import { joinGroup, syncGroup, type JoinRequest, type SyncRequest } from './join-sync.js';
import type { JoinOutcome, SyncOutcome } from './classic-group.js';
import { heartbeat, leaveGroup, type HeartbeatRequest, type LeaveResult, type LeavingMember } from './heartbeat-leave.js';
import { commitOffsets, deleteOffsets, fetchOffsets, type CommitRequest, type FetchedTopics, type OffsetDeleteResult, type TopicPartitionErrors } from './offsets.js';
import { deleteGroups, describeGroup, listGroups, type DescribedGroup, type ListedGroup } from './admin.js';
import { expireOffsets } from './expiry.js';

export const OFFSETS_TOPIC = '__consumer_offsets';

export function groupConfigFrom(cfg: BrokerConfig): GroupCoordinatorConfig {
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

export interface GroupCoordinatorOptions {
  config: BrokerConfig;
  metadata: MetadataStore;
  replicaManager: ReplicaManager;
  logger: Logger;
  /** Tests may substitute the log and the group settings. */
  log?: CoordinatorLog;
  groupConfig?: Partial<GroupCoordinatorConfig>;
}

const codeOf = (err: unknown): number => (err instanceof KafkaError ? err.code : ErrorCode.UNKNOWN_SERVER_ERROR);

export class GroupCoordinator {
  readonly runtime: CoordinatorRuntime<GroupShard, CoordinatorRecord>;
  private readonly numPartitions: number;
  private creating: Promise<TopicInfo> | undefined;
  private closed = false;

  constructor(private readonly opts: GroupCoordinatorOptions) {
    const groupConfig = { ...groupConfigFrom(opts.config), ...opts.groupConfig };
    const existing = opts.metadata.topic(OFFSETS_TOPIC);
    this.numPartitions = existing?.partitions.length ?? opts.config.offsetsTopicNumPartitions;
    this.runtime = new CoordinatorRuntime<GroupShard, CoordinatorRecord>({
      log: opts.log ?? new ReplicaManagerCoordinatorLog(opts.replicaManager, OFFSETS_TOPIC, (msg) => opts.logger.warn(msg)),
      serde: { encode: encodeRecord, decode: decodeRecord },
      newShard: (ctx) => new GroupShard(ctx, groupConfig),
      onError: (msg, err) => opts.logger.error({ err }, msg),
    });
  }

  /** Loads the offsets partitions led here and follows leadership changes. */
  start(): void {
    this.opts.metadata.onChange((topic) => {
      if (topic === OFFSETS_TOPIC) void this.syncLeadership();
    });
    void this.syncLeadership();
  }

  shutdown(): void {
    this.closed = true;
    this.runtime.close();
  }

  partitionFor(groupId: string): number {
    return partitionForGroup(groupId, this.numPartitions);
  }

  /** Creates `__consumer_offsets` on first use (FindCoordinator), as Kafka does. */
  async ensureOffsetsTopic(): Promise<TopicInfo> {
    const existing = this.opts.metadata.topic(OFFSETS_TOPIC);
    if (existing) return existing;
    this.creating ??= (async () => {
      const cfg = this.opts.config;
      const live = this.opts.metadata.brokers().length;
      try {
        await this.opts.metadata.createTopic({
          name: OFFSETS_TOPIC,
          numPartitions: this.numPartitions,
          replicationFactor: Math.max(1, Math.min(cfg.offsetsTopicReplicationFactor, live)),
          internal: true,
          configs: { 'cleanup.policy': 'compact', 'compression.type': 'producer', 'segment.bytes': String(cfg.offsetsTopicSegmentBytes) },
        });
      } catch (err) {
        if (!(err instanceof KafkaError && err.code === ErrorCode.TOPIC_ALREADY_EXISTS)) throw err;
      }
      await this.syncLeadership();
      return this.opts.metadata.topic(OFFSETS_TOPIC)!;
    })().finally(() => {
      this.creating = undefined;
    });
    return this.creating;
  }

  /** Loads partitions that became led here, unloads the ones that moved away. */
  async syncLeadership(): Promise<void> {
    if (this.closed) return;
    const info = this.opts.metadata.topic(OFFSETS_TOPIC);
    const me = this.opts.config.brokerId;
    const led = new Set((info?.partitions ?? []).filter((p) => p.leader === me).map((p) => p.partition));
    for (const p of this.runtime.activePartitions()) if (!led.has(p)) this.runtime.unload(p);
    if (led.size === 0) return;
    await this.opts.replicaManager.syncTopic(OFFSETS_TOPIC);
    await Promise.all([...led].map((p) => this.runtime.load(p).catch(() => undefined)));
  }

  /** Waits until every led offsets partition is loaded (tests, start-up). */
  async loaded(): Promise<void> {
    await this.syncLeadership();
  }

  async joinGroup(req: JoinRequest): Promise<JoinOutcome> {
    try {
      return await (await this.runtime.write(this.partitionFor(req.groupId), (s, now) => joinGroup(s, req, now)));
    } catch (err) {
      return joinError(codeOf(err), req.memberId);
    }
  }

  async syncGroup(req: SyncRequest): Promise<SyncOutcome> {
    try {
      return await (await this.runtime.write(this.partitionFor(req.groupId), (s, now) => syncGroup(s, req, now)));
    } catch (err) {
      return syncError(codeOf(err));
    }
  }

  async heartbeat(req: HeartbeatRequest): Promise<number> {
    try {
      return await this.runtime.write(this.partitionFor(req.groupId), (s) => heartbeat(s, req));
    } catch (err) {
      return codeOf(err);
    }
  }

  async leaveGroup(groupId: string, members: LeavingMember[]): Promise<LeaveResult> {
    try {
      return await this.runtime.write(this.partitionFor(groupId), (s, now) => leaveGroup(s, groupId, members, now));
    } catch (err) {
      return { errorCode: codeOf(err), members: [] };
    }
  }

  async commitOffsets(req: CommitRequest): Promise<TopicPartitionErrors> {
    try {
      return await this.runtime.write(this.partitionFor(req.groupId), (s, now) => commitOffsets(s, req, now));
    } catch (err) {
      const code = codeOf(err);
      return req.topics.map((t) => ({ name: t.name, partitions: t.partitions.map((p) => ({ partitionIndex: p.partitionIndex, errorCode: code })) }));
    }
  }

  /** Committed offsets, read only after every earlier write of the partition is durable. */
  async fetchOffsets(groupId: string, topics: { name: string; partitions: number[] }[] | null): Promise<{ errorCode: number; topics: FetchedTopics }> {
    try {
      const res = await this.runtime.read(this.partitionFor(groupId), (s) => fetchOffsets(s, groupId, topics));
      return { errorCode: ErrorCode.NONE, topics: res };
    } catch (err) {
      return { errorCode: codeOf(err), topics: [] };
    }
  }

  async deleteOffsets(groupId: string, topics: { name: string; partitions: number[] }[]): Promise<OffsetDeleteResult> {
    try {
      return await this.runtime.write(this.partitionFor(groupId), (s) => deleteOffsets(s, groupId, topics));
    } catch (err) {
      return { errorCode: codeOf(err), topics: [] };
    }
  }

  async describeGroup(groupId: string): Promise<DescribedGroup> {
    try {
      return await this.runtime.read(this.partitionFor(groupId), (s) => describeGroup(s, groupId));
    } catch (err) {
      return { errorCode: codeOf(err), groupId, groupState: '', protocolType: '', protocolData: '', members: [] };
    }
  }

  listGroups(statesFilter: string[], typesFilter: string[]): { errorCode: number; groups: ListedGroup[] } {
    const groups = this.runtime.activeShards().flatMap((s) => listGroups(s, statesFilter, typesFilter));
    return { errorCode: this.runtime.anyLoading() ? ErrorCode.COORDINATOR_LOAD_IN_PROGRESS : ErrorCode.NONE, groups };
  }

  async deleteGroups(groupIds: string[]): Promise<{ groupId: string; errorCode: number }[]> {
    const byPartition = new Map<number, string[]>();
    for (const g of groupIds) {
      const p = this.partitionFor(g);
      byPartition.set(p, [...(byPartition.get(p) ?? []), g]);
    }
    const results = new Map<string, number>();
    await Promise.all(
      [...byPartition].map(async ([p, ids]) => {
        try {
          for (const r of await this.runtime.write(p, (s) => deleteGroups(s, ids))) results.set(r.groupId, r.errorCode);
        } catch (err) {
          for (const id of ids) results.set(id, codeOf(err));
        }
      }),
    );
    return groupIds.map((groupId) => ({ groupId, errorCode: results.get(groupId) ?? ErrorCode.UNKNOWN_SERVER_ERROR }));
  }

  /** Runs offset expiry on every loaded partition now (tests and the admin path). */
  async expireNow(): Promise<number> {
    let n = 0;
    for (const p of this.runtime.activePartitions()) n += await this.runtime.write(p, (s, now) => expireOffsets(s, now));
    return n;
  }
}
