/**
 * The group coordinator service the handlers call: finds the shard (offsets partition) of a
 * group and runs the operation through the coordinator runtime; the shared shell keeps the set
 * of loaded partitions in step with the `__consumer_offsets` partitions this broker leads. It
 * also removes the offsets of deleted partitions and completes transactional offset commits.
 */
import { countGroups, type GroupCounts } from './group-counts.js';
import type { Logger } from 'pino';
import type { MetadataStore } from '../../metadata/metadata-store.js';
import type { TopicInfo } from '../../metadata/cluster-model.js';
import { ErrorCode, KafkaError } from '../../protocol/errors.js';
import type { CoordinatorRuntime } from '../runtime/runtime.js';
import { CoordinatorShell, internalTopicMinIsr, type CoordinatorReplicas } from '../runtime/coordinator-shell.js';
import type { CoordinatorLog } from '../runtime/types.js';
import { GroupShard } from './group-shard.js';
import { groupConfigFrom, type GroupCoordinatorBrokerConfig, type GroupCoordinatorConfig } from './config.js';
import { decodeRecord, encodeRecord, type CoordinatorRecord } from './records.js';
import { joinGroup, syncGroup, type JoinRequest, type SyncRequest } from './join-sync.js';
import { joinError, syncError, type JoinOutcome, type SyncOutcome } from './classic-group.js';
import { heartbeat, leaveGroup, type HeartbeatRequest, type LeaveResult, type LeavingMember } from './heartbeat-leave.js';
import {
  commitOffsets,
  deleteOffsets,
  fetchOffsets,
  txnCommitOffsets,
  type TxnCommitRequest,
  type CommitRequest,
  type FetchedTopics,
  type OffsetDeleteResult,
  type TopicPartitionErrors,
} from './offsets.js';
import { deleteGroups, describeGroup, listGroups, type DescribedGroup, type ListedGroup } from './admin.js';
import { expireOffsets } from './expiry.js';
import type { CommittedOffset } from './offset-store.js';
import { hasOffsetsBeyond, removeOffsetsOfDeletedPartitions, type RemovedOffsets } from './deleted-partitions.js';
import { ConsumerGroupService, consumerGroupEnv } from './consumer/consumer-service.js';
import type { ConsumerGroupEnv, GroupConfigLookup, RegexCompiler } from './consumer/settings.js';
import { listConsumerGroups } from './consumer/describe.js';
import { OffsetHistoryTracker, BY_BROKER, commitCause, type HistorySink } from './history/history-tracker.js';
import { classicJoinOverConsumerGroup } from './consumer/classic-join.js';
import { classicHeartbeatToConsumerGroup, classicLeaveFromConsumerGroup, classicSyncToConsumerGroup } from './consumer/classic-member-in-consumer-group.js';

export const OFFSETS_TOPIC = '__consumer_offsets';

/** A transaction marker written to a partition here, as the replica manager tells it. */
export interface WrittenTxnMarker {
  topic: string;
  partition: number;
  producerId: bigint;
  commit: boolean;
}

/** The replica manager as the group coordinator uses it (the broker's fits as it is). */
export interface GroupCoordinatorReplicas extends CoordinatorReplicas {
  readonly txnMarkerListeners: { add(listener: (marker: WrittenTxnMarker) => void): unknown };
}

export interface GroupCoordinatorOptions {
  config: GroupCoordinatorBrokerConfig;
  metadata: MetadataStore;
  replicaManager: GroupCoordinatorReplicas;
  logger: Logger;
  /** Tests may substitute the log and the group settings. */
  log?: CoordinatorLog;
  groupConfig?: Partial<GroupCoordinatorConfig>;
  /** Consumer groups' regex subscriptions (KIP-848); RE2J's dialect by default. */
  compileRegex?: RegexCompiler;
  /** The offset history (history/): where its entries go, and the alive interval. */
  history?: { sink: HistorySink; aliveIntervalMs: number };
  /** A group's own configs (the GROUP config resource), which win over the broker's group.consumer.* settings. */
  configsOf?: GroupConfigLookup;
}

const codeOf = (err: unknown): number => (err instanceof KafkaError ? err.code : ErrorCode.UNKNOWN_SERVER_ERROR);

export class GroupCoordinator {
  private readonly shell: CoordinatorShell<GroupShard, CoordinatorRecord>;
  /** ConsumerGroupHeartbeat and ConsumerGroupDescribe (KIP-848, consumer/). */
  readonly consumerGroups = new ConsumerGroupService(
    () => this.runtime,
    (g) => this.partitionFor(g),
    () => this.consumerEnv,
  );
  private consumerEnv: ConsumerGroupEnv | null = null;
  /** The offset history (history/): off unless options.history is given. */
  readonly history: OffsetHistoryTracker;

