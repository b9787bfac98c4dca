import { MetadataRequestCodec, MetadataResponseCodec } from '../../protocol/messages/index.js';
import type { MetadataRequestTopic, MetadataResponseTopic } from '../../protocol/messages/03-metadata.js';
import { ErrorCode, KafkaError } from '../../protocol/errors.js';
import { ZERO_UUID, type Input } from '../../protocol/primitives/index.js';
import type { TopicInfo } from '../../metadata/cluster-model.js';
import { topicNameError } from '../../metadata/topic-names.js';
import { autoCreateTopics } from '../topic-creation.js';
import { LoopSlicer, mapInSlices } from '../../common/slices.js';
import { defineHandler, type RequestContext } from './types.js';
import { AclOperation, CLUSTER_NAME, ResourceType, authorizedOperations, resourceChecks } from './authz.js';

/** Kafka's checks: DESCRIBE on each named topic; CREATE (cluster or topic) to auto-create one. */
const may = resourceChecks({
  describeTopic: { resource: ResourceType.TOPIC, operation: AclOperation.DESCRIBE },
  createTopics: { resource: ResourceType.CLUSTER, operation: AclOperation.CREATE },
  createTopic: { resource: ResourceType.TOPIC, operation: AclOperation.CREATE },
});

function describeTopic(ctx: RequestContext, t: TopicInfo, includeOps: boolean): Input<MetadataResponseTopic> {
  // A leader that is not a live broker (dead, its partitions not yet moved by the controller) is
  // answered as Kafka's metadata cache does: LEADER_NOT_AVAILABLE and leader -1, so that clients
  // wait and refresh instead of looking for a broker the same answer does not list.
  const live = new Set(ctx.services.metadata.brokers().map((b) => b.id));
  const leaderOf = (leader: number): number => (leader >= 0 && live.has(leader) ? leader : -1);
  return {
    errorCode: ErrorCode.NONE,
    name: t.name,
    topicId: t.topicId,
    isInternal: t.internal,
    partitions: t.partitions.map((p) => ({
      errorCode: leaderOf(p.leader) < 0 ? ErrorCode.LEADER_NOT_AVAILABLE : ErrorCode.NONE,
      partitionIndex: p.partition,
      leaderId: leaderOf(p.leader),
      leaderEpoch: p.leaderEpoch,
      replicaNodes: p.replicas,
      isrNodes: p.isr,
      offlineReplicas: p.offlineReplicas,
    })),
    topicAuthorizedOperations: authorizedOperations(ctx, ResourceType.TOPIC, t.name, includeOps),
  };
}

/** A named topic's answer, or the name to auto-create (answered once the batch is done). */
type Lookup = Input<MetadataResponseTopic> | { create: string };

function lookup(ctx: RequestContext, name: string | null, topicId: string, allowAutoCreate: boolean, includeOps: boolean): Lookup {
  const { metadata } = ctx.services;
  if (name === null || name === '') {
    const t = topicId !== ZERO_UUID ? metadata.topicById(topicId) : undefined;
    if (t && !may.describeTopic.allows(ctx, t.name)) return { errorCode: ErrorCode.TOPIC_AUTHORIZATION_FAILED, name: null, topicId, partitions: [] };
    if (t) return describeTopic(ctx, t, includeOps);
    return { errorCode: ErrorCode.UNKNOWN_TOPIC_ID, name: null, topicId, partitions: [] };
  }
  // ACLs: a topic the principal may not describe is TOPIC_AUTHORIZATION_FAILED, existing or not.
  if (!may.describeTopic.allows(ctx, name)) return { errorCode: ErrorCode.TOPIC_AUTHORIZATION_FAILED, name, partitions: [] };
  const t = metadata.topic(name);
  if (t) return describeTopic(ctx, t, includeOps);
  if (topicNameError(name)) return { errorCode: ErrorCode.INVALID_TOPIC_EXCEPTION, name, partitions: [] };
  if (!allowAutoCreate) return { errorCode: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, name, partitions: [] };
  // Auto-creation needs CREATE on the cluster or on the topic.
  if (!may.createTopics.allows(ctx, CLUSTER_NAME) && !may.createTopic.allows(ctx, name)) {
    return { errorCode: ErrorCode.TOPIC_AUTHORIZATION_FAILED, name, partitions: [] };
  }
  return { create: name };
}

