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
import { commitOffsets, deleteOffsets, fetchOffsets, txnCommitOffsets, type TxnCommitRequest, type CommitRequest, type FetchedTopics, type OffsetDeleteResult, type TopicPartitionErrors } from './offsets.js';
import { deleteGroups, describeGroup, listGroups, type DescribedGroup, type ListedGroup } from './admin.js';
import { expireOffsets } from './expiry.js';
import { removeOffsetsOfDeletedPartitions, type RemovedOffsets } from './deleted-partitions.js';
import { FailureLog } from '../../common/failure-log.js';

const messageOf = (err: unknown): string => (err instanceof Error ? err.message : String(err));

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
  private reopening: Promise<void> | undefined;
  private closed = false;
  private readonly failures: FailureLog;

  constructor(private readonly opts: GroupCoordinatorOptions) {
    this.failures = new FailureLog(opts.logger);
    const groupConfig = { ...groupConfigFrom(opts.config), ...opts.groupConfig };
    const existing = opts.metadata.topic(OFFSETS_TOPIC);
    this.numPartitions = existing?.partitions.length ?? opts.config.offsetsTopicNumPartitions;
    this.runtime = new CoordinatorRuntime<GroupShard, CoordinatorRecord>({
      log: opts.log ?? new ReplicaManagerCoordinatorLog(opts.replicaManager, OFFSETS_TOPIC, (msg) => opts.logger.warn(msg)),
      serde: { encode: encodeRecord, decode: decodeRecord },
      newShard: (ctx) => new GroupShard(ctx, groupConfig, opts.logger),
      onError: (msg, err) => opts.logger.error({ err }, msg),
      // Offsets of topics deleted while this partition was not loaded (or before their
      // tombstones were durable: a crash right after the delete) go now, before anyone reads them.
      afterLoad: (shard) => {
        const res = removeOffsetsOfDeletedPartitions(shard, this.partitionCount);
        this.logRemoved(shard.ctx.partition, res.response, 'loading');
        return { records: res.records, response: undefined };
      },
    });
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
            .write(p, (s) => removeOffsetsOfDeletedPartitions(s, this.partitionCount, topic))
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
    // A failed sync (its logs cannot be opened: a full disk) must not become an unhandled
    // rejection, which would end the process; FindCoordinator retries it.
    const sync = (): void =>
      void this.syncLeadership().catch((err: unknown) =>
        this.failures.failed('__consumer_offsets', 'log openings', 'warn', () => `cannot open the logs of ${OFFSETS_TOPIC}: ${messageOf(err)}`),
      );
    this.opts.metadata.onChange((topic) => {
      if (topic === OFFSETS_TOPIC) {
        sync();
        return;
      }
      const count = this.partitionCount(topic);
      if (count === undefined || this.hasOffsetsBeyond(topic, count)) void this.removeOffsetsOfDeletedTopic(topic);
    });
    // A transaction's marker on an offsets partition makes its pending offset commits visible or drops them.
    this.opts.replicaManager.txnMarkerListeners.add((w) => {
      if (w.topic === OFFSETS_TOPIC) void this.onTransactionCompleted(w.partition, w.producerId, w.commit);
    });
    sync();
  }

  private hasOffsetsBeyond(topic: string, count: number): boolean {
    for (const s of this.runtime.activeShards()) {
      for (const g of s.offsets.groupIds()) {
        const parts = s.offsets.groupOffsets(g).get(topic);
        if (parts) for (const p of parts.keys()) if (p >= count) return true;
      }
    }
    return false;
  }

  shutdown(): void {
    this.closed = true;
    this.runtime.close();
  }

  partitionFor(groupId: string): number {
    return partitionForGroup(groupId, this.numPartitions);
  }

  /**
   * Creates `__consumer_offsets` on first use (FindCoordinator), as Kafka does. Rejects when
   * it cannot be created or its logs cannot be opened (a full disk): the failure is logged at
   * most once per interval, and FindCoordinator answers the retriable COORDINATOR_NOT_AVAILABLE.
   */
  async ensureOffsetsTopic(): Promise<TopicInfo> {
    const existing = this.opts.metadata.topic(OFFSETS_TOPIC);
    if (existing) return existing;
    this.creating ??= (async () => {
      const cfg = this.opts.config;
      const live = this.opts.metadata.brokers().length;
      // Cluster mode follows Kafka: the offsets topic waits until enough brokers are up for
      // its full replication factor (a cluster starting up would otherwise be stuck with
      // fewer replicas forever). A single embedded broker takes what it has, as before.
      if (cfg.zookeeperConnect !== null && live < cfg.offsetsTopicReplicationFactor) {
        throw new KafkaError(
          ErrorCode.COORDINATOR_NOT_AVAILABLE,
          `Number of alive brokers '${live}' does not meet the required replication factor '${cfg.offsetsTopicReplicationFactor}' for the offsets topic (configured via 'offsets.topic.replication.factor')`,
        );
      }
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
    })()
      .catch((err: unknown) => {
        this.failures.failed('__consumer_offsets', 'creations', 'warn', () => `cannot create ${OFFSETS_TOPIC} or open its logs: ${messageOf(err)}`);
        throw err;
      })
      .finally(() => {
        this.creating = undefined;
      });
    return this.creating;
  }

  /**
   * Whether the offsets partition of `groupId`, when led here, has its log open. It may not,
   * when the log could not be created (a full disk): then the opening is retried now (once at a
   * time), so a client retrying FindCoordinator gets its coordinator once there is room again.
   */
  async offsetsPartitionOpen(groupId: string): Promise<boolean> {
    const partition = this.partitionFor(groupId);
    const ps = this.opts.metadata.topic(OFFSETS_TOPIC)?.partitions[partition];
    const isOpen = (): boolean => this.opts.replicaManager.getPartition(OFFSETS_TOPIC, partition) !== undefined;
    if (!ps || ps.leader !== this.opts.config.brokerId || isOpen()) return true;
    this.reopening ??= this.syncLeadership()
      .catch((err: unknown) => this.failures.failed('__consumer_offsets', 'log openings', 'warn', () => `cannot open the logs of ${OFFSETS_TOPIC}: ${messageOf(err)}`))
      .finally(() => {
        this.reopening = undefined;
      });
    await this.reopening;
    return isOpen();
  }

  /** Loads partitions that became led here, unloads the ones that moved away. */
  async syncLeadership(): Promise<void> {
    if (this.closed) return;
    const info = this.opts.metadata.topic(OFFSETS_TOPIC);
    const me = this.opts.config.brokerId;
    const led = new Set((info?.partitions ?? []).filter((p) => p.leader === me).map((p) => p.partition));
    // Loading ones too: a load finishing after leadership moved would serve (and later, when
    // leadership returns, keep) a state without the new leader's writes.
    for (const p of this.runtime.hostedPartitions()) if (!led.has(p)) this.runtime.unload(p);
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
      await this.runtime.write(offsetsPartition, (s) => {
        s.replayEndTransaction(producerId, commit, false);
        return { records: [], response: undefined };
      });
      return true;
    } catch {
      return false;
    }
  }

  /** Committed offsets, read only after every earlier write of the partition is durable. */
  async fetchOffsets(groupId: string, topics: { name: string; partitions: number[] }[] | null, requireStable = false): Promise<{ errorCode: number; topics: FetchedTopics }> {
    try {
      const res = await this.runtime.read(this.partitionFor(groupId), (s) => fetchOffsets(s, groupId, topics, requireStable));
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
      const ids = byPartition.get(p);
      if (ids) ids.push(g); // not a copy per group: 100,000 names in one request
      else byPartition.set(p, [g]);
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