  constructor(private readonly opts: GroupCoordinatorOptions) {
    const groupConfig = { ...groupConfigFrom(opts.config), ...opts.groupConfig };
    const cfg = opts.config;
    const consumerEnv = (this.consumerEnv = consumerGroupEnv(cfg, opts.metadata, opts.compileRegex, opts.configsOf));
    const history = (this.history = new OffsetHistoryTracker(opts.history));
    this.shell = new CoordinatorShell<GroupShard, CoordinatorRecord>({
      topic: {
        name: OFFSETS_TOPIC,
        numPartitions: cfg.offsetsTopicNumPartitions,
        replicationFactor: cfg.offsetsTopicReplicationFactor,
        description: 'the offsets topic',
        replicationFactorSetting: 'offsets.topic.replication.factor',
        // min.insync.replicas 2 from 3 replicas on: a commit acknowledged to the group survives
        // one broker failure (Kafka leaves the broker default of 1; issue 22 asks for 2).
        configs: (rf) => ({
          'cleanup.policy': 'compact',
          'compression.type': 'producer',
          'min.insync.replicas': String(internalTopicMinIsr(rf)),
          'segment.bytes': String(cfg.offsetsTopicSegmentBytes),
        }),
      },
      config: cfg,
      metadata: opts.metadata,
      replicaManager: opts.replicaManager,
      logger: opts.logger,
      log: opts.log,
      runtime: {
        serde: { encode: encodeRecord, decode: decodeRecord },
        newShard: (ctx) => history.attach(new GroupShard(ctx, groupConfig, opts.logger, consumerEnv)),
        // Offsets of topics deleted while this partition was not loaded (or before their
        // tombstones were durable: a crash right after the delete) go now, before anyone reads them.
        afterLoad: (shard, now) => {
          const res = removeOffsetsOfDeletedPartitions(shard, this.partitionCount);
          this.logRemoved(shard.ctx.partition, res.response, 'loading');
          return history.track(shard, { records: res.records, response: undefined }, BY_BROKER.delete, now);
        },
      },
    });
  }

  get runtime(): CoordinatorRuntime<GroupShard, CoordinatorRecord> {
    return this.shell.runtime;
  }

  private readonly partitionCount = (topic: string): number | undefined => this.opts.metadata.topic(topic)?.partitions.length;

  private logRemoved(partition: number, r: RemovedOffsets, when: string): void {
    if (r.offsets === 0) return;
    this.opts.logger.info(
      { offsetsPartition: partition, topics: r.topics, groups: r.groups, offsets: r.offsets },
      `removed ${r.offsets} committed offset(s) of ${r.groups} group(s) for deleted partitions of ${r.topics.join(', ')} (${when})`,
    );
  }

  /**
   * A topic was deleted or changed: the offsets of its partitions that no longer exist are
   * removed from every group (tombstones in `__consumer_offsets`, so they stay gone after a
   * restart). The in-memory removal happens now, before the deleting request is answered.
   */
  private removeOffsetsOfDeletedTopic(topic: string): Promise<void> {
    const done: Promise<void>[] = [];
    for (const p of this.runtime.activePartitions()) {
      try {
        done.push(
          this.runtime
            .write(p, (s, now) => this.history.track(s, removeOffsetsOfDeletedPartitions(s, this.partitionCount, topic), BY_BROKER.delete, now))
            .then((r) => this.logRemoved(p, r, 'topic deleted')),
        );
      } catch (err) {
        // The partition stopped being active; its next load repairs it (afterLoad).
        this.opts.logger.warn({ err, topic, offsetsPartition: p }, 'could not remove offsets of a deleted topic now');
      }
    }
    return Promise.all(done).then(
      () => undefined,
      (err: unknown) => this.opts.logger.error({ err, topic }, 'writing tombstones for the offsets of a deleted topic failed'),
    );
  }

  /** Loads the offsets partitions led here and follows leadership changes. */
  start(): void {
    // A transaction's marker on an offsets partition makes its pending offset commits visible or drops them.
    this.opts.replicaManager.txnMarkerListeners.add((w) => {
      if (w.topic === OFFSETS_TOPIC) void this.onTransactionCompleted(w.partition, w.producerId, w.commit);
    });
    this.shell.start((topic) => {
      const count = this.partitionCount(topic);
      if (count === undefined || hasOffsetsBeyond(this.runtime.activeShards(), topic, count)) void this.removeOffsetsOfDeletedTopic(topic);
    });
  }

  shutdown(): void {
    this.shell.close();
    this.history.close();
  }

  partitionFor(groupId: string): number {
    return this.shell.partitionFor(groupId);
  }

