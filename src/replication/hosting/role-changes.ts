/**
 * The controller's role changes applied to this broker's partitions (cluster mode), as Kafka's
 * ReplicaManager.becomeLeaderOrFollower and stopReplicas: LeaderAndIsr opens the log of every
 * partition whose replicas include this broker and makes it leader, or follower fetching from
 * its leader; StopReplica stops serving a partition here, deleting its log when asked. Both come
 * with the controller epoch already checked. ReplicaManager serialises them with its metadata
 * syncs and hands in what it owns through RoleChangeContext.
 */
import type { Logger } from 'pino';
import { ErrorCode } from '../../protocol/errors.js';
import { forEachConcurrently } from '../../common/concurrency.js';
import type { LogManager } from '../../storage/manager/log-manager.js';
import { tpKey } from '../../common/partition-keys.js';
import type { Partition } from '../partition/partition.js';
import { OPEN_CONCURRENCY, type HostedPartitions } from './hosted-partitions.js';
import { messageOf } from '../../common/errors.js';
import type { ReplicaFetcherManager } from '../fetcher/manager.js';

/** One partition of a LeaderAndIsr request, every version normalised. */
export interface LeaderAndIsrPartition {
  topic: string;
  /** undefined when the request carried none (before v5). */
  topicId: string | undefined;
  partition: number;
  leader: number;
  leaderEpoch: number;
  isr: number[];
  replicas: number[];
  /** zkVersion of the partition state znode (LeaderAndIsr's partition_epoch / zkVersion); -1 when unknown. */
  partitionEpoch?: number;
  /** The controller epoch that wrote the state. */
  controllerEpoch?: number;
  /** Adding or removing replicas were named (LeaderAndIsr v3+): a reassignment in progress. */
  reassigning?: boolean;
}

/** One partition of a StopReplica request; leaderEpoch -1 (none given) or -2 (topic being deleted) always applies. */
export interface StopReplicaPartition {
  topic: string;
  partition: number;
  leaderEpoch: number;
  deletePartition: boolean;
}

/** Kafka's LeaderAndIsr.NoEpoch and EpochDuringDelete. */
const NO_EPOCH = -1;
const EPOCH_DURING_DELETE = -2;

export interface RoleChangeContext {
  brokerId: number;
  logger: Logger;
  logManager: LogManager;
  hosted: HostedPartitions;
  /** The replica fetchers; undefined without inter-broker endpoints (followers then do not fetch). */
  fetchers: ReplicaFetcherManager | undefined;
  /** Whether the broker is shutting down; asked at each step, as it may start meanwhile. */
  isStopped(): boolean;
  /** This broker took the lead of `p` (ReplicaManager answers its followers' parked fetches). */
  noteNewLeadership(p: Partition): void;
}

/**
 * LeaderAndIsr: per partition, a leader epoch lower than the local one is fenced
 * (FENCED_LEADER_EPOCH, nothing applied; an equal one is a re-send and applied again); a
 * partition whose replicas do not include this broker is UNKNOWN_TOPIC_OR_PARTITION; otherwise
 * its log is opened (created when missing) and it becomes leader or follower. Returns the error
 * per partition, keyed by tpKey.
 */
