/**
 * StopReplica v0–v4 (controller → broker, cluster mode): stop serving partitions, and with
 * delete remove their logs (even of a topic the image no longer knows). v0–v2 carry one
 * delete flag for all; v3+ one per partition with its leader epoch (FENCED_LEADER_EPOCH when
 * lower than the local one). See src/server/cluster/control-requests.ts.
 */
import { StopReplicaRequestCodec, StopReplicaResponseCodec } from '../../protocol/messages/index.js';
import type { StopReplicaPartition } from '../../replication/hosting/role-changes.js';
import { ErrorCode } from '../../protocol/errors.js';
import { AclOperation } from './authz.js';
import { defineHandler } from './types.js';
import { clusterControlOf, controlHeader } from './control-request-common.js';

/** Kafka's LeaderAndIsr.NoEpoch: versions before v3 carry no leader epoch. */
const NO_EPOCH = -1;

export const stopReplicaHandler = defineHandler({
  apiKey: 5,
  request: StopReplicaRequestCodec,
  response: StopReplicaResponseCodec,
  minVersion: 0,
  maxVersion: 4,
  // Sent by the controller.
  authorize: { cluster: AclOperation.CLUSTER_ACTION, denied: () => ({ errorCode: ErrorCode.CLUSTER_AUTHORIZATION_FAILED, partitionErrors: [] }) },
  async handle(req, ctx) {
    const control = clusterControlOf(ctx, 'StopReplica');
    const version = ctx.header.apiVersion;
    let parts: StopReplicaPartition[];
    if (version === 0) {
      parts = req.ungroupedPartitions.map((p) => ({
        topic: p.topicName,
        partition: p.partitionIndex,
        leaderEpoch: NO_EPOCH,
        deletePartition: req.deletePartitions,
      }));
    } else if (version <= 2) {
      parts = req.topics.flatMap((t) =>
        t.partitionIndexes.map((partition) => ({ topic: t.name, partition, leaderEpoch: NO_EPOCH, deletePartition: req.deletePartitions })),
      );
    } else {
      parts = req.topicStates.flatMap((t) =>
        t.partitionStates.map((p) => ({ topic: t.topicName, partition: p.partitionIndex, leaderEpoch: p.leaderEpoch, deletePartition: p.deletePartition })),
      );
    }
    const res = await control.stopReplica(controlHeader(req), parts);
    return {
      errorCode: res.errorCode,
      partitionErrors: res.partitions.map((p) => ({ topicName: p.topic, partitionIndex: p.partition, errorCode: p.errorCode })),
    };
  },
});
