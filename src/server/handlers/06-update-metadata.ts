/**
 * UpdateMetadata v0–v8 (controller → every broker, cluster mode): the live brokers with their
 * endpoints per listener and racks, and partition states (leader -2: the topic is being
 * deleted). Kafka's UpdateMetadata is incremental; see src/metadata/zk/zk-broker-metadata.ts.
 */
import { UpdateMetadataRequestCodec, UpdateMetadataResponseCodec } from '../../protocol/messages/index.js';
import type { UpdateMetadataBroker, UpdateMetadataPartitionState } from '../../protocol/messages/06-update-metadata.js';
import type { ControlPartitionState, LiveBroker } from '../../metadata/zk/zk-broker-metadata.js';
import { ErrorCode } from '../../protocol/errors.js';
import { AclOperation } from './authz.js';
import { defineHandler } from './types.js';
import { clusterControlOf, controlHeader, topicIdOrUndefined } from './control-request-common.js';

/** Kafka's SecurityProtocol ids: before v3 an endpoint is named by its protocol. */
const SECURITY_PROTOCOLS: Record<number, string> = { 0: 'PLAINTEXT', 1: 'SSL', 2: 'SASL_PLAINTEXT', 3: 'SASL_SSL' };

function liveBroker(b: UpdateMetadataBroker, version: number): LiveBroker {
  const endpoints = new Map<string, { host: string; port: number }>();
  if (version === 0) endpoints.set('PLAINTEXT', { host: b.v0Host, port: b.v0Port });
  else {
    for (const e of b.endpoints) {
      const name = version >= 3 && e.listener !== '' ? e.listener : (SECURITY_PROTOCOLS[e.securityProtocol] ?? `PROTOCOL_${e.securityProtocol}`);
      endpoints.set(name, { host: e.host, port: e.port });
    }
  }
  // Racks came with v2; older versions read the field's default.
  return { id: b.id, rack: version >= 2 ? b.rack : null, endpoints };
}

function state(topic: string, p: UpdateMetadataPartitionState): ControlPartitionState {
  return {
    topic,
    partition: p.partitionIndex,
    controllerEpoch: p.controllerEpoch,
    leader: p.leader,
    leaderEpoch: p.leaderEpoch,
    isr: p.isr,
    replicas: p.replicas,
    offlineReplicas: p.offlineReplicas,
    zkVersion: p.zkVersion,
  };
}

export const updateMetadataHandler = defineHandler({
  apiKey: 6,
  request: UpdateMetadataRequestCodec,
  response: UpdateMetadataResponseCodec,
  minVersion: 0,
  maxVersion: 8,
  // Sent by the controller.
  authorize: { cluster: AclOperation.CLUSTER_ACTION, denied: () => ({ errorCode: ErrorCode.CLUSTER_AUTHORIZATION_FAILED }) },
  async handle(req, ctx) {
    const control = clusterControlOf(ctx, 'UpdateMetadata');
    const version = ctx.header.apiVersion;
    const topicIds = new Map<string, string>();
    let states: ControlPartitionState[];
    if (version <= 4) states = req.ungroupedPartitionStates.map((p) => state(p.topicName, p));
    else {
      states = [];
      for (const t of req.topicStates) {
        const id = topicIdOrUndefined(t.topicId);
        if (id) topicIds.set(t.topicName, id);
        for (const p of t.partitionStates) states.push(state(t.topicName, p));
      }
    }
    const errorCode = await control.updateMetadata(
      controlHeader(req),
      req.liveBrokers.map((b) => liveBroker(b, version)),
      states,
      topicIds,
    );
    return { errorCode };
  },
});