export async function becomeLeaderOrFollower(
  ctx: RoleChangeContext,
  states: readonly LeaderAndIsrPartition[],
  configsOf: (topic: string) => Record<string, string>,
): Promise<Map<string, number>> {
  const { hosted, fetchers } = ctx;
  const errors = new Map<string, number>();
  const accepted: LeaderAndIsrPartition[] = [];
  for (const s of states) {
    const key = tpKey(s.topic, s.partition);
    const existing = hosted.get(s.topic, s.partition);
    if (existing && s.topicId && existing.topicId && existing.topicId !== s.topicId) errors.set(key, ErrorCode.INCONSISTENT_TOPIC_ID);
    else if (existing && s.leaderEpoch < existing.leaderEpoch) errors.set(key, ErrorCode.FENCED_LEADER_EPOCH);
    else if (existing && s.leaderEpoch === existing.leaderEpoch && (s.partitionEpoch ?? -1) >= 0 && (s.partitionEpoch ?? -1) < existing.partitionEpoch) {
      // Same leader epoch, older partition state (zkVersion) than this replica knows, say its own
      // ISR change: a controller's resend read before that write. Skipped, as Kafka's
      // Partition.makeLeader/makeFollower do, or it would undo the change.
      ctx.logger.info(
        { topic: s.topic, partition: s.partition, partitionEpoch: s.partitionEpoch, known: existing.partitionEpoch },
        'LeaderAndIsr skipped: older partition epoch than this replica knows',
      );
    } else if (!s.replicas.includes(ctx.brokerId)) errors.set(key, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
    else accepted.push(s);
  }
  await forEachConcurrently(accepted, OPEN_CONCURRENCY, async (s) => {
    const key = tpKey(s.topic, s.partition);
    if (ctx.isStopped()) {
      errors.set(key, ErrorCode.NOT_LEADER_OR_FOLLOWER);
      return;
    }
    try {
      const existing = hosted.get(s.topic, s.partition);
      // A follower's log opened now starts from its checkpointed high watermark, as Kafka's does.
      const checkpointedHw = existing ? undefined : ctx.logManager.checkpointedHighWatermark(s.topic, s.partition);
      const p =
        existing ??
        (await hosted.open({ name: s.topic, topicId: s.topicId ?? '' }, s.partition, s.leaderEpoch, hosted.logConfigOf(s.topic, configsOf(s.topic))));
      if (s.topicId && !p.topicId) {
        p.topicId = s.topicId;
        hosted.noteTopicId(p);
      }
      const partitionEpoch = s.partitionEpoch ?? -1;
      p.reassigning = s.reassigning ?? false;
      const controllerEpoch = s.controllerEpoch ?? -1;
      if (s.leader === ctx.brokerId) {
        // Stop fetching first: the fetcher's last append is done before this broker leads.
        await fetchers?.removeFetcherForPartitions([key]);
        await p.makeLeader(ctx.brokerId, s.leaderEpoch, s.isr, s.replicas, partitionEpoch, controllerEpoch);
        ctx.noteNewLeadership(p);
      } else {
        const restart = p.isLeader || p.leaderId !== s.leader || p.leaderEpoch !== s.leaderEpoch || !fetchers?.isFetching(s.topic, s.partition);
        if (restart) await fetchers?.removeFetcherForPartitions([key]);
        p.makeFollower(s.leader, s.leaderEpoch, s.isr, s.replicas, partitionEpoch, controllerEpoch);
        if (checkpointedHw !== undefined && fetchers) p.setFollowerHighWatermark(checkpointedHw);
        if (restart) await startFetching(ctx, p);
      }
      errors.set(key, ErrorCode.NONE);
    } catch (err) {
      ctx.logger.error({ topic: s.topic, partition: s.partition, err: messageOf(err) }, 'cannot open the log of a partition LeaderAndIsr assigned here');
      errors.set(key, ErrorCode.KAFKA_STORAGE_ERROR);
    }
  });
  return errors;
}

/**
 * StopReplica: a lower leader epoch than the local one is FENCED_LEADER_EPOCH; otherwise the
 * partition stops being served here, and with deletePartition its log is deleted, even when
 * neither the image nor the open partitions know it (a topic deleted while this broker was
 * away). Without delete the log stays open as a follower (issue 12: its fetcher stops here).
 */
export async function stopReplicas(ctx: RoleChangeContext, parts: readonly StopReplicaPartition[]): Promise<Map<string, number>> {
  const { hosted } = ctx;
  const errors = new Map<string, number>();
  // As Kafka: the fetchers let go of every partition named before anything is stopped or deleted.
  await ctx.fetchers?.removeFetcherForPartitions(
    parts
      .filter((s) => {
        const p = hosted.get(s.topic, s.partition);
        return !p || s.leaderEpoch === NO_EPOCH || s.leaderEpoch === EPOCH_DURING_DELETE || s.leaderEpoch >= p.leaderEpoch;
      })
      .map((s) => tpKey(s.topic, s.partition)),
  );
  for (const s of parts) {
    const key = tpKey(s.topic, s.partition);
    const p = hosted.get(s.topic, s.partition);
    if (p && s.leaderEpoch !== NO_EPOCH && s.leaderEpoch !== EPOCH_DURING_DELETE && s.leaderEpoch < p.leaderEpoch) {
      errors.set(key, ErrorCode.FENCED_LEADER_EPOCH);
      continue;
    }
    try {
      if (s.deletePartition) {
        if (p) await hosted.drop(p, true);
        else if (ctx.logManager.getLog(s.topic, s.partition)) await ctx.logManager.deleteLog(s.topic, s.partition);
      } else if (p?.isLeader) {
        p.makeFollower(-1, p.leaderEpoch);
      }
      errors.set(key, ErrorCode.NONE);
    } catch (err) {
      ctx.logger.error({ topic: s.topic, partition: s.partition, err: messageOf(err) }, 'stopping a replica failed');
      errors.set(key, ErrorCode.KAFKA_STORAGE_ERROR);
    }
  }
  return errors;
}

/**
 * A follower starts fetching from its leader, as Kafka 2.7+ (truncation on fetch): a log that
 * knows its leader epochs fetches from its log end and the leader's diverging_epoch says where
 * to cut; a log without epochs starts from its high watermark and cuts there first. No leader
 * (-1): nothing to fetch from until the next LeaderAndIsr.
 */
async function startFetching(ctx: RoleChangeContext, p: Partition): Promise<void> {
  const { fetchers } = ctx;
  if (!fetchers || ctx.isStopped() || p.leaderId < 0) return;
  // Loaded here, not imported: the fetchers are cluster mode's, and embedded mode never loads them.
  const { followerReplicaOf } = await import('../fetcher/manager.js');
  // A produce accepted while this broker still led may be appending: start after it.
  await p.appendsDone();
  const knowsEpochs = p.log.epochs.latestEpoch() >= 0;
  await fetchers.addFetcherForPartitions([
    {
      replica: followerReplicaOf(p),
      topicId: p.topicId,
      leaderId: p.leaderId,
      leaderEpoch: p.leaderEpoch,
      fetchOffset: knowsEpochs ? p.logEndOffset : p.highWatermark,
    },
  ]);
}
