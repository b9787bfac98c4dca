/**
 * DescribeTopicPartitions v0 (KIP-966), as Kafka 3.8+/4.0 serves it: the partitions of the named
 * topics, or of every topic the principal may describe (an empty list), in name order and paged.
 * A response holds at most min(ResponsePartitionLimit, max.request.partition.size.limit)
 * partitions (at least 1); where it stops, NextCursor names the topic and partition to ask from
 * next. Kafka's rules: a named topic the principal may not describe is TOPIC_AUTHORIZATION_FAILED
 * (its existence not disclosed), an unknown one UNKNOWN_TOPIC_OR_PARTITION (INVALID_TOPIC_EXCEPTION
 * for an illegal name); with every topic asked for, the ones not allowed are left out quietly. A
 * cursor whose topic is not among the named ones, or whose partition is negative, makes the
 * request INVALID_REQUEST for every named topic. A partition without a live leader is leader -1
 * with no error, as Kafka (Metadata answers LEADER_NOT_AVAILABLE there). Eligible leader replicas
 * (KIP-966's ELR) are a KRaft controller's: Fjord runs without one (embedded or ZooKeeper mode),
 * so both ELR lists are always empty.
 */
import { DescribeTopicPartitionsRequestCodec, DescribeTopicPartitionsResponseCodec } from '../../protocol/messages/index.js';
import type { DescribeTopicPartitionsResponsePartition, DescribeTopicPartitionsResponseTopic } from '../../protocol/messages/75-describe-topic-partitions.js';
import { ErrorCode } from '../../protocol/errors.js';
import { ZERO_UUID, type Input } from '../../protocol/primitives/index.js';
import type { PartitionState } from '../../metadata/cluster-model.js';
import { topicNameError } from '../../metadata/topic-names.js';
import { defineHandler, type RequestContext } from './types.js';
import { AclOperation, ResourceType, authorizedOperations, resourceChecks } from './authz.js';

/** Kafka's check: DESCRIBE on each topic (named ones refused per topic, listed ones filtered). */
const may = resourceChecks({
  describeTopic: { resource: ResourceType.TOPIC, operation: AclOperation.DESCRIBE },
});

type TopicAnswer = Input<DescribeTopicPartitionsResponseTopic>;

function refused(name: string, errorCode: number): TopicAnswer {
  return { errorCode, name, topicId: ZERO_UUID, isInternal: false, partitions: [] };
}

function describePartition(p: PartitionState): Input<DescribeTopicPartitionsResponsePartition> {
  return {
    errorCode: ErrorCode.NONE,
    partitionIndex: p.partition,
    leaderId: p.leader,
    leaderEpoch: p.leaderEpoch,
    replicaNodes: p.replicas,
    isrNodes: p.isr,
    // No KRaft controller, no ELR (see the header).
    eligibleLeaderReplicas: [],
    lastKnownElr: [],
    offlineReplicas: p.offlineReplicas,
  };
}

/** Kafka's bound: the request's limit, capped by the broker's, and at least one partition. */
export function partitionLimit(requested: number, brokerMax: number): number {
  return Math.max(Math.min(brokerMax, requested), 1);
}

export const describeTopicPartitionsHandler = defineHandler({
  apiKey: 75,
  request: DescribeTopicPartitionsRequestCodec,
  response: DescribeTopicPartitionsResponseCodec,
  minVersion: 0,
  maxVersion: 0,
  slicedField: 'topics',
  authorize: {
    resources: may,
    ownWay: 'asked for every topic, it lists only those the principal may describe, as Kafka; named ones are refused per topic',
  },
  handle(req, ctx: RequestContext) {
    const { metadata } = ctx.services;
    const all = req.topics.length === 0;
    const cursor = req.cursor;
    const from = cursor?.topicName ?? '';
    const names = new Set<string>();
    if (all) {
      for (const t of metadata.topics()) if (t.name >= from) names.add(t.name);
    } else {
      for (const t of req.topics) if (t.name >= from) names.add(t.name);
    }
    if (cursor !== null && ((!all && !names.has(cursor.topicName)) || cursor.partitionIndex < 0)) {
      return { throttleTimeMs: 0, topics: req.topics.map((t) => refused(t.name, ErrorCode.INVALID_REQUEST)), nextCursor: null };
    }
    const topics: TopicAnswer[] = [];
    const unauthorized: TopicAnswer[] = [];
    let remaining = partitionLimit(req.responsePartitionLimit, ctx.services.config.maxRequestPartitionSizeLimit);
    let nextCursor: { topicName: string; partitionIndex: number } | null = null;
    for (const name of [...names].sort()) {
      if (!may.describeTopic.allows(ctx, name)) {
        // Named: refused without saying whether it exists; listed: left out.
        if (!all) unauthorized.push(refused(name, ErrorCode.TOPIC_AUTHORIZATION_FAILED));
        continue;
      }
      if (remaining === 0) {
        // Every partition of the topics before is in; the next page starts at this topic.
        nextCursor = { topicName: name, partitionIndex: 0 };
        break;
      }
      const t = metadata.topic(name);
      if (!t) {
        // Listing every topic, one deleted meanwhile is just gone.
        if (!all) topics.push(refused(name, topicNameError(name) ? ErrorCode.INVALID_TOPIC_EXCEPTION : ErrorCode.UNKNOWN_TOPIC_OR_PARTITION));
        continue;
      }
      const start = name === from && cursor !== null ? cursor.partitionIndex : 0;
      const end = Math.min(t.partitions.length, start + remaining);
      const partitions: Input<DescribeTopicPartitionsResponsePartition>[] = [];
      for (const p of t.partitions) if (p.partition >= start && p.partition < end) partitions.push(describePartition(p));
      partitions.sort((a, b) => (a.partitionIndex ?? 0) - (b.partitionIndex ?? 0));
      topics.push({
        errorCode: ErrorCode.NONE,
        name,
        topicId: t.topicId,
        isInternal: t.internal,
        partitions,
        topicAuthorizedOperations: authorizedOperations(ctx, ResourceType.TOPIC, name, true),
      });
      if (end < t.partitions.length) {
        nextCursor = { topicName: name, partitionIndex: end };
        break;
      }
      remaining -= partitions.length;
    }
    return { throttleTimeMs: 0, topics: [...topics, ...unauthorized], nextCursor };
  },
});
