/**
 * LeaderAndIsr v0–v7 (controller → broker, cluster mode): which partitions this broker hosts,
 * as leader or follower, at which leader epoch. Fenced by controller epoch (top-level
 * STALE_CONTROLLER_EPOCH, nothing applied) and per partition by leader epoch
 * (FENCED_LEADER_EPOCH); see src/server/cluster/control-requests.ts.
 */
import { LeaderAndIsrRequestCodec, LeaderAndIsrResponseCodec } from '../../protocol/messages/index.js';
import type { LeaderAndIsrPartitionState, LeaderAndIsrResponse } from '../../protocol/messages/04-leader-and-isr.js';
import { ZERO_UUID, type Input } from '../../protocol/primitives/index.js';
import type { ControlPartitionState } from '../../metadata/zk/zk-broker-metadata.js';
import { ErrorCode } from '../../protocol/errors.js';
import { AclOperation } from './authz.js';
import { defineHandler } from './types.js';
import { clusterControlOf, controlHeader, topicIdOrUndefined } from './control-request-common.js';

function state(
  topic: string,
  topicId: string | undefined,
  p: LeaderAndIsrPartitionState,
): ControlPartitionState & { topicId: string | undefined; reassigning: boolean } {
  return {
    topic,
    topicId,
    partition: p.partitionIndex,
    controllerEpoch: p.controllerEpoch,
    leader: p.leader,
    leaderEpoch: p.leaderEpoch,
    isr: p.isr,
    replicas: p.replicas,
    offlineReplicas: [],
    zkVersion: p.partitionEpoch,
    reassigning: p.addingReplicas.length > 0 || p.removingReplicas.length > 0,
  };
}

export const leaderAndIsrHandler = defineHandler({
  apiKey: 4,
  request: LeaderAndIsrRequestCodec,
  response: LeaderAndIsrResponseCodec,
  minVersion: 0,
  maxVersion: 7,
  // Sent by the controller.
  authorize: { cluster: AclOperation.CLUSTER_ACTION, denied: () => ({ errorCode: ErrorCode.CLUSTER_AUTHORIZATION_FAILED }) },
  async handle(req, ctx) {
    const control = clusterControlOf(ctx, 'LeaderAndIsr');
    const version = ctx.header.apiVersion;
    const states =
      version <= 1
        ? req.ungroupedPartitionStates.map((p) => state(p.topicName, undefined, p))
        : req.topicStates.flatMap((t) => t.partitionStates.map((p) => state(t.topicName, topicIdOrUndefined(t.topicId), p)));
    const res = await control.leaderAndIsr(controlHeader(req), states);
    const out: Input<LeaderAndIsrResponse> = { errorCode: res.errorCode };
    if (version <= 4) {
      out.partitionErrors = res.partitions.map((p) => ({ topicName: p.topic, partitionIndex: p.partition, errorCode: p.errorCode }));
    } else {
      // v5+ groups by topic id (the request's ids; a topic sent without one answers under the zero uuid).
      const byId = new Map<string, { partitionIndex: number; errorCode: number }[]>();
      for (const p of res.partitions) {
        const id = p.topicId ?? ZERO_UUID;
        let list = byId.get(id);
        if (!list) byId.set(id, (list = []));
        list.push({ partitionIndex: p.partition, errorCode: p.errorCode });
      }
      out.topics = [...byId].map(([topicId, partitionErrors]) => ({ topicId, partitionErrors }));
    }
    return out;
  },
});