  /**
   * Creates `__consumer_offsets` on first use (FindCoordinator), as Kafka does. Rejects when
   * it cannot be created or its logs cannot be opened (a full disk): the failure is logged at
   * most once per interval, and FindCoordinator answers the retriable COORDINATOR_NOT_AVAILABLE.
   */
  ensureOffsetsTopic(): Promise<TopicInfo> {
    return this.shell.ensureTopic();
  }

  /**
   * Whether the offsets partition of `groupId`, when led here, has its log open. It may not,
   * when the log could not be created (a full disk): then the opening is retried now (once at a
   * time), so a client retrying FindCoordinator gets its coordinator once there is room again.
   */
  offsetsPartitionOpen(groupId: string): Promise<boolean> {
    return this.shell.partitionOpen(this.partitionFor(groupId));
  }

  /** Loads partitions that became led here, unloads the ones that moved away. */
  syncLeadership(): Promise<void> {
    return this.shell.syncLeadership();
  }

  /** Waits until every led offsets partition is loaded (tests, start-up). */
  async loaded(): Promise<void> {
    await this.syncLeadership();
  }

  async joinGroup(req: JoinRequest): Promise<JoinOutcome> {
    try {
      // The id of a consumer group (KIP-848): taken over when empty, else joined as a classic member.
      return await await this.runtime.write(this.partitionFor(req.groupId), (s, now) =>
        classicJoinOverConsumerGroup(s, req, now, () => joinGroup(s, req, now)),
      );
    } catch (err) {
      return joinError(codeOf(err), req.memberId);
    }
  }

  async syncGroup(req: SyncRequest): Promise<SyncOutcome> {
    try {
      return await await this.runtime.write(this.partitionFor(req.groupId), (s, now) => {
        const cg = s.consumerGroups.get(req.groupId);
        return cg ? classicSyncToConsumerGroup(s, cg, req) : syncGroup(s, req, now);
      });
    } catch (err) {
      return syncError(codeOf(err));
    }
  }

  async heartbeat(req: HeartbeatRequest): Promise<number> {
    try {
      return await this.runtime.write(this.partitionFor(req.groupId), (s) => {
        const cg = s.consumerGroups.get(req.groupId);
        return cg ? classicHeartbeatToConsumerGroup(s, cg, req) : heartbeat(s, req);
      });
    } catch (err) {
      return codeOf(err);
    }
  }

  async leaveGroup(groupId: string, members: LeavingMember[]): Promise<LeaveResult> {
    try {
      return await this.runtime.write(this.partitionFor(groupId), (s, now) => {
        const cg = s.consumerGroups.get(groupId);
        return cg ? classicLeaveFromConsumerGroup(s, cg, members) : leaveGroup(s, groupId, members, now);
      });
    } catch (err) {
      return { errorCode: codeOf(err), members: [] };
    }
  }

  /** `client`: who commits (client id, host), for the offset history. */
  async commitOffsets(req: CommitRequest, client = { clientId: '', clientHost: '' }): Promise<TopicPartitionErrors> {
    const by = { cause: commitCause(req.memberId, req.generationId), memberId: req.memberId, generation: req.generationId, ...client };
    try {
      return await this.runtime.write(this.partitionFor(req.groupId), (s, now) => this.history.track(s, commitOffsets(s, req, now), by, now));
    } catch (err) {
      const code = codeOf(err);
      return req.topics.map((t) => ({ name: t.name, partitions: t.partitions.map((p) => ({ partitionIndex: p.partitionIndex, errorCode: code })) }));
    }
  }

  /** TxnOffsetCommit: pending until the transaction's marker (see onTransactionCompleted). */
  async commitTransactionalOffsets(req: TxnCommitRequest): Promise<TopicPartitionErrors> {
    try {
      return await this.runtime.write(this.partitionFor(req.groupId), (s, now) => txnCommitOffsets(s, req, now));
    } catch (err) {
      const code = codeOf(err);
      return req.topics.map((t) => ({ name: t.name, partitions: t.partitions.map((p) => ({ partitionIndex: p.partitionIndex, errorCode: code })) }));
    }
  }

