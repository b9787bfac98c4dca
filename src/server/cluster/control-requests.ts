/**
 * The broker's side of the controller's requests (LeaderAndIsr, UpdateMetadata, StopReplica),
 * after Kafka's KafkaApis + ReplicaManager: fencing by controller and broker epoch, then the
 * metadata image and the replica manager each take their part. Requests are applied one at a
 * time in arrival order (Kafka's replicaStateChangeLock): a connection may have several in
 * flight, and a later UpdateMetadata must not overtake an earlier LeaderAndIsr.
 *
 * Cluster mode only (loaded dynamically); the handlers see it through BrokerServices.clusterControl.
 */
import type { Logger } from 'pino';
import { ErrorCode } from '../../protocol/errors.js';
import { tpKey } from '../../common/partition-keys.js';
import type { ZkBrokerMetadata, ControlPartitionState, LiveBroker } from '../../metadata/zk/zk-broker-metadata.js';
import type { RoleChanges } from '../../replication/shards/worker/shard-roles.js';
import type { LeaderAndIsrPartition, StopReplicaPartition } from '../../replication/hosting/role-changes.js';
import type { ClusterControl, ControlHeader, PartitionResult } from '../broker-services.js';
import { StateChangeLog } from '../../common/state-change-log.js';

export interface ControlRequestsOptions {
  brokerId: number;
  image: ZkBrokerMetadata;
  /** Who applies role changes: the ReplicaManager (one thread), or ShardRoles, which splits them over the shards and answers once all did. */
  roles: RoleChanges;
  /** After each UpdateMetadata applied: the shard workers learn the live brokers' endpoints (their fetchers connect there). */
  liveBrokersChanged?: () => void;
  /** The czxid of this broker's registration (-1 until known): Kafka's broker epoch. */
  brokerEpoch: () => bigint;
  logger: Logger;
}

export class ControlRequests implements ClusterControl {
  private chain: Promise<unknown> = Promise.resolve();
  /** The broker epoch the last applied UpdateMetadata was addressed to (readiness: the controller spoke since this registration). */
  updateMetadataBrokerEpoch = -1n;
  private readonly stateChange: StateChangeLog;

  constructor(private readonly opts: ControlRequestsOptions) {
    this.stateChange = new StateChangeLog(opts.logger);
  }

  /** One at a time, in the order the requests arrived. */
  private serial<T>(run: () => Promise<T>): Promise<T> {
    const p = this.chain.then(run, run);
    this.chain = p.catch(() => undefined);
    return p;
  }

  /** STALE_CONTROLLER_EPOCH / STALE_BROKER_EPOCH for a fenced request, else NONE. */
  private fence(h: ControlHeader, api: string): number {
    const { image, logger } = this.opts;
    if (image.isControllerEpochStale(h.controllerEpoch)) {
      logger.warn(
        { api, controllerId: h.controllerId, controllerEpoch: h.controllerEpoch, latest: image.controllerEpoch },
        'ignoring a request from a deposed controller',
      );
      return ErrorCode.STALE_CONTROLLER_EPOCH;
    }
    // -1 (and 0, never a real czxid) means the sender did not know it: accepted, as Kafka does -1.
    const mine = this.opts.brokerEpoch();
    if (h.brokerEpoch > 0n && mine > 0n && h.brokerEpoch < mine) {
      logger.warn({ api, brokerEpoch: String(h.brokerEpoch), current: String(mine) }, 'ignoring a request for an earlier registration of this broker');
      return ErrorCode.STALE_BROKER_EPOCH;
    }
    image.noteController(h.controllerId, h.controllerEpoch);
    return ErrorCode.NONE;
  }

  leaderAndIsr(
    h: ControlHeader,
    states: readonly (ControlPartitionState & { topicId: string | undefined; reassigning?: boolean })[],
  ): Promise<{ errorCode: number; partitions: PartitionResult[] }> {
    return this.serial(async () => {
      const fenced = this.fence(h, 'LeaderAndIsr');
      if (fenced !== ErrorCode.NONE) return { errorCode: fenced, partitions: [] };
      const { image, roles } = this.opts;
      // Configs first: a log opened here starts with its topic's settings (compaction of __consumer_offsets).
      const topics = [...new Set(states.map((s) => s.topic))];
      await Promise.all(topics.filter((t) => !image.topic(t)).map((t) => image.refreshTopicConfigs(t).catch(() => undefined)));
      const input: LeaderAndIsrPartition[] = states.map((s) => ({
        topic: s.topic,
        topicId: s.topicId,
        partition: s.partition,
        leader: s.leader,
        leaderEpoch: s.leaderEpoch,
        isr: s.isr,
        replicas: s.replicas,
        partitionEpoch: s.zkVersion,
        controllerEpoch: s.controllerEpoch,
        reassigning: s.reassigning ?? false,
      }));
      const errors = await roles.becomeLeaderOrFollower(input, (t) => image.topicConfigs(t));
      const applied = states.filter((s) => errors.get(tpKey(s.topic, s.partition)) === ErrorCode.NONE);
      image.applyLeadership(applied);
      for (const s of applied)
        this.stateChange.becomeLeaderOrFollower(
          s.topic,
          s.partition,
          this.opts.brokerId,
          { ...s, partitionEpoch: s.zkVersion },
          h.controllerId,
          h.controllerEpoch,
        );
      return {
        errorCode: ErrorCode.NONE,
        partitions: states.map((s) => ({
          topic: s.topic,
          topicId: s.topicId,
          partition: s.partition,
          errorCode: errors.get(tpKey(s.topic, s.partition)) ?? ErrorCode.NONE,
        })),
      };
    });
  }

  updateMetadata(h: ControlHeader, liveBrokers: LiveBroker[], states: ControlPartitionState[], topicIds: Map<string, string>): Promise<number> {
    return this.serial(async () => {
      const fenced = this.fence(h, 'UpdateMetadata');
      if (fenced !== ErrorCode.NONE) return fenced;
      await this.opts.image.applyUpdateMetadata({
        controllerId: h.controllerId,
        controllerEpoch: h.controllerEpoch,
        liveBrokers,
        partitions: states,
        topicIds,
      });
      this.updateMetadataBrokerEpoch = h.brokerEpoch;
      this.opts.liveBrokersChanged?.();
      return ErrorCode.NONE;
    });
  }

  stopReplica(h: ControlHeader, parts: readonly StopReplicaPartition[]): Promise<{ errorCode: number; partitions: PartitionResult[] }> {
    return this.serial(async () => {
      const fenced = this.fence(h, 'StopReplica');
      if (fenced !== ErrorCode.NONE) return { errorCode: fenced, partitions: [] };
      const errors = await this.opts.roles.stopReplicas(parts);
      for (const p of parts)
        this.stateChange.stopReplica(
          p.topic,
          p.partition,
          p.leaderEpoch,
          p.deletePartition,
          h.controllerId,
          h.controllerEpoch,
          errors.get(tpKey(p.topic, p.partition)) ?? ErrorCode.NONE,
        );
      // The image is not touched, as Kafka's MetadataCache is not: a replica moved away by a
      // reassignment still exists elsewhere, and a deleted topic leaves the image through the
      // UpdateMetadata (leader -2) the controller sends every broker first.
      return {
        errorCode: ErrorCode.NONE,
        partitions: parts.map((p) => ({
          topic: p.topic,
          topicId: undefined,
          partition: p.partition,
          errorCode: errors.get(tpKey(p.topic, p.partition)) ?? ErrorCode.NONE,
        })),
      };
    });
  }
}
