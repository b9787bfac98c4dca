import { MetadataRequestCodec, MetadataResponseCodec } from '../../protocol/messages/index.js';
import type { MetadataResponseTopic } from '../../protocol/messages/03-metadata.js';
import { ErrorCode, KafkaError } from '../../protocol/errors.js';
import { ZERO_UUID, type Input } from '../../protocol/primitives/index.js';
import type { TopicInfo } from '../../metadata/cluster-model.js';
import { topicNameError } from '../../metadata/topic-names.js';
import { autoCreateTopic } from '../topic-creation.js';
import { defineHandler, type RequestContext } from './types.js';
import { AclOperation, ResourceType, authorizeCluster, authorizeTopic, authorizedOperations } from './authz.js';
import { CLUSTER_NAME } from '../../security/authorizer/acl-model.js';

function describeTopic(ctx: RequestContext, t: TopicInfo, includeOps: boolean): Input<MetadataResponseTopic> {
  return {
    errorCode: ErrorCode.NONE,
    name: t.name,
    topicId: t.topicId,
    isInternal: t.internal,
    partitions: t.partitions.map((p) => ({
      errorCode: p.leader < 0 ? ErrorCode.LEADER_NOT_AVAILABLE : ErrorCode.NONE,
      partitionIndex: p.partition,
      leaderId: p.leader,
      leaderEpoch: p.leaderEpoch,
      replicaNodes: p.replicas,
      isrNodes: p.isr,
      offlineReplicas: p.offlineReplicas,
    })),
    topicAuthorizedOperations: authorizedOperations(ctx, ResourceType.TOPIC, t.name, includeOps),
  };
}

async function lookup(
  ctx: RequestContext,
  name: string | null,
  topicId: string,
  allowAutoCreate: boolean,
  includeOps: boolean,
): Promise<Input<MetadataResponseTopic>> {
  const { metadata } = ctx.services;
  if (name === null || name === '') {
    const t = topicId !== ZERO_UUID ? metadata.topicById(topicId) : undefined;
    if (t && !authorizeTopic(ctx, AclOperation.DESCRIBE, t.name)) return { errorCode: ErrorCode.TOPIC_AUTHORIZATION_FAILED, name: null, topicId, partitions: [] };
    if (t) return describeTopic(ctx, t, includeOps);
    return { errorCode: ErrorCode.UNKNOWN_TOPIC_ID, name: null, topicId, partitions: [] };
  }
  // ACLs: a topic the principal may not describe is TOPIC_AUTHORIZATION_FAILED, existing or not.
  if (!authorizeTopic(ctx, AclOperation.DESCRIBE, name)) return { errorCode: ErrorCode.TOPIC_AUTHORIZATION_FAILED, name, partitions: [] };
  const t = metadata.topic(name);
  if (t) return describeTopic(ctx, t, includeOps);
  if (topicNameError(name)) return { errorCode: ErrorCode.INVALID_TOPIC_EXCEPTION, name, partitions: [] };
  if (!allowAutoCreate) return { errorCode: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, name, partitions: [] };
  // Auto-creation needs CREATE on the cluster or on the topic.
  if (!authorizeCluster(ctx, AclOperation.CREATE) && !authorizeTopic(ctx, AclOperation.CREATE, name)) {
    return { errorCode: ErrorCode.TOPIC_AUTHORIZATION_FAILED, name, partitions: [] };
  }
  try {
    return describeTopic(ctx, await autoCreateTopic(ctx.services, name), includeOps);
  } catch (err) {
    const code = err instanceof KafkaError ? err.code : ErrorCode.UNKNOWN_SERVER_ERROR;
    // Cluster mode: written to ZooKeeper but no leaders yet within the bound. Kafka answers an
    // auto-created topic with LEADER_NOT_AVAILABLE, which clients retry.
    if (code === ErrorCode.REQUEST_TIMED_OUT) return { errorCode: ErrorCode.LEADER_NOT_AVAILABLE, name, partitions: [] };
    return { errorCode: code, name, partitions: [] };
  }
}

/** Every topic, or with ACLs only those the principal may DESCRIBE (the others stay unknown to it). */
function visibleTopics(ctx: RequestContext): readonly TopicInfo[] {
  const topics = ctx.services.metadata.topics();
  if (ctx.services.authorizer === undefined) return topics;
  return topics.filter((t) => ctx.services.authorizer!.authorize(ctx.connection.principal, ctx.connection.clientHost, AclOperation.DESCRIBE, ResourceType.TOPIC, t.name, 'Metadata', false));
}

export const metadataHandler = defineHandler({
  apiKey: 3,
  request: MetadataRequestCodec,
  response: MetadataResponseCodec,
  minVersion: 0,
  maxVersion: 12,
  async handle(req, ctx) {
    const { metadata } = ctx.services;
    const version = ctx.header.apiVersion;
    const includeOps = req.includeTopicAuthorizedOperations;
    // v0 asks for every topic with an empty list; v1+ with a null list.
    const all = req.topics === null || (version === 0 && req.topics.length === 0);
    const allowAutoCreate = version < 4 ? true : req.allowAutoTopicCreation;
    const topics = all
      ? visibleTopics(ctx).map((t) => describeTopic(ctx, t, includeOps))
      : await Promise.all(req.topics!.map((t) => lookup(ctx, t.name, t.topicId, allowAutoCreate, includeOps)));
    const listener = ctx.connection.listenerName;
    const brokers = metadata.brokers().flatMap((b) => {
      const ep = ctx.services.endpointFor(b.id, listener);
      return ep ? [{ nodeId: b.id, host: ep.host, port: ep.port, rack: b.rack }] : [];
    });
    return {
      throttleTimeMs: 0,
      brokers,
      clusterId: metadata.clusterId,
      controllerId: metadata.controllerId(),
      topics,
      clusterAuthorizedOperations: authorizedOperations(ctx, ResourceType.CLUSTER, CLUSTER_NAME, req.includeClusterAuthorizedOperations),
    };
  },
});