/**
 * The named topics, each answered once however often it is named (Kafka reads them into a set),
 * in slices; the unknown ones to create go to autoCreateTopics as one batch.
 */
async function describeNamed(
  ctx: RequestContext,
  requested: readonly MetadataRequestTopic[],
  allowAutoCreate: boolean,
  includeOps: boolean,
): Promise<Input<MetadataResponseTopic>[]> {
  const slicer = new LoopSlicer();
  const seen = new Set<string>();
  const answers: Lookup[] = [];
  const toCreate: string[] = [];
  const maxCreate = ctx.services.config.autoCreateTopicsMaxPerRequest;
  for (const t of requested) {
    const key = t.name === null || t.name === '' ? `id ${t.topicId}` : `name ${t.name}`;
    if (!seen.has(key)) {
      seen.add(key);
      const answer = lookup(ctx, t.name, t.topicId, allowAutoCreate, includeOps);
      if (!('create' in answer)) answers.push(answer);
      else if (toCreate.length < maxCreate) {
        toCreate.push(answer.create);
        answers.push(answer);
      } else {
        // Beyond auto.create.topics.max.per.request: left for the client's retry (see topic-creation.ts).
        answers.push({ errorCode: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, name: answer.create, partitions: [] });
      }
    }
    const p = slicer.maybePause();
    if (p) await p;
  }
  if (toCreate.length === 0) return answers as Input<MetadataResponseTopic>[];
  const created = await autoCreateTopics(ctx.services, toCreate);
  return mapInSlices(answers, (a): Input<MetadataResponseTopic> => {
    if (!('create' in a)) return a;
    const outcome = created.get(a.create)!;
    if (!(outcome instanceof KafkaError)) return describeTopic(ctx, outcome, includeOps);
    // Cluster mode: written to ZooKeeper but no leaders yet within the bound. Kafka answers an
    // auto-created topic with LEADER_NOT_AVAILABLE, which clients retry.
    const code = outcome.code === ErrorCode.REQUEST_TIMED_OUT ? ErrorCode.LEADER_NOT_AVAILABLE : outcome.code;
    return { errorCode: code, name: a.create, partitions: [] };
  });
}

/** Every topic, or with ACLs only those the principal may DESCRIBE (the others stay unknown to it). */
async function describeVisible(ctx: RequestContext, includeOps: boolean): Promise<Input<MetadataResponseTopic>[]> {
  const { authorizer } = ctx.services;
  const visible = (t: TopicInfo): boolean =>
    authorizer === undefined ||
    authorizer.authorize(ctx.connection.principal, ctx.connection.clientHost, AclOperation.DESCRIBE, ResourceType.TOPIC, t.name, 'Metadata', false);
  const answers = await mapInSlices(ctx.services.metadata.topics(), (t) => (visible(t) ? describeTopic(ctx, t, includeOps) : null));
  return answers.filter((a): a is Input<MetadataResponseTopic> => a !== null);
}

export const metadataHandler = defineHandler({
  apiKey: 3,
  request: MetadataRequestCodec,
  response: MetadataResponseCodec,
  minVersion: 0,
  maxVersion: 12,
  slicedField: 'topics',
  authorize: {
    resources: may,
    ownWay: 'asked for every topic, it lists only those the principal may describe, checked quietly (as Kafka)',
  },
  async handle(req, ctx) {
    const { metadata } = ctx.services;
    const version = ctx.header.apiVersion;
    const includeOps = req.includeTopicAuthorizedOperations;
    // v0 asks for every topic with an empty list; v1+ with a null list.
    const all = req.topics === null || (version === 0 && req.topics.length === 0);
    const allowAutoCreate = version < 4 ? true : req.allowAutoTopicCreation;
    const topics = all ? await describeVisible(ctx, includeOps) : await describeNamed(ctx, req.topics!, allowAutoCreate, includeOps);
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