  /**
   * A transaction marker of `producerId` was written to `__consumer_offsets` partition
   * `offsetsPartition` (by WriteTxnMarkers, once durable): its pending transactional offsets
   * become visible (commit) or are dropped (abort). Loading finds the marker in the log itself.
   * Resolves false when the partition is not coordinated here (nothing to do: its next load
   * replays the marker).
   *
   * A marker written while the partition loads (a new leader is told of it by the transaction
   * coordinator's retry as soon as it leads, and a big partition takes a while to replay) may lie
   * past the end the load reads to: it is applied as soon as the load is done. Applying one the
   * load did replay changes nothing: the producer has no pending offsets left, and it cannot have
   * new ones yet (its next TxnOffsetCommit is refused while the partition loads, and is queued
   * behind this completion once it is loaded).
   */
  async onTransactionCompleted(offsetsPartition: number, producerId: bigint, commit: boolean): Promise<boolean> {
    if (this.runtime.status(offsetsPartition) === 'loading') await this.runtime.load(offsetsPartition).catch(() => undefined);
    if (this.runtime.status(offsetsPartition) !== 'active') return false;
    try {
      await this.runtime.write(offsetsPartition, (s, now) => {
        this.history.endTransaction(s, producerId, commit, now, () => s.replayEndTransaction(producerId, commit, false));
        return { records: [], response: undefined };
      });
      return true;
    } catch {
      return false;
    }
  }

  /** Committed offsets, read only after every earlier write of the partition is durable. */
  async fetchOffsets(
    groupId: string,
    topics: { name: string; partitions: number[] }[] | null,
    requireStable = false,
    member?: { memberId: string | null; memberEpoch: number },
  ): Promise<{ errorCode: number; topics: FetchedTopics }> {
    try {
      const res = await this.runtime.read(this.partitionFor(groupId), (s) => fetchOffsets(s, groupId, topics, requireStable, member));
      return { errorCode: ErrorCode.NONE, topics: res };
    } catch (err) {
      return { errorCode: codeOf(err), topics: [] };
    }
  }

  async deleteOffsets(groupId: string, topics: { name: string; partitions: number[] }[]): Promise<OffsetDeleteResult> {
    try {
      return await this.runtime.write(this.partitionFor(groupId), (s, now) => this.history.track(s, deleteOffsets(s, groupId, topics), BY_BROKER.delete, now));
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

  /** Groups by state and offsets held here (group-counts.ts), for the metrics scrape. */
  groupCounts(out: GroupCounts): GroupCounts {
    out.loadingPartitions = this.runtime.loadingCount();
    return countGroups(this.runtime.activeShards(), out);
  }

  listGroups(statesFilter: string[], typesFilter: string[]): { errorCode: number; groups: ListedGroup[] } {
    const groups = this.runtime
      .activeShards()
      .flatMap((s) => [...listGroups(s, statesFilter, typesFilter), ...listConsumerGroups(s, statesFilter, typesFilter)]);
    return { errorCode: this.runtime.anyLoading() ? ErrorCode.COORDINATOR_LOAD_IN_PROGRESS : ErrorCode.NONE, groups };
  }

  async deleteGroups(groupIds: string[]): Promise<{ groupId: string; errorCode: number }[]> {
    const byPartition = new Map<number, string[]>();
    for (const g of groupIds) {
      const p = this.partitionFor(g);
      const ids = byPartition.get(p);
      if (ids)
        ids.push(g); // not a copy per group: 100,000 names in one request
      else byPartition.set(p, [g]);
    }
    const results = new Map<string, number>();
    await Promise.all(
      [...byPartition].map(async ([p, ids]) => {
        try {
          for (const r of await this.runtime.write(p, (s, now) => this.history.track(s, deleteGroups(s, ids), BY_BROKER.delete, now)))
            results.set(r.groupId, r.errorCode);
        } catch (err) {
          for (const id of ids) results.set(id, codeOf(err));
        }
      }),
    );
    return groupIds.map((groupId) => ({ groupId, errorCode: results.get(groupId) ?? ErrorCode.UNKNOWN_SERVER_ERROR }));
  }

  /**
   * Metrics (consumer lag): each group coordinated here (its offsets partition loaded), its
   * member count and its committed offsets (a live view: read, never change). Synchronous and
   * copy-free, so a scrape sees the state between two operations.
   */
  forEachGroup(fn: (groupId: string, members: number, offsets: ReadonlyMap<string, ReadonlyMap<number, CommittedOffset>>) => void): void {
    for (const s of this.runtime.activeShards()) {
      for (const [id, g] of s.groups) fn(id, g.members.size, s.offsets.groupOffsets(id));
      for (const [id, g] of s.consumerGroups) fn(id, g.members.size, s.offsets.groupOffsets(id));
      for (const id of s.offsets.groupIds()) if (!s.groups.has(id) && !s.consumerGroups.has(id)) fn(id, 0, s.offsets.groupOffsets(id));
    }
  }

  /** Runs offset expiry on every loaded partition now (tests and the admin path). */
  async expireNow(): Promise<number> {
    let n = 0;
    for (const p of this.runtime.activePartitions())
      n += await this.runtime.write(p, (s, now) => this.history.track(s, expireOffsets(s, now), BY_BROKER.expire, now));
    return n;
  }
}
